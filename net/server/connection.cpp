#include "net/server/connection.h"

#include <algorithm>
#include <utility>

#include "net/protocol/messages.h"
#include "net/protocol/protocol.h"
#include "net/server/io_worker.h"

namespace relgraph::net {
namespace {

constexpr auto kDrainTimeout = std::chrono::seconds(2);
// A subscription is pulled while fewer unsent bytes than this wait; and, caught up, looked at
// again after kEventPoll.
constexpr size_t kEventLowWater = 256 << 10;
constexpr auto kEventPoll = std::chrono::milliseconds(1);
// A drained buffer keeps at most this much capacity, so that a busy connection does not
// allocate for every small batch while an idle one holds next to nothing.
constexpr size_t kKeepBufferBytes = 512;

void Release(std::string& buffer) {
  if (buffer.empty() && buffer.capacity() > kKeepBufferBytes) std::string().swap(buffer);
}

uint64_t NanosSince(std::chrono::steady_clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count());
}

}  // namespace

Connection::Connection(ServerCore& core, IoWorker& worker, boost::asio::ip::tcp::socket socket)
    : core_(core), worker_(worker), socket_(std::move(socket)) {
  last_request_ = last_write_progress_ = Clock::now();
  boost::system::error_code ignored;
  socket_.set_option(boost::asio::ip::tcp::no_delay(true), ignored);
  socket_.non_blocking(true, ignored);  // OnReadable reads what is there, never waits
  accounted_bytes_ = sizeof(Connection);
  core_.connection_bytes.fetch_add(accounted_bytes_, std::memory_order_relaxed);
}

Connection::~Connection() {
  core_.connection_bytes.fetch_sub(accounted_bytes_, std::memory_order_relaxed);
}

void Connection::ReleaseDrainedBuffers() {
  Release(in_);
  if (!write_active_) Release(writing_);
  Release(out_);
  const auto bytes = static_cast<int64_t>(sizeof(Connection) + in_.capacity() + out_.capacity() +
                                          writing_.capacity());
  core_.connection_bytes.fetch_add(bytes - accounted_bytes_, std::memory_order_relaxed);
  accounted_bytes_ = bytes;
}

void Connection::Start() {
  DoRead();
}

void Connection::StartRejected(const Status& why) {
  FailAndClose(0, static_cast<uint8_t>(Opcode::kNotice), why);
}

void Connection::BeginShutdown() {
  if (closed_) return;
  closing_ = true;
  MaybeFinish();
}

void Connection::Abort() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  socket_.close(ignored);
  if (event_poll_) event_poll_->cancel();
  worker_.Remove(this);
}

// ---- reading and executing ----

void Connection::DoRead() {
  if (reading_ || closed_) return;
  if (closing_ && !draining_) return;
  reading_ = true;
  socket_.async_wait(
      boost::asio::ip::tcp::socket::wait_read,
      [self = shared_from_this()](const boost::system::error_code& ec) { self->OnReadable(ec); });
}

void Connection::OnReadable(const boost::system::error_code& ec) {
  reading_ = false;
  if (closed_) return;
  const std::span<char> scratch = worker_.read_scratch();
  boost::system::error_code read_ec = ec;
  size_t n = 0;
  if (!read_ec) n = socket_.read_some(boost::asio::buffer(scratch.data(), scratch.size()), read_ec);
  if (read_ec == boost::asio::error::would_block || read_ec == boost::asio::error::try_again) {
    DoRead();  // woken with nothing to read after all
    return;
  }
  if (read_ec) {
    // The peer is gone (or we were aborted): replies it would not read are moot.
    Abort();
    return;
  }
  if (draining_) {
    DoRead();  // discard: we only wait for the peer to close
    return;
  }
  last_request_ = Clock::now();
  worker_.recorder().RecordBytesIn(n);
  if (in_.empty()) {
    // The common case: run the frames where they were read, keep only what is left over.
    const std::string_view got(scratch.data(), n);
    const size_t used = ProcessFrames(got);
    in_.assign(got.substr(used));
  } else {
    in_.append(scratch.data(), n);
    in_.erase(0, ProcessFrames(in_));
  }
  DoWrite();
  MaybeFinish();
  ReleaseDrainedBuffers();
  if (!closing_ && !read_paused_) DoRead();
}

