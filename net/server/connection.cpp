#include "net/server/connection.h"

#include <algorithm>
#include <utility>

#include "net/protocol/messages.h"
#include "net/protocol/protocol.h"
#include "net/server/command_record.h"
#include "net/server/io_worker.h"

namespace relgraph::net {
namespace {

constexpr auto kDrainTimeout = std::chrono::seconds(2);
// A peer that has not completed HELLO by then (a TLS handshake included) is cut.
constexpr auto kHelloTimeout = std::chrono::seconds(10);
// A drained buffer keeps at most this much capacity, so that a busy connection does not
// allocate for every small batch while an idle one holds next to nothing.
constexpr size_t kKeepBufferBytes = 512;

void Release(std::string& buffer) {
  if (buffer.empty() && buffer.capacity() > kKeepBufferBytes) std::string().swap(buffer);
}

}  // namespace

Connection::Connection(ServerCore& core, IoWorker& worker, boost::asio::ip::tcp::socket socket)
    : core_(core), worker_(worker), socket_(std::move(socket)) {
  accepted_ = last_request_ = last_write_progress_ = Clock::now();
  tls_context_ = core_.tls();
  boost::system::error_code ignored;
  socket_.set_option(boost::asio::ip::tcp::no_delay(true), ignored);
  socket_.non_blocking(true, ignored);  // OnReadable reads what is there, never waits
  peer_ = socket_.remote_endpoint(ignored);
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
  if (tls_context_) {
    // A TLS client reads nothing before its handshake: refuse once it is done.
    reject_after_handshake_ = why;
    return DoRead();
  }
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
  if (tls_ || tls_context_) {
    ProcessTls(scratch, n);
  } else {
    ProcessInput(std::string_view(scratch.data(), n));
  }
  if (closed_) return;
  DoWrite();
  MaybeFinish();
  ReleaseDrainedBuffers();
  if (!closing_ && !read_paused_) DoRead();
}

void Connection::ProcessInput(std::string_view got) {
  if (in_.empty()) {
    // The common case: run the frames where they were read, keep only what is left over.
    const size_t used = ProcessFrames(got);
    in_.assign(got.substr(used));
  } else {
    in_.append(got);
    in_.erase(0, ProcessFrames(in_));
  }
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
    // Before HELLO succeeded, frames are capped small: an unknown peer cannot make us buffer.
    const uint32_t max_frame =
        greeted_ ? core_.options.max_frame : std::min(core_.options.max_frame, kPreAuthMaxFrame);
    if (!greeted_ && LooksLikeTlsHandshake(pending.substr(used))) {
      // Its length field would be refused as too long; say what it really is.
      core_.Log("a TLS handshake from " + peer_.address().to_string() +
                " reached this plain port; refused");
      FailAndClose(0, static_cast<uint8_t>(Opcode::kNotice),
                   Status(Code::kProtocolError,
                          "this port does not speak TLS (relgraphd runs without --tls-cert)"));
      break;
    }
    DecodeResult r = DecodeFrame(pending.substr(used), max_frame);
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
  // A command the client may not run (or after a reload, not known yet) goes through
  // HandleFrame, which refuses it.
  if (client_generation_ != core_.clients_generation.load(std::memory_order_acquire)) {
    return nullptr;
  }
  const CommandSpec* spec = core_.service->Find(frame.opcode);
  if (spec == nullptr || (spec->flags & kCommandBatches) == 0) return nullptr;
  const Permissions need = RequiredPermissions(static_cast<Opcode>(frame.opcode));
  return (client_.permissions & need) != 0 ? spec : nullptr;
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
      Record(f, share, item.status.code());
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

void Connection::Record(const Frame& frame, uint64_t ns, Code code) {
  RecordCommand(core_, worker_.recorder(), peer_, client_.name, frame.opcode, frame.body, ns,
                code);
}

void Connection::Refuse(const Frame& frame, const Status& why, bool close) {
  Record(frame, 0, why.code());  // refused before running: no time
  if (close) return FailAndClose(frame.request_id, frame.opcode, why);
  AppendErrorFrame(&out_, frame.request_id, frame.opcode, why);
}

void Connection::FailAndClose(uint32_t request_id, uint8_t opcode, const Status& why) {
  AppendErrorFrame(&out_, request_id, opcode, why);
  closing_ = true;
  DoWrite();
  MaybeFinish();
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
  if (FindCommand(frame.opcode) != nullptr && !Permitted(frame, op)) return;
  if (op == Opcode::kPing) {
    if (!frame.body.empty()) {
      Refuse(frame, Status(Code::kProtocolError, "ping request: the body must be empty, got " +
                                                     std::to_string(frame.body.size()) + " bytes"));
      return;
    }
    EndFrame(&sink, BeginFrame(&sink, frame.request_id, frame.opcode, 0));
    Record(frame, 0, Code::kOk);
    return;
  }
  if (op == Opcode::kSlowlog) {
    const auto began = std::chrono::steady_clock::now();
    const Code code = AnswerSlowlog(core_, frame, &sink);
    return Record(frame, NanosSince(began), code);  // after reading: a read never holds itself
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
  Record(frame, NanosSince(began), r.status.code());
  LogAdmin(frame.opcode, client_.name, r.status.code());
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
                         client = client_.name,
                         request_id = frame.request_id, op = frame.opcode] {
    std::string reply;
    const size_t start = BeginFrame(&reply, request_id, op, 0);
    const auto began = std::chrono::steady_clock::now();
    const ExecuteResult r = self->core_.service->Execute(spec, body, &reply, self->core_.Stats());
    // This thread is the background runner's: its own recorder.
    RecordCommand(self->core_, self->core_.background_recorder, self->peer_, client, op, body,
                  NanosSince(began), r.status.code());
    self->LogAdmin(op, client, r.status.code());
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

void Connection::Sweep(Clock::time_point now) {
  if (closed_) return;
  if (draining_) {
    if (now - drain_started_ > kDrainTimeout) Abort();
    return;
  }
  if (!greeted_ && !closing_ && now - accepted_ > kHelloTimeout) {
    core_.Log("a connection from " + peer_.address().to_string() +
              " did not complete HELLO within " +
              std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kHelloTimeout).count()) +
              " s; closed");
    return Abort();
  }
  if (write_active_ && now - last_write_progress_ > core_.send_timeout()) {
    Abort();  // the peer does not read its replies
    return;
  }
  // A subscriber waits for events, not for itself: it is never idle.
  const bool idle = !closing_ && !subscription_ && holds_.empty() && !write_active_ && out_.empty();
  if (idle && now - last_request_ > core_.idle_timeout()) {
    FailAndClose(
        0, static_cast<uint8_t>(Opcode::kNotice),
        Status(Code::kResourceExhausted,
               "idle for more than " + std::to_string(core_.idle_timeout().count()) + " ms"));
  }
}

}  // namespace relgraph::net
