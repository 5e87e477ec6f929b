// Pulling a durable JetStream consumer's messages over plain NATS subscriptions: the inbox
// (shard_inbox.cpp) takes its shard's messages so.
//
// Why not libnats' natsSubscription_Fetch: in libnats 3.4 (Debian's) a fetch that finds
// messages of an earlier pull still queued (delivered after that pull's fetch had timed out)
// lowers its batch by their number and then gathers until the count equals the lowered batch,
// writing past its array whenever more than half a batch was queued (fixed upstream in nats.c
// 3.10). A NATS node paused and resumed delivers exactly such late messages, and relgraphd
// died of the heap corruption. Here late messages are simply the first a fetch returns.
//
// JetStream's pull protocol, as used here:
//   request  $JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>
//              {"batch":N,"expires":<ns>}  or  {"batch":N,"no_wait":true}
//            with a reply subject of its own, <inbox>.<request number>, subscribed first;
//   answers  arrive on that subscription: the consumer's messages (under their own subjects),
//            each with a reply subject $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.
//            <consumer seq>.<time>.<pending> (acknowledged by publishing "+ACK" to it); then
//            possibly one status message, without data, whose Status header ends the request:
//            404 (no message now, for no_wait), 408 (expired), 409 (a conflict, with a
//            Description: the consumer deleted, too many waiting pulls, ...). nats-server 2.9
//            leaves a pull from a consumer that is not there unanswered (the fetch comes back
//            empty: ask for the consumer's state to tell); a 503 "no responders", should a
//            server send it, is reported as an error.
// At most one request is out at a time, with a subscription of its own. A fetch on a waiting
// request returns as soon as answers came (what is queued then, up to the batch), so a single
// message is not held until the batch fills or the request expires; a request that may still bring
// answers stays current, and the next fetch waits on it instead of sending another. So every fetch
// holds answers to one request, numbered by one consumer leader
// (net/roles/cluster/inbox_order.h relies on it). A current request that has not ended by
// kAbandonMs after it could have (its expiry, or at once for no_wait: a NATS node that hung or
// lost it) is closed: its subscription dropped, what it would still bring is redelivered after
// the consumer's ack wait, and a new one is sent.
//
// Thread-safety: one thread fetches; Ack may be called from any thread (it only publishes).
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "storage/status.h"

namespace relgraph {

// Messages a fetch returned; destroys them. Move-only.
class PulledMessages {
 public:
  PulledMessages() = default;
  PulledMessages(PulledMessages&& other) noexcept : messages_(std::move(other.messages_)) {}
  PulledMessages& operator=(PulledMessages&& other) noexcept;
  PulledMessages(const PulledMessages&) = delete;
  PulledMessages& operator=(const PulledMessages&) = delete;
  ~PulledMessages() { Clear(); }

  const std::vector<natsMsg*>& messages() const { return messages_; }
  size_t size() const { return messages_.size(); }
  bool empty() const { return messages_.empty(); }
  void Add(natsMsg* msg) { messages_.push_back(msg); }
  void Clear();

 private:
  std::vector<natsMsg*> messages_;
};

class PullConsumer {
 public:
  // Pulls from `consumer` (durable, on `stream`) on `nc`, which must outlive it, with reply
  // subjects under a fresh inbox. The consumer need not exist yet.
  static Result<std::unique_ptr<PullConsumer>> Bind(natsConnection* nc, std::string stream,
                                                    std::string consumer);
  ~PullConsumer();  // closes the request out: what it brings is redelivered after the ack wait
  PullConsumer(const PullConsumer&) = delete;
  PullConsumer& operator=(const PullConsumer&) = delete;

  // Up to `batch` (1..65536) messages, all answering one request, waiting up to `timeout_ms`
  // (at least 1) for the first: the current request's (answers that came late included), else
  // what the consumer has now, else what it gets within the timeout. Empty when none came (also
  // when the consumer is not there). kUnavailable naming the cause of a refusal (a 409 conflict, no
  // responders, a lost connection); kInvalidArgument for a batch or timeout out of range.
  Result<PulledMessages> Fetch(int batch, int64_t timeout_ms);

  // Acknowledges a message a fetch returned (fire and forget, as natsMsg_Ack without options).
  Status Ack(natsMsg* msg);

  // The request body (exposed for tests).
  static std::string RequestBody(int batch, int64_t expires_ns, bool no_wait);

 private:
  static constexpr int64_t kAbandonMs = 2000;

  // One request and the subscription its answers arrive on.
  struct Pull {
    natsSubscription* sub = nullptr;
    int unanswered = 0;      // messages it may still bring
    int64_t ends_by_ns = 0;  // when the server should have ended it (steady clock)
    bool no_wait = false;    // answered at once, and ended by a status when short of the batch
  };
  // Where a pull stands after Take.
  enum class Stand { kOpen, kDone, kNoMessages };

  PullConsumer(natsConnection* nc, std::string stream, std::string consumer, std::string inbox)
      : nc_(nc),
        consumer_(std::move(consumer)),
        next_subject_("$JS.API.CONSUMER.MSG.NEXT." + stream + "." + consumer_),
        inbox_(std::move(inbox)) {}

  // Subscribes a new reply subject and sends a request on it; it becomes current_.
  Status Open(int batch, int64_t expires_ns, bool no_wait);
  void CloseCurrent();
  // Takes the current request's answers into *out until `batch`, its end, or `deadline_ns`;
  // for a waiting request, once one came, only those already queued. *stand says whether it
  // may bring more; one that ended is closed.
  Status Take(PulledMessages* out, int batch, int64_t deadline_ns, Stand* stand);
  Status TakeAnswers(PulledMessages* out, int batch, int64_t deadline_ns, Stand* stand);

  natsConnection* nc_;
  std::string consumer_;
  std::string next_subject_;
  std::string inbox_;
  Pull current_;  // sub == nullptr: none out
  uint64_t requests_ = 0;
};

}  // namespace relgraph
