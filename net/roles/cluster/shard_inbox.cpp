// ShardNode's inbox: pulls this shard's subject through a durable consumer and applies each
// message exactly once (Db::ApplyRemote), in stream order, acknowledging it once its records
// are fsynced.
//
// Why stream order, and how: an inbound position skips records at or below it, which is right
// only if each origin's records arrive in order; an origin's records are in its subject's
// stream order (its outbox publishes a target's messages one after the other, each once
// JetStream acknowledged the one before). JetStream's consumer does not deliver in that order
// when a delivery is lost on its way (a NATS node hung or died with it, or the connection
// moved to another node): it counts the lost message as delivered, hands out newer ones, and
// redelivers the lost one only after its ack wait. Applied then, the newer ones would raise
// the position past it and it would be skipped unapplied. So InboxOrder accepts a delivery
// as it comes only when the consumer's numbering proves it is the next message; otherwise the
// inbox reads the subject's messages after the last one it applied from the stream itself
// (subject_reader.h) and applies them first. The consumer is made once and kept (not made
// again at each subscription): a three-replica consumer deleted and made again while a NATS
// node hangs can be left without a quorum, and the order no longer depends on restarting it.
#include "net/roles/cluster/shard_node.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "engine/durable/wal_records.h"
#include "net/roles/cluster/change_message.h"
#include "net/roles/cluster/inbox_order.h"
#include "net/roles/cluster/subject_reader.h"

namespace relgraph {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// How long a read from the stream (filling a gap) may wait for its leader.
constexpr int64_t kStreamReadTimeoutMs = 2000;

}  // namespace

Result<std::unique_ptr<PullConsumer>> ShardNode::SubscribeInbox(uint64_t* ack_floor,
                                                                bool* created) {
  const std::string& stream = options_.names.stream;
  const std::string subject = link_->SubjectOf(options_.shard_id);
  const std::string durable = link_->ConsumerOf(options_.shard_id);
  jsErrCode jerr = static_cast<jsErrCode>(0);
  jsConsumerInfo* ci = nullptr;
  natsStatus s =
      js_GetConsumerInfo(&ci, link_->js(), stream.c_str(), durable.c_str(), nullptr, &jerr);
  if (s == NATS_OK) {
    *ack_floor = ci->AckFloor.Stream;
    *created = false;
    jsConsumerInfo_Destroy(ci);
  } else if (s == NATS_NOT_FOUND) {
    // A new shard, or the JetStream store was lost and the stream made again: from the start.
    jsConsumerConfig cc;
    jsConsumerConfig_Init(&cc);
    cc.Durable = durable.c_str();
    cc.FilterSubject = subject.c_str();
    cc.AckPolicy = js_AckExplicit;
    cc.DeliverPolicy = js_DeliverAll;
    cc.MaxAckPending = 1 << 16;
    // A message unacknowledged this long is delivered again: one whose acknowledgement was
    // lost (applied, it is skipped by its LSNs), or whose delivery was (InboxOrder).
    cc.AckWait = int64_t{5} * 1'000'000'000;
    jerr = static_cast<jsErrCode>(0);
    s = js_AddConsumer(&ci, link_->js(), stream.c_str(), &cc, nullptr, &jerr);
    if (s != NATS_OK) return net::NatsError("creating consumer " + durable, s, jerr);
    *ack_floor = ci->AckFloor.Stream;  // 0, unless it was there after all (the same config)
    *created = true;
    jsConsumerInfo_Destroy(ci);
  } else {
    return net::NatsError("consumer info of " + durable, s, jerr);
  }
  auto pull = PullConsumer::Bind(link_->connection(), stream, durable);
  if (!pull.ok()) return pull.status();
  inbox_subscribed_ = true;
  return pull;
}

