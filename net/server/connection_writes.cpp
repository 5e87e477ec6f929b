// Connection's replies: holding acknowledgements until their writes are durable, writing what
// may go (through TLS when the connection speaks it), and the orderly end of a connection.
#include "net/server/connection.h"

#include <boost/asio/write.hpp>

#include "net/server/io_worker.h"

namespace relgraph::net {

void Connection::ReleaseHolds() {
  const uint64_t durable = core_.durability.durable();
  while (!holds_.empty() && holds_.front().background == 0 && holds_.front().ticket <= durable) {
    if (core_.durability.Failed(holds_.front().ticket)) {
      Abort();  // a later wait succeeded past it, but this write's own wait failed
      return;
    }
    holds_.pop_front();
  }
}

void Connection::OnDurabilityChange() {
  if (closed_) return;
  if (const uint64_t failed = core_.durability.failed_through(); failed != 0) {
    for (const Hold& h : holds_) {
      if (h.ticket > core_.durability.durable() && h.ticket <= failed) {
        // Those writes may be lost: never acknowledge them. The peer sees the connection
        // drop, which a client must treat as "outcome unknown".
        Abort();
        return;
      }
    }
  }
  ReleaseHolds();
  DoWrite();
  MaybeFinish();
}

void Connection::DoWrite() {
  ReleaseHolds();
  const size_t n = sendable_bytes();
  if (write_active_ || closed_) return;
  if (tls_) {
    if (n > 0 && !tls_failed_) {
      if (!tls_->WritePlain(std::string_view(out_).substr(0, n)).ok()) return Abort();
      out_.erase(0, n);
      for (Hold& h : holds_) h.offset -= n;
    }
    tls_->TakeOutput(&writing_);  // also what the handshake or an alert has to say
    if (writing_.empty()) return;
  } else if (n == 0) {
    return;
  } else if (n == out_.size()) {
    writing_.swap(out_);
    out_.clear();
  } else {
    writing_.assign(out_, 0, n);
    out_.erase(0, n);
    for (Hold& h : holds_) h.offset -= n;
  }
  write_active_ = true;
  last_write_progress_ = Clock::now();
  boost::asio::async_write(
      socket_, boost::asio::buffer(writing_),
      [self = shared_from_this()](const boost::system::error_code& ec, size_t written) {
        self->worker_.recorder().RecordBytesOut(written);
        self->OnWrite(ec);
      });
}

void Connection::OnWrite(const boost::system::error_code& ec) {
  write_active_ = false;
  writing_.clear();
  if (closed_) return;
  if (ec) {
    Abort();
    return;
  }
  last_write_progress_ = Clock::now();
  PumpEvents();  // the socket took bytes: room for more events
  if (read_paused_ && unsent_bytes() <= core_.options.max_unsent_bytes / 2) {
    read_paused_ = false;
    in_.erase(0, ProcessFrames(in_));  // frames already received but not yet run
  }
  DoWrite();
  MaybeFinish();
  ReleaseDrainedBuffers();
  if (!closing_ && !read_paused_) DoRead();
}

void Connection::MaybeFinish() {
  if (!closing_ || closed_ || draining_) return;
  if (write_active_ || !out_.empty() || !holds_.empty()) return;
  if (tls_ && !tls_close_sent_ && !tls_failed_) {
    tls_close_sent_ = true;  // close_notify first: the peer can tell an end from a cut
    tls_->Close();
    DoWrite();
    if (write_active_) return;  // OnWrite comes back here
  }
  // Everything owed is written. Shut our side, then read until the peer closes: closing with
  // unread input would make the kernel send a reset that can destroy our last reply in flight.
  boost::system::error_code ignored;
  socket_.shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
  draining_ = true;
  drain_started_ = Clock::now();
  DoRead();
}

}  // namespace relgraph::net
