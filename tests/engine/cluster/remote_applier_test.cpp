// Db::ApplyRemote, the engine half of a cluster shard (docs/cluster.md): three Dbs play three
// shards. Each change is decided on its deciding user's shard; an in-test outbox reads each
// shard's WAL and hands the records other shards must apply to them through ApplyRemote, in
// random batches, with random redeliveries of what was handed over before (as JetStream
// redelivers what was not acknowledged). After every round the outbox drains, and every
// shard must answer for its own users exactly as one node holding every change would (the
// reference model), hold exactly the edges that touch its users, and keep its invariants.
// Shards restart from their WAL and from snapshots in between, so the inbound positions
// must survive both.
#include <doctest.h>

#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/db.h"
#include "engine/graph/clock.h"
#include "tests/engine/cluster/cluster_harness.h"
#include "tests/engine/graph_state_model.h"
#include "tests/storage/test_dir.h"

namespace relgraph {
namespace {

using testing::GraphStateModel;
using testing::TestDir;

constexpr uint32_t kShards = 3;
constexpr UserId kUsers = 40;

using Harness = testing::ClusterHarness<kShards>;

uint32_t ShardOf(UserId u) {
  return Harness::ShardOf(u);
}

DbOptions Options(ManualClock* clock) {
  DbOptions o;
  o.graph.clock = clock;
  o.graph.rate_limit.enabled = false;
  o.graph.max_following = 1000;
  o.wal_segment_bytes = 4096;
  o.background_fanout = false;
  return o;
}

// The shards, with the follows a removal on its way voids.
struct Cluster : Harness {
  // Follows that the follower's shard still holds though the model has them ended: those of
  // a removed user, and those decided while a removal of their followee was on its way to
  // the follower's shard. The removal, once there, ends them.
  std::set<std::pair<UserId, UserId>> voided;

  Cluster() : Harness(7) {
    on_delivered = [this](uint32_t, uint32_t t, const Record& r) {
      if (r.type != static_cast<uint8_t>(WalRecordType::kRemoveUser)) return;
      const UserId u = DecodeWalRecord(r.type, r.payload)->a;
      std::erase_if(voided, [&](const auto& e) { return e.second == u && ShardOf(e.first) == t; });
    };
  }