void ShardNode::InboxLoop() {
  const std::string subject = link_->SubjectOf(options_.shard_id);
  std::unique_ptr<PullConsumer> sub;
  InboxOrder order;
  bool keep_order = false;  // false: what was applied since the ack floor is not durable
  auto drop_subscription = [&] {
    inbox_subscribed_ = false;
    sub.reset();
  };
  auto checked = std::chrono::steady_clock::now();
  while (!Halted()) {
    if (inbox_hold_.load()) {  // a bucket move: nothing more until its state is here
      inbox_held_ = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    inbox_held_ = false;
    if (sub == nullptr) {
      uint64_t ack_floor = 0;
      bool created = false;
      auto subscribed = SubscribeInbox(&ack_floor, &created);
      if (!subscribed.ok()) {
        Log("inbox: " + subscribed.status().ToString());
        if (!Backoff()) break;
        continue;
      }
      sub = std::move(*subscribed);
      // Acknowledged only once applied and durable here: applied up to the ack floor, and
      // up to what this thread applied since if the consumer is the one it had (a consumer
      // made anew is on a stream made anew, numbered from 1 again).
      order.Reset(created || !keep_order ? ack_floor : std::max(ack_floor, order.through()));
      inbox_durable_through_ = order.through();
      keep_order = true;
    }
    auto fetched = sub->Fetch(64, 200);
    if (fetched.ok() && fetched->empty()) {
      // A pull from a consumer that is gone only times out: after the JetStream store was
      // lost and the stream made again (import-map), the consumer must be made again too.
      if (std::chrono::steady_clock::now() - checked >= std::chrono::seconds(2)) {
        checked = std::chrono::steady_clock::now();
        if (link_->ConsumerStateOf(options_.shard_id).status().code() == Code::kNotFound) {
          Log("inbox: consumer " + link_->ConsumerOf(options_.shard_id) +
              " is gone (was the JetStream store lost?): subscribing again");
          drop_subscription();
        }
      }
      continue;
    }
    if (!fetched.ok()) {
      // Bound again to the same consumer (nothing is deleted or made): a delivery this error
      // cost is a gap InboxOrder finds.
      Log("inbox: fetching from " + subject + ": " + fetched.status().ToString());
      drop_subscription();
      if (!Backoff()) break;
      continue;
    }
    const PulledMessages list = std::move(*fetched);
    uint64_t commit = 0;
    bool wal_failed = false;
    // Applies one message's bytes: false when the WAL failed (it is then not applied).
    auto apply = [&](std::string_view bytes) {
      auto message = DecodeChangeMessage(bytes);
      Result<Db::RemoteApplied> applied = message.ok() ? Status::OK() : message.status();
      uint64_t c = 0;
      if (message.ok()) applied = db_->ApplyRemote(message->origin, message->records, &c);
      if (!applied.ok() && applied.status().code() == Code::kUnavailable) {
        Log("inbox: " + applied.status().ToString());
        wal_failed = true;
        return false;
      }
      std::lock_guard lock(stats_mu_);
      if (!applied.ok()) {
        // No shard sends this: it is passed over (acknowledged, not to come back), and said so.
        Log("inbox: message dropped: " + applied.status().ToString());
        ++stats_.messages_rejected;
        return true;
      }
      commit = std::max(commit, c);
      ++stats_.messages_applied;
      stats_.records_applied += applied->applied;
      stats_.records_skipped += applied->skipped;
      stats_.post_conflicts += applied->post_conflicts;
      return true;
    };
    // Applies what the stream holds for this subject between the last message applied and
    // `seq`: false when it could not be read or applied (nothing past it is then applied).
    auto fill_gap = [&](uint64_t seq) {
      uint64_t filled = 0;
      auto said = [&] {
        if (filled > 0) {
          Log("inbox: " + std::to_string(filled) +
              " message(s) the consumer had not delivered "
              "in order read from the stream, before stream sequence " +
              std::to_string(seq));
        }
      };
      while (order.through() + 1 < seq) {
        auto next = NextOnSubject(link_->connection(), options_.names.stream, subject,
                                  order.through() + 1, kStreamReadTimeoutMs);
        if (next.ok() && next->seq == seq) break;  // none before it: it is the next
        if (!next.ok() || next->seq > seq) {
          // Not even the delivered message: a node behind the stream answered (one resumed
          // after a pause, not yet caught up). Try again later.
          Log("inbox: filling a gap before stream sequence " + std::to_string(seq) + ": " +
              (next.ok() ? "the stream answered sequence " + std::to_string(next->seq)
                         : next.status().ToString()));
          said();
          return false;
        }
        if (!apply(next->data)) {
          said();
          return false;
        }
        order.Applied(next->seq, nullptr);
        ++filled;
        std::lock_guard lock(stats_mu_);
        ++stats_.messages_filled;
      }
      said();
      return true;
    };
    order.NewBatch();
    std::vector<natsMsg*> handled;
    int64_t last_publish_ns = 0;
    bool stopped = false;  // a gap not filled or a failed WAL: the rest waits, unacknowledged
    for (natsMsg* msg : list.messages()) {
      jsMsgMetaData* meta = nullptr;
      Delivery d;
      if (natsMsg_GetMetaData(&meta, msg) == NATS_OK) {
        d = {meta->Sequence.Stream, meta->Sequence.Consumer, meta->NumDelivered};
        last_publish_ns = meta->Timestamp;
        jsMsgMetaData_Destroy(meta);
      }
      if (d.stream_seq == 0) continue;  // not a JetStream message: never sent to this subject
      const InboxOrder::Verdict verdict = order.Classify(d);
      if (verdict == InboxOrder::Verdict::kCheck && !fill_gap(d.stream_seq)) {
        stopped = true;
        break;
      }
      const std::string_view bytes(natsMsg_GetData(msg),
                                   static_cast<size_t>(natsMsg_GetDataLength(msg)));
      if (!apply(bytes)) {
        stopped = true;
        break;
      }
      if (verdict != InboxOrder::Verdict::kRepeat) order.Applied(d.stream_seq, &d);
      handled.push_back(msg);
    }
    // Durable here (and on the group's synchronous replicas) before JetStream may forget them.
    if (Status sync = Commit(commit); !sync.ok()) {
      Log("inbox: " + sync.ToString());
      handled.clear();
      wal_failed = true;
    } else {
      inbox_durable_through_ = order.through();
    }
    for (natsMsg* msg : handled) {
      // A lost acknowledgement costs a redelivery, which the records' LSNs skip.
      if (Status acked = sub->Ack(msg); !acked.ok()) Log("inbox: " + acked.ToString());
    }
    if (last_publish_ns > 0 && !handled.empty()) {
      std::lock_guard lock(stats_mu_);
      stats_.inbound_delay_ms =
          static_cast<uint64_t>(std::max<int64_t>(0, NowNs() - last_publish_ns) / 1'000'000);
    }
    if (wal_failed) {
      // What was applied but is not durable is not acknowledged: start again from the ack
      // floor, with the same consumer.
      drop_subscription();
      keep_order = false;
    }
    if (stopped && !Backoff()) break;
  }
  if (sub != nullptr) drop_subscription();
}

Result<uint64_t> ShardNode::InboundPending() const {
  if (!inbox_subscribed_.load()) {
    return Status(Code::kUnavailable, "the inbox is not subscribed (starting, or retrying)");
  }
  auto state = link_->ConsumerStateOf(options_.shard_id);
  if (!state.ok()) return state.status();
  return state->pending + state->ack_pending;
}

}  // namespace relgraph
