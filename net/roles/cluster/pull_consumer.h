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
// A request's own subscription is what tells its answers from another's (the messages keep
// their subjects), so each fetch returns the answers of one request: one consumer leader
// numbered them all (net/roles/cluster/inbox_order.h relies on it). A request still open when
// its fetch gave up (a NATS node paused, a late answer) keeps its subscription; the next
// fetches return what it brings first, a request's at a time, and close it once it has ended
// (its status, or its whole batch). At most kMaxOpen stay open; beyond, the oldest is closed
// and what it would still bring is redelivered after the consumer's ack wait.
//
// Thread-safety: one thread fetches; Ack may be called from any thread (it only publishes).
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <deque>
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
  ~PullConsumer();  // closes open requests: what they bring is redelivered after the ack wait
  PullConsumer(const PullConsumer&) = delete;
  PullConsumer& operator=(const PullConsumer&) = delete;

  // Up to `batch` (1..65536) messages, all answering one request, waiting up to `timeout_ms`
  // (at least 1): those of an earlier request that arrived late, else what the consumer has
  // now, else what it gets within the timeout. Empty when none came (also when the consumer
  // is not there). kUnavailable naming the cause of a refusal (a 409 conflict, no responders,
  // a lost connection); kInvalidArgument for a batch or timeout out of range.
  Result<PulledMessages> Fetch(int batch, int64_t timeout_ms);

  // Acknowledges a message a fetch returned (fire and forget, as natsMsg_Ack without options).
  Status Ack(natsMsg* msg);

  // The request body (exposed for tests).
  static std::string RequestBody(int batch, int64_t expires_ns, bool no_wait);

 private:
  static constexpr size_t kMaxOpen = 16;

  // One request and the subscription its answers arrive on.
  struct Pull {
    natsSubscription* sub = nullptr;
    int unanswered = 0;  // messages it may still bring
  };
  // Where a pull stands after Take.
  enum class Stand { kOpen, kDone, kNoMessages };

  PullConsumer(natsConnection* nc, std::string stream, std::string consumer, std::string inbox)
      : nc_(nc),
        consumer_(std::move(consumer)),
        next_subject_("$JS.API.CONSUMER.MSG.NEXT." + stream + "." + consumer_),
        inbox_(std::move(inbox)) {}

  // Subscribes a new reply subject and sends a request on it.
  Result<Pull> Open(int batch, int64_t expires_ns, bool no_wait);
  static void Close(Pull& pull);
  // Takes `pull`'s answers into *out until `batch`, its end, or `deadline_ns` (0: only those
  // already here). *stand says whether it may still bring more. An error names a refusal.
  Status Take(Pull& pull, PulledMessages* out, int batch, int64_t deadline_ns, Stand* stand);

  natsConnection* nc_;
  std::string consumer_;
  std::string next_subject_;
  std::string inbox_;
  std::deque<Pull> open_;  // earlier requests that may still bring answers, oldest first
  uint64_t requests_ = 0;
};

}  // namespace relgraph
