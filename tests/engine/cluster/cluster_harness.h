// Shards of a cluster played by Dbs in one process (docs/cluster.md), for the engine's cluster
// tests: each Db is a shard with its own WAL; an in-test outbox reads each shard's WAL and
// queues the records other shards must apply (routed as a shard's outbox routes them, users
// placed by id modulo the shard count), and hands them over through Db::ApplyRemote in random
// batches, sometimes starting again before what was handed over already (as JetStream
// redelivers what was not acknowledged). Shards restart from their WAL or a snapshot.
//
// Posts go to every other shard, as a celebrity's do, unless `posts_by_fans`: then the outbox
// also plays ShardNode's feed part, sending a post to the shards of its author's fans (every
// shard past `broadcast_fans`), and answering a first fan's follow or a posts-wanted record
// with a back-fill of the author's retained posts.
#pragma once

#include <doctest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/db.h"
#include "engine/durable/wal_records.h"
#include "engine/graph/clock.h"
#include "tests/storage/test_dir.h"

namespace relgraph::testing {

template <uint32_t kShards>
struct ClusterHarness {
  struct Record {
    uint64_t lsn;
    uint8_t type;
    std::string payload;
  };

  static uint32_t ShardOf(UserId u) { return static_cast<uint32_t>(u % kShards); }
  // Where records are routed: ShardOf unless a test moves users (the map at routing time).
  std::function<uint32_t(UserId)> owner = ShardOf;
  bool posts_by_fans = false;
  uint32_t broadcast_fans = 3;
  // Whether shard s answers back-fills for u, a user moving away from it (ShardNode::BackFill).
  std::function<bool(uint32_t, UserId)> leaving = [](uint32_t, UserId) { return false; };