size_t Connection::ProcessFrames(std::string_view pending) {
  size_t used = 0;
  // Consecutive batchable writes gather here and run as one batch when the run ends: at
  // another command, at the end of the whole frames read, or at the batch's size limit.
  WriteBatchScratch& batch = worker_.write_batch_scratch();
  while (!closing_ && !closed_) {
    if (unsent_bytes() > core_.options.max_unsent_bytes) {
      read_paused_ = true;  // OnWrite resumes us once the peer has read enough
      break;
    }
    DecodeResult r = DecodeFrame(pending.substr(used), core_.options.max_frame);
    if (r.state == DecodeState::kNeedMore) {
      read_paused_ = false;
      break;
    }
    if (r.state == DecodeState::kBad) {
      RunWriteBatch(batch);
      FailAndClose(0, static_cast<uint8_t>(Opcode::kNotice), r.error);
      break;
    }
    if (const CommandSpec* spec = BatchableSpec(r.frame)) {
      batch.frames.push_back(r.frame);
      batch.items.push_back({spec, r.frame.body});
      if (batch.frames.size() == WriteBatchScratch::kMaxFrames) RunWriteBatch(batch);
    } else {
      RunWriteBatch(batch);
      HandleFrame(r.frame);
    }
    used += r.frame.size;
    core_.requests_total.fetch_add(1, std::memory_order_relaxed);
  }
  RunWriteBatch(batch);
  return used;
}

const CommandSpec* Connection::BatchableSpec(const Frame& frame) const {
  if (!greeted_ || frame.flags_or_status != 0) return nullptr;
  const CommandSpec* spec = core_.service->Find(frame.opcode);
  return spec != nullptr && (spec->flags & kCommandBatches) != 0 ? spec : nullptr;
}

void Connection::RunWriteBatch(WriteBatchScratch& batch) {
  if (batch.frames.size() == 1) HandleFrame(batch.frames[0]);
  if (batch.frames.size() > 1) {
    batch.replies.clear();
    const auto began = std::chrono::steady_clock::now();
    const uint64_t ticket = core_.service->ExecuteBatch(batch.items, &batch.replies);
    // Each request of the batch gets an equal share of its time (command_metrics.h).
    const uint64_t share = NanosSince(began) / batch.frames.size();
    const size_t first = out_.size();
    size_t begin = 0;
    for (size_t i = 0; i < batch.frames.size(); ++i) {
      const Frame& f = batch.frames[i];
      const BatchItem& item = batch.items[i];
      worker_.recorder().Record(f.opcode, share, item.status.code());
      if (item.status.ok()) {
        const size_t start = BeginFrame(&out_, f.request_id, f.opcode, 0);
        out_.append(batch.replies, begin, item.reply_end - begin);
        EndFrame(&out_, start);
      } else {
        AppendErrorFrame(&out_, f.request_id, f.opcode, item.status);
      }
      begin = item.reply_end;
    }
    HoldUntilDurable(first, ticket);
  }
  batch.frames.clear();
  batch.items.clear();
}

void Connection::HoldUntilDurable(size_t offset, uint64_t ticket) {
  if (ticket <= core_.durability.durable()) return;
  // Not durable yet: the replies from `offset` on, and all after them, wait.
  holds_.push_back(Hold{offset, ticket, 0});
  core_.durability.Request(ticket);
}

void Connection::Refuse(const Frame& frame, const Status& why, bool close) {
  worker_.recorder().Record(frame.opcode, 0, why.code());  // refused before running: no time
  if (close) return FailAndClose(frame.request_id, frame.opcode, why);
  AppendErrorFrame(&out_, frame.request_id, frame.opcode, why);
}

void Connection::FailAndClose(uint32_t request_id, uint8_t opcode, const Status& why) {
  AppendErrorFrame(&out_, request_id, opcode, why);
  closing_ = true;
  DoWrite();
  MaybeFinish();
}

Status Connection::CheckHello(const Frame& frame, HelloRequest* hello) const {
  if (Status s = WireDecode(frame.body, hello, "hello request"); !s.ok()) return s;
  if (hello->version < kMinProtocolVersion || hello->version > kProtocolVersion) {
    return Status(Code::kUnsupported, "protocol version " + std::to_string(hello->version) +
                                          " is not supported (this server speaks " +
                                          std::to_string(kMinProtocolVersion) + " to " +
                                          std::to_string(kProtocolVersion) + ")");
  }
  if (!core_.options.auth_token.empty() && !core_.TokenMatches(hello->token)) {
    return Status(Code::kUnauthenticated, "the token is not valid");
  }
  return Status::OK();
}

