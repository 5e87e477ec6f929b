// ShardNode's outbox: reads this shard's WAL from its named cursor, sends each change to the
// shards that must apply it (TargetsOf), back-fills posts, and moves the cursor once JetStream
// has them all.
#include "net/roles/cluster/shard_node.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "engine/durable/wal_records.h"
#include "net/roles/cluster/change_message.h"

namespace relgraph {

void ShardNode::OutboxLoop() {
  const uint32_t self = options_.shard_id;
  std::unique_ptr<ChangeReader> reader;
  uint64_t acked = 0;  // the cursor's position
  auto last_ack = std::chrono::steady_clock::now();
  auto ack = [&](bool force) {
    const uint64_t forwarded = stats().forwarded_lsn;
    // The ACK is itself a record the outbox reads next: acking only when more than it
    // passed keeps an idle shard from acking its own acks forever.
    if (forwarded <= acked + 1) return;
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_ack < std::chrono::milliseconds(100)) return;
    if (Status s = db_->AckCursor(options_.outbox_cursor, forwarded); s.ok()) {
      acked = forwarded;
    } else {
      Log("outbox: moving cursor " + options_.outbox_cursor + ": " + s.ToString());
    }
    last_ack = now;
  };
  struct Outgoing {
    std::string bytes;
    uint32_t count = 0;
    uint64_t first = 0, last = 0;
  };
  while (!Halted()) {
    if (reader == nullptr) {
      auto resume = db_->CursorResumeLsn(options_.outbox_cursor);
      uint64_t from = 0;
      if (resume.ok()) {
        from = *resume;
        acked = from - 1;
      } else if (resume.status().code() == Code::kNotFound) {
        from = std::max<uint64_t>(1, db_->OldestWalLsn());  // a new shard: from its start
      } else {
        // The cursor's WAL is gone (retention limits): changes in between never reach the
        // other shards. This needs an operator; say so loudly and go on from what is kept.
        Log("outbox: " + resume.status().ToString() +
            ": changes before the oldest kept LSN are not sent");
        from = std::max<uint64_t>(1, db_->OldestWalLsn());
      }
      auto opened = db_->OpenChanges(from);
      if (!opened.ok()) {
        Log("outbox: reading the WAL from " + std::to_string(from) + ": " +
            opened.status().ToString());
        if (!Backoff()) break;
        continue;
      }
      reader = std::move(*opened);
    }
    // Every batch before this one is in JetStream: from here on, records go by this map.
    const std::shared_ptr<const net::ShardMap> m = map();
    {
      std::lock_guard lock(stats_mu_);
      stats_.outbox_map_version = m->version;
      stats_.outbox_map_generation = m->generation;
    }
    std::map<uint32_t, Outgoing> out;
    uint64_t read_to = 0;
    auto add = [&](uint32_t target, uint64_t lsn, uint8_t type, std::string_view payload) {
      Outgoing& o = out[target];
      if (o.count == 0) {
        StartChangeMessage(self, &o.bytes);
        o.first = lsn;
      }
      AppendChangeRecord(lsn, type, payload, &o.bytes);
      ++o.count;
      o.last = lsn;
    };
    auto n = reader->ReadRecords(options_.batch_records, [&](const WalRecordView& r) -> Status {
      read_to = r.lsn;
      if (r.type == static_cast<uint8_t>(WalRecordType::kRemote)) {
        return BackFill(*m, r, [&](uint32_t target, std::string_view posts) {
          add(target, r.lsn, static_cast<uint8_t>(WalRecordType::kPosts), posts);
        });
      }
      if (!RecordHas(r.type, kRecordRemote)) {
        return Status::OK();  // cursors, mutes, epochs, remote and moved records: nothing to send
      }
      auto op = DecodeWalRecord(r.type, r.payload);
      if (!op.ok()) return op.status();
      for (uint32_t target : TargetsOf(*m, *op)) add(target, r.lsn, r.type, r.payload);
      return Status::OK();
    });
    if (!n.ok()) {
      Log("outbox: reading the WAL: " + n.status().ToString());
      reader.reset();
      if (!Backoff()) break;
      continue;
    }
    if (*n == 0) {
      ack(false);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    // Only what the group holds leaves the shard: a record another shard applied must
    // survive this node's failover, or the new primary would log other records at its LSNs
    // and the receiver would skip them as seen.
    if (!out.empty()) {
      if (Status held = Commit(read_to); !held.ok()) {
        Log("outbox: LSN " + std::to_string(read_to) + " is not held: " + held.ToString());
        reader.reset();  // read again from the cursor
        if (!Backoff()) break;
        continue;
      }
    }
    // Every message of the batch in JetStream before the position moves past it; a failed
    // publish is retried (JetStream drops a repeated message id; the receiver skips by LSN).
    bool sent = out.empty();
    while (!sent && !Halted()) {
      Status failure;
      for (auto& [target, o] : out) {
        if (o.count == 0) continue;  // this one made it on an earlier try
        FinishChangeMessage(o.count, &o.bytes);
        const std::string subject = link_->SubjectOf(target);
        // JetStream drops a repeated id across the whole stream, not per subject: the id
        // names the target too, or records sent to two shards would reach only one.
        const std::string id = std::to_string(self) + ">" + std::to_string(target) + ":" +
                               std::to_string(o.first) + "-" + std::to_string(o.last);
        failure =
            link_->Publish(subject, o.bytes, id,
                           "publishing LSNs " + std::to_string(o.first) + ".." +
                               std::to_string(o.last) + " to shard " + std::to_string(target));
        if (!failure.ok()) break;
        std::lock_guard lock(stats_mu_);
        ++stats_.messages_sent;
        stats_.records_sent += o.count;
        o.count = 0;
      }
      if (failure.ok()) {
        sent = true;
      } else {
        Log("outbox: " + failure.ToString() + "; retrying");
        if (!Backoff()) break;
      }
    }
    if (!sent) break;
    {
      std::lock_guard lock(stats_mu_);
      stats_.forwarded_lsn = read_to;
    }
    ack(false);
  }
  // A group member stops its outbox on stepping down (nothing more may be logged here) or
  // after giving up its lease: the cursor's next position is the new primary's to log.
  if (options_.group.empty()) ack(true);
}

std::vector<uint32_t> ShardNode::TargetsOf(const net::ShardMap& m, const WalOp& op) const {
  const uint32_t self = options_.shard_id;
  std::vector<uint32_t> targets;
  auto all_others = [&] {
    for (const net::ShardInfo& s : m.shards) {
      if (s.id != self) targets.push_back(s.id);
    }
  };
  auto owner_of = [&](UserId u) {
    if (const uint32_t t = m.OwnerOf(u);
        t != self && std::find(targets.begin(), targets.end(), t) == targets.end()) {
      targets.push_back(t);
    }
  };
  const RemoteRecipients to = RecipientsOf(op);
  switch (to.kind) {
    case RemoteRecipients::kEveryShard:
      all_others();
      break;
    case RemoteRecipients::kFansOf: {
      // The shards that hold fans of the author; every shard for an author with more fans
      // than is worth listing (a celebrity: its posts go to every shard's copies).
      const Db::FanSample fans = db_->FansUpTo(to.users[0], options_.broadcast_fans);
      if (fans.fan_count > options_.broadcast_fans) {
        all_others();
        break;
      }
      for (UserId f : fans.fans) owner_of(f);
      break;
    }
    case RemoteRecipients::kUsers:
      for (uint8_t i = 0; i < to.count; ++i) owner_of(to.users[i]);
      break;
  }
  return targets;
}

Status ShardNode::BackFill(const net::ShardMap& m, const WalRecordView& r,
                           const std::function<void(uint32_t, std::string_view)>& send) const {
  auto op = DecodeWalRecord(r.type, r.payload);
  if (!op.ok()) return op.status();
  // A follow another shard decided that made it hold a first fan of our user, or its
  // posts-wanted record (a first fan made by an approval): that shard cleared its copies of
  // the user's posts, and gets them back whole, as they are now (later changes follow this
  // message in order, each applied by its ensure form).
  const bool first_follow =
      op->type == WalRecordType::kFollow && (op->flags & kFollowFirstRemoteFan) != 0;
  if (!(first_follow || op->type == WalRecordType::kPostsWanted) ||
      op->origin == options_.shard_id) {
    return Status::OK();
  }
  const UserId author = op->cleared_author();
  // A user moving away is this shard's to answer for until its state is handed over: what
  // asks for it was routed here by the map before the flip (ExportMove waits for it).
  const bool leaving = m.move && m.move->from == options_.shard_id && m.Moving(author);
  if (m.OwnerOf(author) != options_.shard_id && !leaving) return Status::OK();
  std::vector<FeedEntry> posts = db_->RetainedPosts(author);
  if (posts.size() > kMaxPostsPerRecord) {
    posts.erase(posts.begin(), posts.end() - kMaxPostsPerRecord);  // relgraphd refuses such K
  }
  send(op->origin, EncodePostsRecord(author, posts));
  return Status::OK();
}

}  // namespace relgraph