  // The shards a record of shard `origin` goes to, by RecipientsOf as ShardNode::TargetsOf
  // sends it (a publish or delete to every other shard, as for a celebrity).
  std::vector<uint32_t> TargetsOf(uint32_t origin, const WalOp& op) const {
    std::vector<uint32_t> out;
    auto add = [&](UserId u) {
      const uint32_t t = owner(u);
      if (t != origin && std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    };
    const RemoteRecipients to = RecipientsOf(op);
    if (to.kind == RemoteRecipients::kUsers) {
      for (uint8_t i = 0; i < to.count; ++i) add(to.users[i]);
    } else if (to.kind == RemoteRecipients::kFansOf && posts_by_fans &&
               db[origin]->FansUpTo(to.users[0], broadcast_fans).fan_count <= broadcast_fans) {
      for (UserId f : db[origin]->FansUpTo(to.users[0], broadcast_fans).fans) add(f);
    } else {
      for (uint32_t t = 0; t < kShards; ++t) {
        if (t != origin) out.push_back(t);
      }
    }
    return out;
  }

  TestDir dir;
  ManualClock clock;
  DbOptions options;
  std::unique_ptr<Db> db[kShards];
  uint64_t read_lsn[kShards] = {};  // each shard's WAL is read up to here
  // queue[o][t]: records shard o decided that shard t must apply; delivered[o][t] of them
  // are handed over.
  std::vector<Record> queue[kShards][kShards];
  size_t delivered[kShards][kShards] = {};
  std::mt19937_64 rng;
  // Called for each record handed over for the first time, after it was applied.
  std::function<void(uint32_t origin, uint32_t target, const Record&)> on_delivered;

  // `configure` may change the shards' options before they open.
  explicit ClusterHarness(uint64_t seed, const std::function<void(DbOptions&)>& configure = nullptr)
      : rng(seed) {
    options.graph.clock = &clock;
    options.graph.rate_limit.enabled = false;
    options.graph.max_following = 1000;
    options.wal_segment_bytes = 4096;
    options.background_fanout = false;
    if (configure) configure(options);
    for (uint32_t s = 0; s < kShards; ++s) Open(s);
  }

  std::string Dir(uint32_t s) const { return dir.path() + "/shard" + std::to_string(s); }

  void Open(uint32_t s) {
    auto db_or = Db::Open(Dir(s), options);
    REQUIRE_MESSAGE(db_or.ok(), db_or.status().ToString());
    db[s] = std::move(*db_or);
  }

  // Restarts shard s from its WAL (after a snapshot when `snapshot`): its inbound positions
  // must survive.
  void Restart(uint32_t s, bool snapshot) {
    if (snapshot) REQUIRE(db[s]->Snapshot().ok());
    const auto positions = db[s]->InboundPositionsNow();
    db[s].reset();
    Open(s);
    CHECK(db[s]->InboundPositionsNow() == positions);
    read_lsn[s] = db[s]->last_lsn();
  }

  // Moves each shard's newly logged changes into the queues of the shards they concern.
  void Collect() {
    for (uint32_t o = 0; o < kShards; ++o) {
      if (db[o]->last_lsn() <= read_lsn[o]) continue;
      auto reader = db[o]->OpenChanges(read_lsn[o] + 1);
      REQUIRE_MESSAGE(reader.ok(), reader.status().ToString());
      while ((*reader)->next_lsn() <= db[o]->last_lsn()) {
        auto n = (*reader)->ReadRecords(100, [&](const WalRecordView& r) {
          const auto type = static_cast<WalRecordType>(r.type);
          if (type == WalRecordType::kRemote && posts_by_fans) {
            BackFill(o, r);
            return Status::OK();
          }
          if (!IsRemoteApplicable(type)) return Status::OK();  // remote, cursor, ...
          auto op = DecodeWalRecord(r.type, r.payload);
          REQUIRE(op.ok());
          for (uint32_t t : TargetsOf(o, *op)) {
            queue[o][t].push_back({r.lsn, r.type, std::string(r.payload)});
          }
          return Status::OK();
        });
        REQUIRE_MESSAGE(n.ok(), n.status().ToString());
      }
      read_lsn[o] = db[o]->last_lsn();
    }
  }

  // A remote record on shard o that is another shard's first fan of o's user (or its
  // posts-wanted record) is answered with the user's retained posts, as they are now.
  void BackFill(uint32_t o, const WalRecordView& r) {
    auto op = DecodeWalRecord(r.type, r.payload);
    REQUIRE(op.ok());
    const bool first_follow =
        op->type == WalRecordType::kFollow && (op->flags & kFollowFirstRemoteFan) != 0;
    if (!(first_follow || op->type == WalRecordType::kPostsWanted) || op->origin == o + 1) return;
    const UserId author = op->cleared_author();
    if (owner(author) != o && !leaving(o, author)) return;
    queue[o][op->origin - 1].push_back({r.lsn, static_cast<uint8_t>(WalRecordType::kPosts),
                                        EncodePostsRecord(author, db[o]->RetainedPosts(author))});
  }

  // Hands one random batch from o to t; sometimes starts before what was handed already.
  void DeliverSome(uint32_t o, uint32_t t) {
    std::vector<Record>& q = queue[o][t];
    size_t& done = delivered[o][t];
    if (done == q.size()) return;
    size_t from = done;
    if (done > 0 && rng() % 4 == 0) from = done - 1 - rng() % std::min<size_t>(done, 5);
    const size_t to = std::min(q.size(), done + 1 + rng() % 8);
    std::vector<Db::ReplicatedRecord> batch;
    for (size_t i = from; i < to; ++i) batch.push_back({q[i].lsn, q[i].type, q[i].payload});
    auto applied = db[t]->ApplyRemote(o + 1, batch);  // shard ids are 1-based on the wire
    REQUIRE_MESSAGE(applied.ok(), applied.status().ToString());
    CHECK(applied->skipped == done - from);
    CHECK(applied->applied == to - done);
    const size_t first_new = done;
    done = to;
    CHECK(db[t]->InboundPosition(o + 1) == q[to - 1].lsn);
    if (on_delivered) {
      for (size_t i = first_new; i < to; ++i) on_delivered(o, t, q[i]);
    }
  }

  // Until nothing is left to hand over: a change handed over may make the receiver decide
  // changes of its own, which go back. Nothing is handed to a shard in `held` (its inbox
  // waits).
  void Drain(const std::vector<uint32_t>& held = {}) {
    auto is_held = [&](uint32_t t) { return std::find(held.begin(), held.end(), t) != held.end(); };
    for (;;) {
      Collect();
      bool more = false;
      for (uint32_t o = 0; o < kShards; ++o) {
        for (uint32_t t = 0; t < kShards; ++t) {
          more |= !is_held(t) && delivered[o][t] < queue[o][t].size();
        }
      }
      if (!more) return;
      for (uint32_t o = 0; o < kShards; ++o) {
        for (uint32_t t = 0; t < kShards; ++t) {
          if (!is_held(t)) DeliverSome(o, t);
        }
      }
    }
  }
};

}  // namespace relgraph::testing