void Connection::HandleHello(const Frame& frame) {
  HelloRequest hello;
  const Status s = CheckHello(frame, &hello);
  // Its outcome, counted without timing (a handshake is once per connection).
  worker_.recorder().Record(frame.opcode, 0, s.code());
  if (!s.ok()) return FailAndClose(frame.request_id, frame.opcode, s);
  greeted_ = true;
  const size_t start = BeginFrame(&out_, frame.request_id, frame.opcode, 0);
  // The reply has the fields of the client's version and no more: an older client's decoder
  // refuses trailing bytes.
  if (hello.version == 1) {
    WirePut(&out_, HelloReplyV1{1, core_.options.max_frame, core_.options.server_name});
  } else {
    WirePut(&out_, HelloReply{hello.version, core_.options.max_frame, core_.options.server_name,
                              core_.options.server_version});
  }
  EndFrame(&out_, start);
}

void Connection::HandleFrame(const Frame& frame) {
  const auto op = static_cast<Opcode>(frame.opcode);
  if (!greeted_) {
    if (op == Opcode::kHello) return HandleHello(frame);
    const Status why =
        core_.options.auth_token.empty()
            ? Status(Code::kProtocolError, "the first frame must be HELLO")
            : Status(Code::kUnauthenticated, "authenticate with HELLO and a token first");
    return Refuse(frame, why, /*close=*/true);
  }
  std::string& sink = out_;
  if (op == Opcode::kNotice) {
    // Any reply to it would carry request id and opcode as a notice does: refuse and close,
    // so that a frame with opcode 0 from the server is always a notice.
    return FailAndClose(0, frame.opcode,
                        Status(Code::kProtocolError,
                               "opcode 0 is the server's NOTICE; no "
                               "request may use it"));
  }
  if (frame.flags_or_status != 0) {
    Refuse(frame, Status::InvalidArgument("request flags must be 0, got " +
                                          std::to_string(frame.flags_or_status)));
    return;
  }
  if (op == Opcode::kPing) {
    if (!frame.body.empty()) {
      Refuse(frame, Status(Code::kProtocolError, "ping request: the body must be empty, got " +
                                                     std::to_string(frame.body.size()) + " bytes"));
      return;
    }
    EndFrame(&sink, BeginFrame(&sink, frame.request_id, frame.opcode, 0));
    worker_.recorder().Record(frame.opcode, 0, Code::kOk);
    return;
  }
  if (op == Opcode::kHello) {
    Refuse(frame, Status(Code::kProtocolError, "HELLO was already done on this connection"));
    return;
  }
  if (op == Opcode::kEvents || op == Opcode::kSnapshotData) {
    Refuse(frame,
           Status(Code::kProtocolError, std::string(OpcodeName(op)) +
                                            " frames are sent by the server only (SUBSCRIBE or "
                                            "FETCH_SNAPSHOT to get them)"));
    return;
  }
  const CommandSpec* spec = core_.service->Find(frame.opcode);
  if (spec == nullptr) {
    Refuse(frame, Status(Code::kUnsupported, "unknown opcode " + std::to_string(frame.opcode)));
    return;
  }
  if (spec->flags & kCommandBackground) return RunBackground(*spec, frame);
  if ((spec->flags & kCommandSubscribes) && subscription_) {
    Refuse(frame, Status::InvalidArgument(
                      "this connection already carries the pushed frames of request " +
                      std::to_string(subscription_request_id_) + "; open another connection"));
    return;
  }

  const size_t start = BeginFrame(&sink, frame.request_id, frame.opcode, 0);
  const ServerStats stats = (spec->flags & kCommandServerStats) ? core_.Stats() : ServerStats{};
  const auto began = std::chrono::steady_clock::now();
  ExecuteResult r = core_.service->Execute(*spec, frame.body, &sink, stats);
  worker_.recorder().Record(frame.opcode, NanosSince(began), r.status.code());
  if (!r.status.ok()) {
    sink.resize(start);
    AppendErrorFrame(&sink, frame.request_id, frame.opcode, r.status);
    return;
  }
  EndFrame(&sink, start);
  if (r.subscription) {
    subscription_ = std::move(r.subscription);
    subscription_request_id_ = frame.request_id;
    event_poll_ = std::make_unique<boost::asio::steady_timer>(socket_.get_executor());
    PumpEvents();
  }
  HoldUntilDurable(start, r.ticket);
}

