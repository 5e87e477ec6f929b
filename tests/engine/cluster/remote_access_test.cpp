// Blocks, private accounts and follow requests across cluster shards (docs/cluster.md,
// "Blocks, private accounts and requests"), with three Dbs as shards (cluster_harness.h).
//
// 1. Delivered at once: every change reaches the shards it concerns before the next is made.
//    Then every reply and every shard's state must be what one node gives for the same
//    changes: the decisions a shard makes on its users' behalf must add nothing.
// 2. Crossing: changes are delivered late, in random batches with redeliveries, so that
//    changes about one pair cross on the way (a follow and a block, an approval and a
//    withdrawal, going public and a request, a removal and a block). After everything is
//    delivered, the two shards of each pair must hold the same edges, blocks and requests
//    between them with the same times (and on the way, no shard may break an invariant), each shard the same private marks for the other's
//    users, and each its invariants; a restart from the WAL or a snapshot must give back the
//    same state (what was applied depends only on what the WAL holds).
#include <doctest.h>

#include <map>
#include <random>
#include <string>

#include "engine/db.h"
#include "tests/engine/cluster/cluster_harness.h"
#include "tests/engine/graph_state_model.h"

namespace relgraph {
namespace {

using testing::GraphStateModel;

constexpr uint32_t kShards = 3;
constexpr UserId kUsers = 24;  // few users: pairs meet often
using Cluster = testing::ClusterHarness<kShards>;

uint32_t ShardOf(UserId u) {
  return Cluster::ShardOf(u);
}

// The part of `m` one shard holds: entries touching its users; every private mark.
GraphStateModel Touching(const GraphStateModel& m, uint32_t s) {
  GraphStateModel out;
  auto keep = [&](const auto& from, auto& to) {
    for (const auto& [p, ts] : from) {
      if (ShardOf(p.first) == s || ShardOf(p.second) == s) to[p] = ts;
    }
  };
  keep(m.edges, out.edges);
  keep(m.blocks, out.blocks);
  keep(m.requests, out.requests);
  out.private_users = m.private_users;
  return out;
}

std::string Describe(const GraphStateModel& m) {
  std::string out;
  auto list = [&](const char* what, const auto& from) {
    for (const auto& [p, ts] : from) {
      out += std::string(" ") + what + " " + std::to_string(p.first) + ">" +
             std::to_string(p.second) + "@" + std::to_string(ts);
    }
  };
  list("edge", m.edges);
  list("block", m.blocks);
  list("request", m.requests);
  for (UserId u : m.private_users) out += " private " + std::to_string(u);
  return out;
}

GraphStateModel Held(Db& db) {
  return db.Read([](const Graph& g) { return GraphStateModel::Of(g); });
}

// One random change by `a` about `b`, made on `db`; its outcome as text (to compare replies).
std::string RandomChange(Db& db, UserId a, UserId b, uint64_t pick) {
  auto code = [](const Status& s) { return "error " + std::to_string(static_cast<int>(s.code())); };
  if (pick < 30) {
    auto r = db.Follow(a, b);
    if (!r.ok()) return code(r.status());
    return "follow " + std::to_string(r->created) + " " +
           std::to_string(static_cast<int>(r->relation)) + " " + std::to_string(r->followed_at);
  }
  if (pick < 42) {
    auto r = db.Unfollow(a, b);
    return r.ok() ? "unfollow " + std::to_string(*r) : code(r.status());
  }
  if (pick < 52) {
    auto r = db.Block(a, b);
    if (!r.ok()) return code(r.status());
    return "block " + std::to_string(r->created) + " " + std::to_string(r->ts) + " " +
           std::to_string(BlockRecordFlags(*r));
  }
  if (pick < 60) {
    auto r = db.Unblock(a, b);
    return r.ok() ? "unblock " + std::to_string(*r) : code(r.status());
  }
  if (pick < 72) {
    auto r = db.SetPrivate(a, pick % 2 == 0);
    if (!r.ok()) return code(r.status());
    return "private " + std::to_string(r->changed) + " " + std::to_string(r->approved);
  }
  if (pick < 84) {
    auto r = db.Approve(a, b);
    if (!r.ok()) return code(r.status());
    return "approve " + std::to_string(static_cast<int>(r->relation)) + " " +
           std::to_string(r->followed_at);
  }
  if (pick < 90) {
    auto r = db.Reject(a, b);
    return r.ok() ? "reject " + std::to_string(*r) : code(r.status());
  }
  if (pick < 97) {
    auto r = db.Withdraw(a, b);
    return r.ok() ? "withdraw " + std::to_string(*r) : code(r.status());
  }
  auto r = db.RemoveUser(a);
  return r.ok() ? "remove " + std::to_string(*r) : code(r.status());
}

TEST_CASE("blocks, private accounts and requests delivered at once: shards answer as one node") {
  Cluster c(11);
  testing::TestDir one_dir;
  auto one = Db::Open(one_dir.path(), c.options);
  REQUIRE(one.ok());
  std::mt19937_64 rng(12);
  for (int step = 0; step < 2500; ++step) {
    c.clock.Advance(1);  // every change gets its own time, on every Db alike
    const UserId a = 1 + rng() % kUsers;
    UserId b = 1 + rng() % kUsers;
    if (b == a) b = a % kUsers + 1;
    const uint64_t pick = rng() % 100;
    const std::string got = RandomChange(*c.db[ShardOf(a)], a, b, pick);
    const std::string want = RandomChange(**one, a, b, pick);
    REQUIRE_MESSAGE(got == want, "step " << step << ": " << a << " on " << b);
    c.Drain();
    // Relations (every bit) of a and b, each on its own shard.
    for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
      auto r = c.db[ShardOf(x)]->Read([&](const Graph& g) { return g.GetRelation(x, y); });
      auto w = (*one)->Read([&](const Graph& g) { return g.GetRelation(x, y); });
      REQUIRE(r.ok());
      CHECK_MESSAGE(*r == *w, "relation(" << x << ", " << y << ") at step " << step);
    }
    if (step % 100 != 99) continue;
    const GraphStateModel want_all = Held(**one);
    for (uint32_t s = 0; s < kShards; ++s) {
      REQUIRE_MESSAGE(c.db[s]->CheckInvariants().ok(), c.db[s]->CheckInvariants().ToString());
      const GraphStateModel held = Held(*c.db[s]), expected = Touching(want_all, s);
      const bool same = held.edges == expected.edges && held.blocks == expected.blocks &&
                        held.requests == expected.requests &&
                        held.private_users == expected.private_users;
      CHECK_MESSAGE(same, "shard " << s << " at step " << step << "\n held:" << Describe(held)
                                   << "\n want:" << Describe(expected));
    }
  }
}

// The entries of `from` between a user of shard s and one of shard t.
template <typename Map>
Map Between(const Map& from, uint32_t s, uint32_t t) {
  Map out;
  for (const auto& [p, ts] : from) {
    const uint32_t x = ShardOf(p.first), y = ShardOf(p.second);
    if ((x == s && y == t) || (x == t && y == s)) out[p] = ts;
  }
  return out;
}

void CheckConverged(Cluster& c, int round) {
  GraphStateModel held[kShards];
  for (uint32_t s = 0; s < kShards; ++s) {
    REQUIRE_MESSAGE(c.db[s]->CheckInvariants().ok(), "shard "
                                                         << s << " round " << round << ": "
                                                         << c.db[s]->CheckInvariants().ToString());
    held[s] = Held(*c.db[s]);
    // Only pairs touching its users.
    CHECK(Touching(held[s], s).edges == held[s].edges);
    CHECK(Touching(held[s], s).blocks == held[s].blocks);
    CHECK(Touching(held[s], s).requests == held[s].requests);
  }
  for (uint32_t s = 0; s < kShards; ++s) {
    for (uint32_t t = s + 1; t < kShards; ++t) {
      GraphStateModel at_s, at_t;
      at_s.edges = Between(held[s].edges, s, t);
      at_t.edges = Between(held[t].edges, s, t);
      at_s.blocks = Between(held[s].blocks, s, t);
      at_t.blocks = Between(held[t].blocks, s, t);
      at_s.requests = Between(held[s].requests, s, t);
      at_t.requests = Between(held[t].requests, s, t);
      const bool same =
          at_s.edges == at_t.edges && at_s.blocks == at_t.blocks && at_s.requests == at_t.requests;
      CHECK_MESSAGE(same, "round " << round << ", shards " << s << " and " << t << "\n " << s << ":"
                                   << Describe(at_s) << "\n " << t << ":" << Describe(at_t));
    }
    // Every shard's copies of s's users' private marks are s's.
    for (uint32_t t = 0; t < kShards; ++t) {
      for (UserId u = 1; u <= kUsers; ++u) {
        if (ShardOf(u) != s) continue;
        CHECK_MESSAGE(held[s].private_users.contains(u) == held[t].private_users.contains(u),
                      "round " << round << ": user " << u << "'s private mark on shard " << t);
      }
    }
  }
}

// Rounds of random changes among `users` users, delivered late; after each, the shards must
// have converged, and a restart must give back the same state.
void CrossingRounds(uint64_t seed, UserId users, int rounds) {
  Cluster c(seed);
  std::mt19937_64 rng(seed + 1);
  for (int round = 0; round < rounds; ++round) {
    for (int step = 0; step < 80; ++step) {
      c.clock.Advance(1 + static_cast<TimestampMs>(rng() % 3));
      const UserId a = 1 + rng() % users;
      UserId b = 1 + rng() % users;
      if (b == a) b = a % users + 1;
      RandomChange(*c.db[ShardOf(a)], a, b, rng() % 100);
      if (rng() % 3 == 0) {
        c.Collect();
        const uint32_t t = rng() % kShards;
        c.DeliverSome(rng() % kShards, t);
        // No shard breaks an invariant on the way either: what would (a follow across a
        // block, a request to a public account) is skipped until the decision that ends it.
        REQUIRE_MESSAGE(c.db[t]->CheckInvariants().ok(), c.db[t]->CheckInvariants().ToString());
      }
    }
    c.Drain();
    CheckConverged(c, round);
    const uint32_t s = rng() % kShards;
    const GraphStateModel before = Held(*c.db[s]);
    c.Restart(s, /*snapshot=*/round % 3 == 1);
    const GraphStateModel after = Held(*c.db[s]);
    CHECK_MESSAGE(before.edges == after.edges, "shard " << s << " round " << round);
    CHECK(before.blocks == after.blocks);
    CHECK(before.requests == after.requests);
    CHECK(before.private_users == after.private_users);
  }
}

TEST_CASE("blocks, private accounts and requests crossing on the way: the shards converge") {
  CrossingRounds(21, kUsers, 40);
}

// Six users, two per shard: the same pairs meet again and again, so that a follow on its way
// meets a block and an unblock, an approval meets a withdrawal, a request meets a switch to
// public and back.
TEST_CASE("few users, many crossings: the shards converge") {
  CrossingRounds(31, 6, 150);
}

}  // namespace
}  // namespace relgraph
