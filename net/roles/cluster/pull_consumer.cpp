#include "net/roles/cluster/pull_consumer.h"

#include <chrono>
#include <cstring>

#include "net/cluster/nats_link.h"

namespace relgraph {
namespace {

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr int64_t kNsPerMs = 1'000'000;

// The Status header of a status message (no data), or nullptr for one of the consumer's.
const char* StatusOf(natsMsg* msg) {
  if (natsMsg_GetDataLength(msg) > 0) return nullptr;
  const char* value = nullptr;
  if (natsMsgHeader_Get(msg, "Status", &value) != NATS_OK || value == nullptr) return nullptr;
  return value;
}

}  // namespace

PulledMessages& PulledMessages::operator=(PulledMessages&& other) noexcept {
  if (this != &other) {
    Clear();
    messages_ = std::move(other.messages_);
  }
  return *this;
}

void PulledMessages::Clear() {
  for (natsMsg* msg : messages_) natsMsg_Destroy(msg);
  messages_.clear();
}

Result<std::unique_ptr<PullConsumer>> PullConsumer::Bind(natsConnection* nc, std::string stream,
                                                         std::string consumer) {
  natsInbox* inbox = nullptr;
  natsStatus s = natsInbox_Create(&inbox);
  if (s != NATS_OK) return net::NatsError("making an inbox", s);
  std::string prefix(inbox);
  natsInbox_Destroy(inbox);
  return std::unique_ptr<PullConsumer>(
      new PullConsumer(nc, std::move(stream), std::move(consumer), std::move(prefix)));
}

PullConsumer::~PullConsumer() {
  CloseCurrent();
}

std::string PullConsumer::RequestBody(int batch, int64_t expires_ns, bool no_wait) {
  std::string body = "{\"batch\":" + std::to_string(batch);
  if (no_wait) return body + ",\"no_wait\":true}";
  return body + ",\"expires\":" + std::to_string(expires_ns) + "}";
}

Status PullConsumer::Open(int batch, int64_t expires_ns, bool no_wait) {
  CloseCurrent();
  const std::string reply = inbox_ + "." + std::to_string(++requests_);
  Pull pull;
  pull.unanswered = batch;
  pull.ends_by_ns = SteadyNowNs() + (no_wait ? 0 : expires_ns);
  pull.no_wait = no_wait;
  natsStatus s = natsConnection_SubscribeSync(&pull.sub, nc_, reply.c_str());
  if (s != NATS_OK) return net::NatsError("subscribing " + reply, s);
  // Never drop an answer: a request asks for no more than it can take.
  natsSubscription_SetPendingLimits(pull.sub, -1, -1);
  current_ = pull;
  const std::string body = RequestBody(batch, expires_ns, no_wait);
  s = natsConnection_PublishRequest(nc_, next_subject_.c_str(), reply.c_str(), body.data(),
                                    static_cast<int>(body.size()));
  if (s != NATS_OK) {
    CloseCurrent();
    return net::NatsError("requesting messages of consumer " + consumer_, s);
  }
  return Status::OK();
}

void PullConsumer::CloseCurrent() {
  if (current_.sub == nullptr) return;
  natsSubscription_Destroy(current_.sub);  // unsubscribes; what it holds is destroyed
  current_ = Pull{};
}

Status PullConsumer::Take(PulledMessages* out, int batch, int64_t deadline_ns, Stand* stand) {
  Status taken = TakeAnswers(out, batch, deadline_ns, stand);
  if (*stand != Stand::kOpen) CloseCurrent();
  return taken;
}

Status PullConsumer::TakeAnswers(PulledMessages* out, int batch, int64_t deadline_ns,
                                 Stand* stand) {
  *stand = Stand::kOpen;
  Pull& pull = current_;
  while (static_cast<int>(out->size()) < batch && pull.unanswered > 0) {
    int64_t wait_ms = 0;
    if (!out->empty() && !pull.no_wait) {
      // Answers came: return with those already here rather than wait for the batch.
      int queued = 0;
      if (natsSubscription_GetPending(pull.sub, &queued, nullptr) != NATS_OK || queued == 0) {
        return Status::OK();
      }
    } else {
      wait_ms = (deadline_ns - SteadyNowNs() + kNsPerMs - 1) / kNsPerMs;
      if (wait_ms <= 0) return Status::OK();
    }
    natsMsg* msg = nullptr;
    natsStatus s = natsSubscription_NextMsg(&msg, pull.sub, wait_ms);
    if (s == NATS_TIMEOUT) return Status::OK();
    if (s == NATS_NO_RESPONDERS) {
      *stand = Stand::kDone;
      return Status(Code::kUnavailable,
                    "nothing serves consumer " + consumer_ + " (it is gone, or has no leader now)");
    }
    if (s != NATS_OK) return net::NatsError("pulling from consumer " + consumer_, s);
    const char* status = StatusOf(msg);
    if (status == nullptr) {
      out->Add(msg);
      --pull.unanswered;
      continue;
    }
    const std::string code(status, strnlen(status, 3));
    const char* description = nullptr;
    natsMsgHeader_Get(msg, "Description", &description);
    const std::string said = description != nullptr ? description : "";
    natsMsg_Destroy(msg);
    if (code == "100") continue;  // a heartbeat
    if (code == "404") {
      *stand = Stand::kNoMessages;
      return Status::OK();
    }
    *stand = Stand::kDone;
    if (code == "408") return Status::OK();
    return Status(Code::kUnavailable,
                  "pulling from consumer " + consumer_ + ": status " + code + " " + said);
  }
  if (pull.unanswered == 0) *stand = Stand::kDone;
  return Status::OK();
}

Result<PulledMessages> PullConsumer::Fetch(int batch, int64_t timeout_ms) {
  if (batch < 1 || batch > 65536) {
    return Status(Code::kInvalidArgument,
                  "fetch batch " + std::to_string(batch) + " is not within 1..65536");
  }
  if (timeout_ms < 1) {
    return Status(Code::kInvalidArgument,
                  "fetch timeout " + std::to_string(timeout_ms) + " ms is below 1 ms");
  }
  const int64_t deadline = SteadyNowNs() + timeout_ms * kNsPerMs;
  PulledMessages out;
  Status taken = Status::OK();
  Stand stand = Stand::kOpen;
  // The current request first: answers that came late, or more of a waiting one's.
  if (current_.sub != nullptr) {
    if (SteadyNowNs() > current_.ends_by_ns + kAbandonMs * kNsPerMs) {
      CloseCurrent();  // the server hung or lost it
    } else {
      taken = Take(&out, batch, deadline, &stand);
      if (!out.empty()) return out;  // an error with messages taken shows again next time
      if (!taken.ok()) return taken;
      if (stand == Stand::kOpen) return out;  // still out, nothing within the timeout
    }
  }
  // What the consumer has now (answered at once, by a 404 when nothing), else what it gets in
  // the time left (the server gives up a little before this client does, so that its 408,
  // not a late answer, is usually the last word).
  for (bool no_wait : {true, false}) {
    const int64_t left = deadline - SteadyNowNs();
    if (!no_wait && left <= 0) break;
    const int64_t expires = left >= 20 * kNsPerMs ? left - 10 * kNsPerMs : left;
    if (Status sent = Open(batch, no_wait ? 0 : expires, no_wait); !sent.ok()) return sent;
    taken = Take(&out, batch, deadline, &stand);
    if (stand != Stand::kNoMessages || !out.empty() || !taken.ok()) break;
  }
  if (!taken.ok() && out.empty()) return taken;
  return out;
}

Status PullConsumer::Ack(natsMsg* msg) {
  const char* reply = natsMsg_GetReply(msg);
  if (reply == nullptr || *reply == '\0') {
    return Status(Code::kInvalidArgument, "a message without a reply subject cannot be acked");
  }
  natsStatus s = natsConnection_PublishString(nc_, reply, "+ACK");
  if (s != NATS_OK) return net::NatsError("acknowledging on " + std::string(reply), s);
  return Status::OK();
}

}  // namespace relgraph