void Connection::RunBackground(const CommandSpec& spec, const Frame& frame) {
  const uint64_t id = next_background_++;
  holds_.push_back(Hold{out_.size(), 0, id});
  core_.background.Post([self = shared_from_this(), id, &spec, body = std::string(frame.body),
                         request_id = frame.request_id, op = frame.opcode] {
    std::string reply;
    const size_t start = BeginFrame(&reply, request_id, op, 0);
    const auto began = std::chrono::steady_clock::now();
    const ExecuteResult r = self->core_.service->Execute(spec, body, &reply, self->core_.Stats());
    // This thread is the background runner's: its own recorder.
    self->core_.background_recorder.Record(op, NanosSince(began), r.status.code());
    if (r.status.ok()) {
      EndFrame(&reply, start);
    } else {
      reply.clear();
      AppendErrorFrame(&reply, request_id, op, r.status);
    }
    self->worker_.Post([self, id, reply = std::move(reply)] {
      if (self->closed_) return;
      // Insert the reply where its request's turn was; later holds move back by its size.
      bool after = false;
      for (Hold& h : self->holds_) {
        if (after) {
          h.offset += reply.size();
        } else if (h.background == id) {
          self->out_.insert(h.offset, reply);
          h.background = 0;
          after = true;
        }
      }
      self->ReleaseHolds();
      self->DoWrite();
      self->MaybeFinish();
    });
  });
}

// ---- replies ----

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
  if (write_active_ || closed_ || n == 0) return;
  write_active_ = true;
  if (n == out_.size()) {
    writing_.swap(out_);
    out_.clear();
  } else {
    writing_.assign(out_, 0, n);
    out_.erase(0, n);
    for (Hold& h : holds_) h.offset -= n;
  }
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

// ---- the change stream ----

void Connection::PumpEvents() {
  if (!subscription_ || closed_ || closing_) return;
  const size_t max_body = core_.options.max_frame - kFrameHeaderBytes;
  const uint8_t opcode = subscription_->push_opcode();
  while (subscription_ && unsent_bytes() < kEventLowWater) {
    const size_t start = BeginFrame(&out_, subscription_request_id_, opcode, 0);
    const size_t body = out_.size();
    auto consumed = subscription_->Next(max_body, &out_);
    if (!consumed.ok()) {
      // The subscription is over (expired, damage); the connection serves on.
      out_.resize(start);
      AppendErrorFrame(&out_, subscription_request_id_, opcode, consumed.status());
      subscription_.reset();
      event_poll_.reset();
      break;
    }
    if (out_.size() == body) {
      out_.resize(start);
    } else {
      EndFrame(&out_, start);
    }
    if (subscription_->done()) {
      subscription_.reset();
      event_poll_.reset();
      break;
    }
    if (*consumed == 0) {
      ArmEventPoll();
      break;
    }
  }
  DoWrite();
}

void Connection::ArmEventPoll() {
  if (event_poll_armed_ || !event_poll_) return;
  event_poll_armed_ = true;
  event_poll_->expires_after(kEventPoll);
  event_poll_->async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    self->event_poll_armed_ = false;
    if (!ec) self->PumpEvents();
  });
}

void Connection::MaybeFinish() {
  if (!closing_ || closed_ || draining_) return;
  if (write_active_ || !out_.empty() || !holds_.empty()) return;
  // Everything owed is written. Shut our side, then read until the peer closes: closing with
  // unread input would make the kernel send a reset that can destroy our last reply in flight.
  boost::system::error_code ignored;
  socket_.shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
  draining_ = true;
  drain_started_ = Clock::now();
  DoRead();
}

void Connection::Sweep(Clock::time_point now) {
  if (closed_) return;
  if (draining_) {
    if (now - drain_started_ > kDrainTimeout) Abort();
    return;
  }
  if (write_active_ && now - last_write_progress_ > core_.options.send_timeout) {
    Abort();  // the peer does not read its replies
    return;
  }
  // A subscriber waits for events, not for itself: it is never idle.
  const bool idle = !closing_ && !subscription_ && holds_.empty() && !write_active_ && out_.empty();
  if (idle && now - last_request_ > core_.options.idle_timeout) {
    FailAndClose(
        0, static_cast<uint8_t>(Opcode::kNotice),
        Status(Code::kResourceExhausted,
               "idle for more than " + std::to_string(core_.options.idle_timeout.count()) + " ms"));
  }
}

}  // namespace relgraph::net
