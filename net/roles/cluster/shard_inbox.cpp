// ShardNode's inbox: pulls this shard's subject through a durable consumer and applies each
// message exactly once (Db::ApplyRemote), acknowledging it once its records are fsynced.
#include "net/roles/cluster/shard_node.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "engine/durable/wal_records.h"
#include "net/roles/cluster/change_message.h"

namespace relgraph {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Result<natsSubscription*> ShardNode::SubscribeInbox() {
  const std::string& stream = options_.names.stream;
  const std::string subject = link_->SubjectOf(options_.shard_id);
  const std::string durable = link_->ConsumerOf(options_.shard_id);
  jsErrCode jerr = static_cast<jsErrCode>(0);
  // Acknowledged messages are a prefix of what was delivered (acknowledged in order, each
  // only once durable here), so everything up to the ack floor is applied.
  uint64_t ack_floor = 0;
  jsConsumerInfo* ci = nullptr;
  natsStatus s =
      js_GetConsumerInfo(&ci, link_->js(), stream.c_str(), durable.c_str(), nullptr, &jerr);
  if (s == NATS_OK) {
    ack_floor = ci->AckFloor.Stream;
    jsConsumerInfo_Destroy(ci);
    s = js_DeleteConsumer(link_->js(), stream.c_str(), durable.c_str(), nullptr, &jerr);
    if (s != NATS_OK && s != NATS_NOT_FOUND) {
      return net::NatsError("restarting consumer " + durable, s, jerr);
    }
  } else if (s != NATS_NOT_FOUND) {
    return net::NatsError("consumer info of " + durable, s, jerr);
  }
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream.c_str();
  so.Config.AckPolicy = js_AckExplicit;
  so.Config.DeliverPolicy = js_DeliverByStartSequence;
  so.Config.OptStartSeq = ack_floor + 1;
  so.Config.MaxAckPending = 1 << 16;
  // A message unacknowledged this long is delivered again to this subscription: one whose
  // acknowledgement was lost. Applied then, it is skipped by its LSN.
  so.Config.AckWait = int64_t{5} * 1'000'000'000;
  natsSubscription* sub = nullptr;
  jerr = static_cast<jsErrCode>(0);
  s = js_PullSubscribe(&sub, link_->js(), subject.c_str(), durable.c_str(), nullptr, &so, &jerr);
  if (s != NATS_OK) return net::NatsError("subscribing to " + subject, s, jerr);
  inbox_subscribed_ = true;
  return sub;
}

// Why the consumer restarts at its ack floor on every subscription: an inbound position
// skips records at or below it, which is right only if each origin's records arrive in
// order. JetStream redelivers an unacknowledged message only after its ack wait, and
// meanwhile hands out newer ones; a message delivered to a process that then died, or left
// unacknowledged when the WAL failed, would come back after newer records of its origin had
// raised the position past it, and be skipped unapplied. Restarting at the ack floor makes
// it come first. So the inbox stops pulling from a subscription whenever it leaves a message
// unacknowledged, and subscribes anew.
void ShardNode::InboxLoop() {
  natsSubscription* sub = nullptr;
  auto drop_subscription = [&] {
    inbox_subscribed_ = false;
    natsSubscription_Destroy(sub);
    sub = nullptr;
  };
  auto checked = std::chrono::steady_clock::now();
  while (!stop_.load()) {
    if (inbox_hold_.load()) {  // a bucket move: nothing more until its state is here
      inbox_held_ = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    inbox_held_ = false;
    if (sub == nullptr) {
      auto subscribed = SubscribeInbox();
      if (!subscribed.ok()) {
        Log("inbox: " + subscribed.status().ToString());
        if (!Backoff()) break;
        continue;
      }
      sub = *subscribed;
    }
    natsMsgList list{};
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s = natsSubscription_Fetch(&list, sub, 64, 200, &jerr);
    if (s == NATS_TIMEOUT) {
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
    if (s != NATS_OK) {
      Log("inbox: " +
          net::NatsError("fetching from " + link_->SubjectOf(options_.shard_id), s, jerr)
              .ToString());
      natsMsgList_Destroy(&list);
      drop_subscription();
      if (!Backoff()) break;
      continue;
    }
    std::vector<natsMsg*> handled;
    uint64_t commit = 0;
    int64_t last_publish_ns = 0;
    bool wal_failed = false;
    for (int i = 0; i < list.Count && !wal_failed; ++i) {
      natsMsg* msg = list.Msgs[i];
      auto message = DecodeChangeMessage(
          std::string_view(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg))));
      Result<Db::RemoteApplied> applied = message.ok() ? Status::OK() : message.status();
      uint64_t c = 0;
      if (message.ok()) applied = db_->ApplyRemote(message->origin, message->records, &c);
      if (!applied.ok() && applied.status().code() == Code::kUnavailable) {
        // The WAL failed: leave it unacknowledged, to be redelivered once it works again.
        Log("inbox: " + applied.status().ToString());
        wal_failed = true;
        break;
      }
      if (!applied.ok()) {
        // No shard sends this: keep it from coming back, and say so.
        Log("inbox: message dropped: " + applied.status().ToString());
        natsMsg_Term(msg, nullptr);
        std::lock_guard lock(stats_mu_);
        ++stats_.messages_rejected;
        continue;
      }
      commit = std::max(commit, c);
      handled.push_back(msg);
      jsMsgMetaData* meta = nullptr;
      if (natsMsg_GetMetaData(&meta, msg) == NATS_OK) {
        last_publish_ns = meta->Timestamp;
        jsMsgMetaData_Destroy(meta);
      }
      std::lock_guard lock(stats_mu_);
      ++stats_.messages_applied;
      stats_.records_applied += applied->applied;
      stats_.records_skipped += applied->skipped;
      stats_.post_conflicts += applied->post_conflicts;
    }
    // Durable here before JetStream may forget them.
    if (Status d = db_->SyncThrough(commit); !d.ok()) {
      Log("inbox: " + d.ToString());
      handled.clear();
      wal_failed = true;
    }
    for (natsMsg* msg : handled) natsMsg_Ack(msg, nullptr);
    if (last_publish_ns > 0 && !handled.empty()) {
      std::lock_guard lock(stats_mu_);
      stats_.inbound_delay_ms =
          static_cast<uint64_t>(std::max<int64_t>(0, NowNs() - last_publish_ns) / 1'000'000);
    }
    natsMsgList_Destroy(&list);
    if (wal_failed) {
      drop_subscription();  // what was left unacknowledged comes first on the next one
      if (!Backoff()) break;
    }
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