  // Whether a removal of `u` decided elsewhere has not been applied by shard `s` yet.
  bool RemovalPending(uint32_t s, UserId u) {
    Collect();
    const uint32_t o = ShardOf(u);
    if (o == s) return false;
    const std::vector<Record>& q = queue[o][s];
    for (size_t i = delivered[o][s]; i < q.size(); ++i) {
      if (q[i].type == static_cast<uint8_t>(WalRecordType::kRemoveUser)) {
        auto op = DecodeWalRecord(q[i].type, q[i].payload);
        if (op.ok() && op->a == u) return true;
      }
    }
    return false;
  }
};

// relation(u, v)'s follow bits from the model.
Relation ModelRelation(const GraphStateModel& m, UserId u, UserId v) {
  const bool out = m.edges.contains({u, v}), in = m.edges.contains({v, u});
  return out && in ? Relation::kMutual
         : out     ? Relation::kFollowing
         : in      ? Relation::kFollowedBy
                   : Relation::kNone;
}

std::set<std::pair<UserId, TimestampMs>> ListOf(const Graph& g, UserId u, bool fans) {
  PageRequest all;
  all.limit = kMaxPageLimit;
  auto page = fans ? g.Fans(u, all) : g.Following(u, all);
  REQUIRE(page.ok());
  std::set<std::pair<UserId, TimestampMs>> out;
  for (const ListEntry& e : page->entries) out.insert({e.user, e.ts});
  return out;
}

// Every shard answers for its users as the model does, and holds exactly their edges.
void CheckAgainst(Cluster& c, const GraphStateModel& model) {
  for (uint32_t s = 0; s < kShards; ++s) {
    REQUIRE_MESSAGE(c.db[s]->CheckInvariants().ok(), c.db[s]->CheckInvariants().ToString());
    GraphStateModel held = c.db[s]->Read([](const Graph& g) { return GraphStateModel::Of(g); });
    std::map<GraphStateModel::Pair, TimestampMs> touching;
    for (const auto& [e, ts] : model.edges) {
      if (ShardOf(e.first) == s || ShardOf(e.second) == s) touching[e] = ts;
    }
    if (held.edges != touching) {
      std::string diff;
      for (const auto& [e, ts] : held.edges)
        if (!touching.contains(e))
          diff += " extra " + std::to_string(e.first) + "->" + std::to_string(e.second) + "@" +
                  std::to_string(ts);
      for (const auto& [e, ts] : touching)
        if (!held.edges.contains(e) || held.edges.at(e) != ts)
          diff += " missing " + std::to_string(e.first) + "->" + std::to_string(e.second) + "@" +
                  std::to_string(ts);
      FAIL("shard " << s << ":" << diff);
    }
    c.db[s]->Read([&](const Graph& g) {
      for (UserId u = 1; u <= kUsers; ++u) {
        if (ShardOf(u) != s) continue;
        std::set<std::pair<UserId, TimestampMs>> following, fans;
        uint32_t friends = 0;
        for (const auto& [e, ts] : model.edges) {
          if (e.first == u) following.insert({e.second, ts});
          if (e.second == u) fans.insert({e.first, ts});
          if (e.first == u && model.edges.contains({e.second, u})) ++friends;
        }
        CHECK(ListOf(g, u, false) == following);
        CHECK(ListOf(g, u, true) == fans);
        auto counts = g.GetCounts(u);
        REQUIRE(counts.ok());
        CHECK(counts->following == following.size());
        CHECK(counts->fans == fans.size());
        CHECK(counts->friends == friends);
        for (UserId v = 1; v <= kUsers; ++v) {
          if (v == u) continue;
          auto r = g.GetRelation(u, v);
          REQUIRE(r.ok());
          CHECK(*r == ModelRelation(model, u, v));
        }
      }
      return 0;
    });
  }
}

TEST_CASE("three shards exchanging their changes answer like one node") {
  Cluster c;
  GraphStateModel model;
  std::mt19937_64& rng = c.rng;
  for (int round = 0; round < 30; ++round) {
    for (int step = 0; step < 60; ++step) {
      c.clock.Advance(1 + static_cast<TimestampMs>(rng() % 5));
      const UserId a = 1 + rng() % kUsers;
      UserId b = 1 + rng() % kUsers;
      if (b == a) b = a % kUsers + 1;
      Db& home = *c.db[ShardOf(a)];
      const uint64_t pick = rng() % 100;
      if (pick < 60) {
        auto r = home.Follow(a, b);
        REQUIRE_MESSAGE(r.ok(), r.status().ToString());
        // A follow of a user whose removal has not reached this shard yet comes before the
        // removal in the cluster's order: the removal, once here, ends it (voided).
        if (r->created) {
          if (c.RemovalPending(ShardOf(a), b)) {
            c.voided.insert({a, b});
          } else {
            model.Follow(a, b, c.clock.NowMs());
          }
        }
      } else if (pick < 95) {
        auto r = home.Unfollow(a, b);
        REQUIRE(r.ok());
        CHECK(*r == (model.edges.contains({a, b}) || c.voided.contains({a, b})));
        model.Unfollow(a, b);
        c.voided.erase({a, b});
      } else {
        REQUIRE(home.RemoveUser(a).ok());
        // Follows of `a` decided on other shards last there until the removal arrives.
        for (const auto& [e, ts] : model.edges) {
          if (e.second == a && ShardOf(e.first) != ShardOf(a)) c.voided.insert(e);
        }
        std::erase_if(c.voided, [&](const auto& e) { return e.first == a; });
        model.RemoveUser(a);
      }
      // Deliveries interleave with the decisions.
      if (rng() % 3 == 0) {
        c.Collect();
        c.DeliverSome(rng() % kShards, rng() % kShards);
      }
    }
    c.Drain();
    CheckAgainst(c, model);
    // Restarts: from the WAL alone, or from a snapshot plus the WAL after it.
    c.Restart(rng() % kShards, /*snapshot=*/round % 3 == 1);
    CheckAgainst(c, model);
  }
}

TEST_CASE("ApplyRemote refuses what shards never send, and keeps what it applied") {
  TestDir dir;
  ManualClock clock;
  auto db = Db::Open(dir.path(), Options(&clock));
  REQUIRE(db.ok());
  const WalPayload follow = EncodeFollowRecord(7, 8, 1'700'000'000'000, 0);
  const WalPayload cursor = EncodeCursorRecord("x", 3, 0);
  Db::ReplicatedRecord records[] = {
      {5, static_cast<uint8_t>(WalRecordType::kFollow), follow.view()},
      {6, static_cast<uint8_t>(WalRecordType::kCursor), cursor.view()}};
  auto r = (*db)->ApplyRemote(2, records);
  CHECK(r.status().code() == Code::kInvalidArgument);
  CHECK(r.status().message().find("type 10") != std::string::npos);
  // The follow before it stays applied, at position 5.
  CHECK((*db)->InboundPosition(2) == 5);
  CHECK((*db)->Read([](const Graph& g) { return g.edge_count(); }) == 1);
  // Out of order, LSN 0, a payload that does not decode: refused, nothing changes.
  Db::ReplicatedRecord backwards[] = {{9, 1, follow.view()}, {8, 1, follow.view()}};
  CHECK((*db)->ApplyRemote(2, backwards).status().code() == Code::kInvalidArgument);
  Db::ReplicatedRecord zero[] = {{0, 1, follow.view()}};
  CHECK((*db)->ApplyRemote(3, zero).status().code() == Code::kInvalidArgument);
  Db::ReplicatedRecord short_payload[] = {{10, 1, follow.view().substr(0, 20)}};
  CHECK((*db)->ApplyRemote(2, short_payload).status().code() == Code::kInvalidArgument);
  CHECK((*db)->InboundPosition(2) == 5);
  CHECK((*db)->InboundPosition(3) == 0);
  // The change stream has no event for a remote record.
  auto reader = (*db)->OpenChanges(1);
  REQUIRE(reader.ok());
  int events = 0;
  auto n = (*reader)->Read(10, [&](const ChangeEvent&) { ++events; });
  REQUIRE(n.ok());
  CHECK(*n == 1);
  CHECK(events == 0);
}

}  // namespace
}  // namespace relgraph
