#include "net/server/local_calls.h"

#include <chrono>
#include <cstdint>

#include "net/protocol/protocol.h"
#include "net/server/command_record.h"

namespace relgraph::net {
namespace {

Status OutcomeUnknown(const char* why) {
  return Status(Code::kUnavailable, std::string("the outcome is unknown: ") + why);
}

}  // namespace

void LocalCalls::Record(uint8_t opcode, std::string_view body, uint64_t ns, Code code) {
  {
    std::lock_guard lock(record_mu_);
    recorder_.Record(opcode, ns, code);
  }
  NoteIfSlow(core_, "http", opcode, body, ns);
}

void LocalCalls::AddTo(CommandMetrics* m) const {
  std::lock_guard lock(record_mu_);
  recorder_.AddTo(m);
}

void LocalCalls::Call(uint8_t opcode, std::string body, CallDone done) {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return done(Status(Code::kUnavailable, "the server is shutting down"), {});
  }
  const auto op = static_cast<Opcode>(opcode);
  if (op == Opcode::kPing) {
    if (!body.empty())
      return done(Status(Code::kProtocolError, "ping: the body must be empty"), {});
    Record(opcode, {}, 0, Code::kOk);
    return done(Status::OK(), {});
  }
  if (op == Opcode::kSlowlog) {  // the server's own, as over a connection (command_record.h)
    std::string reply;           // an HTTP reply has no frame to fit: every entry asked for
    const Status s = AppendSlowlogReply(core_, body, SIZE_MAX, &reply);
    if (!s.ok()) return done(s, {});
    Record(opcode, body, 0, Code::kOk);
    return done(Status::OK(), std::move(reply));
  }
  if (op == Opcode::kHello) {
    return done(Status(Code::kUnsupported,
                       "hello belongs to a binary connection; over HTTP send the token as "
                       "'Authorization: Bearer TOKEN'"),
                {});
  }
  const CommandSpec* spec = core_.service->Find(opcode);
  if (spec == nullptr) {
    return done(Status(Code::kUnsupported, "unknown command " + std::string(OpcodeName(opcode))),
                {});
  }
  if (spec->flags & kCommandSubscribes) {
    return done(Status(Code::kUnsupported,
                       std::string(spec->name) +
                           " starts a stream of pushed frames: it needs a binary connection "
                           "(docs/protocol.md)"),
                {});
  }
  if (spec->flags & kCommandBackground) {
    core_.background.Post([this, spec, body = std::move(body), done = std::move(done)]() mutable {
      std::string reply;
      const auto began = std::chrono::steady_clock::now();
      ExecuteResult r = core_.service->Execute(*spec, body, &reply, core_.Stats());
      // This thread is the background runner's: its recorder is written here only.
      const uint64_t ns = NanosSince(began);
      core_.background_recorder.Record(spec->opcode, ns, r.status.code());
      NoteIfSlow(core_, "http", spec->opcode, body, ns);
      Finish(std::move(r), std::move(reply), std::move(done));
    });
    return;
  }
  std::string reply;
  const ServerStats stats = (spec->flags & kCommandServerStats) ? core_.Stats() : ServerStats{};
  const auto began = std::chrono::steady_clock::now();
  ExecuteResult r = core_.service->Execute(*spec, body, &reply, stats);
  Record(spec->opcode, body, NanosSince(began), r.status.code());
  Finish(std::move(r), std::move(reply), std::move(done));
}

void LocalCalls::Finish(ExecuteResult r, std::string reply, CallDone done) {
  core_.requests_total.fetch_add(1, std::memory_order_relaxed);
  if (!r.status.ok()) return done(std::move(r.status), {});
  if (r.ticket == 0 || r.ticket <= core_.durability.durable()) {
    if (r.ticket != 0 && core_.durability.Failed(r.ticket)) {
      return done(OutcomeUnknown("the write's WAL sync failed, it may be lost"), {});
    }
    return done(Status::OK(), std::move(reply));
  }
  {
    std::lock_guard lock(mu_);
    if (stopped_) {
      return done(OutcomeUnknown("the server stopped before the write was durable"), {});
    }
    waiting_.push_back(Waiting{r.ticket, std::move(reply), std::move(done)});
  }
  core_.durability.Request(r.ticket);
  OnDurabilityChange();  // it may have become durable before it was listed
}

void LocalCalls::OnDurabilityChange() {
  std::vector<Waiting> ready;
  {
    std::lock_guard lock(mu_);
    const uint64_t durable = core_.durability.durable();
    const uint64_t failed = core_.durability.failed_through();
    for (size_t i = 0; i < waiting_.size();) {
      if (waiting_[i].ticket <= durable || waiting_[i].ticket <= failed) {
        ready.push_back(std::move(waiting_[i]));
        waiting_[i] = std::move(waiting_.back());
        waiting_.pop_back();
      } else {
        ++i;
      }
    }
  }
  for (Waiting& w : ready) {
    if (core_.durability.Failed(w.ticket)) {
      w.done(OutcomeUnknown("the write's WAL sync failed, it may be lost"), {});
    } else {
      w.done(Status::OK(), std::move(w.reply));
    }
  }
}

void LocalCalls::FailPending(const Status& why) {
  std::vector<Waiting> all;
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
    all.swap(waiting_);
  }
  for (Waiting& w : all) w.done(why, {});
}

}  // namespace relgraph::net
