// InboxOrder: which deliveries of a shard's inbound consumer may be applied as they come, and
// which must first be checked against the stream (docs/cluster.md, "Order of delivery").
//
// Why: Db::ApplyRemote skips a record at or below its origin's inbound position, which is
// right only if the shard applies its subject's messages in stream order. A consumer does not
// promise that: a delivery can be lost on its way (the connection moved to another NATS node,
// the reply went to the old one) while the consumer counts it as delivered and hands out newer
// messages; the lost one comes back only after its ack wait, behind them. So the inbox applies
// a message at once only when the consumer's own numbering proves it is the next one: it is a
// first delivery (delivered count 1) whose consumer sequence follows that of the first
// delivery of the last message applied, in the same fetch. A consumer delivers first
// deliveries in stream order, from the message after the last one it delivered, and numbers
// every delivery, redeliveries too, one after the other; a gap in the numbering is a lost
// delivery. Anything else is
// checked: the inbox reads the subject's messages after `through` from the stream itself and
// applies those it finds before the delivered one.
//
// Thread-safety: none (the inbox thread's).
#pragma once

#include <algorithm>
#include <cstdint>

namespace relgraph {

// A delivered message's place, from its JetStream metadata.
struct Delivery {
  uint64_t stream_seq = 0;    // its sequence in the stream
  uint64_t consumer_seq = 0;  // the consumer's number for this delivery
  uint64_t delivered = 0;     // how many times it was delivered (1: the first time)
};

class InboxOrder {
 public:
  enum class Verdict {
    kRepeat,  // at or below through(): applied before (apply again: skipped by its LSNs)
    kNext,    // the subject's next message after through(): apply it
    kCheck,   // not known: apply first what the stream holds between through() and it
  };

  // Every message of the subject up to stream sequence `through` is applied (the consumer's
  // ack floor when subscribing: acknowledged only once applied and durable); nothing is
  // known of the deliveries to come.
  void Reset(uint64_t through) {
    through_ = through;
    chain_ = 0;
    newest_ = 0;
  }
  // A new fetch's deliveries follow: the first one is checked. The deliveries that answer one
  // pull request come from one consumer leader, numbered from its own state; across requests
  // a new leader may number again from an older state, which shows only if one of its
  // deliveries numbered at or below the highest seen arrives (they may all be lost).
  void NewBatch() { chain_ = 0; }
  // What to do with delivery `d`, the next one received. A consumer sequence not above every
  // one received before is a consumer numbering again from an older state (a new leader that
  // had not heard of the last deliveries): the numbering proves nothing until a delivery is
  // checked against the stream.
  Verdict Classify(const Delivery& d) {
    if (d.consumer_seq <= newest_) chain_ = 0;
    newest_ = std::max(newest_, d.consumer_seq);
    if (d.stream_seq <= through_) return Verdict::kRepeat;
    if (chain_ != 0 && d.delivered == 1 && d.consumer_seq == chain_ + 1) return Verdict::kNext;
    return Verdict::kCheck;
  }
  // The subject's next message, `stream_seq`, is applied. `d`: how it came when delivered
  // (nullptr: read from the stream, which tells nothing of the consumer's numbering).
  // REQUIRES: stream_seq > through(), and no message of the subject in between.
  void Applied(uint64_t stream_seq, const Delivery* d) {
    through_ = stream_seq;
    chain_ = d != nullptr && d->delivered == 1 ? d->consumer_seq : 0;
  }
  uint64_t through() const { return through_; }

 private:
  uint64_t through_ = 0;
  uint64_t chain_ = 0;   // the consumer sequence of the first delivery of through_ (0: unknown)
  uint64_t newest_ = 0;  // the highest consumer sequence received
};

}  // namespace relgraph
