// The comparison's Redis and relational designs (tools/bench/designs/) against relgraph's own
// answers: one random graph loaded into a real relgraphd (by FOLLOW), redis-server and
// PostgreSQL (by their bulk loaders), then random batches of follows, unfollows, relation
// checks, pages with viewers, cursor pages, friends pages and counts run on all three, and
// every answer must match field by field. A feed phase follows: posts fanned out, then every
// user's timeline compared. Each server is started by the test on a free loopback port.
#include <doctest.h>

#include <algorithm>
#include <random>
#include <sstream>

#include "tests/storage/test_dir.h"
#include "tests/tools/comparison_servers.h"
#include "tests/tools/relgraphd_process.h"
#include "tools/bench/designs/design.h"

namespace relgraph::bench {
namespace {

constexpr uint32_t kCap = 40;     // a small follow cap, so the loaders must refuse edges too
constexpr uint64_t kUsers = 300;  // few users, so relations and friends are dense
constexpr TimestampMs kT0 = 1'700'000'000'000;

std::string Describe(const Op& op) {
  std::ostringstream s;
  s << "op kind " << static_cast<int>(op.kind) << " user " << op.user << " other " << op.other
    << " viewer " << op.viewer << " ts " << op.ts << " limit " << op.limit;
  return s.str();
}

std::string Entries(const std::vector<Entry>& entries) {
  std::ostringstream s;
  for (const Entry& e : entries) s << "(" << e.id << " " << e.ts << " " << int(e.relation) << ")";
  return s.str();
}

void CheckSame(const Op& op, const Answer& want, const Answer& got, const std::string& design) {
  CAPTURE(design);
  INFO(Describe(op));
  REQUIRE(got.status.code() == want.status.code());
  CHECK(got.changed == want.changed);
  CHECK(got.relations == want.relations);
  INFO("relgraph " << Entries(want.entries) << "\n" << design << " " << Entries(got.entries));
  CHECK(got.entries == want.entries);
  CHECK(got.following == want.following);
  CHECK(got.fans == want.fans);
  CHECK(got.friends == want.friends);
}

// Skewed followees: low ids are popular.
UserId SkewedUser(std::mt19937_64& rng) {
  const double u = std::uniform_real_distribution<double>(0, 1)(rng);
  return 1 + static_cast<UserId>(u * u * u * kUsers) % kUsers;
}
UserId AnyUser(std::mt19937_64& rng) {
  return 1 + rng() % kUsers;
}

TEST_CASE("the Redis and relational designs answer as relgraph does") {
  testing::TestDir dir;
  const std::string log = dir.path() + "/relgraphd.log";
  const pid_t relgraphd =
      Spawn({"--listen=127.0.0.1:0", "--data-dir=" + dir.path() + "/data", "--rate-limit=off",
             "--snapshot-interval-s=0", "--max-following=" + std::to_string(kCap)},
            log);
  net::ClientOptions options;
  options.port = WaitForPort(log, relgraphd);
  testing::RedisServerProcess redis(dir.path() + "/redis");
  testing::PostgresProcess postgres(dir.path() + "/pg");

  std::vector<std::unique_ptr<Design>> designs;
  for (const std::string& target : {std::string("server"), redis.url(), postgres.url()}) {
    auto d = ConnectDesign(target, options, kCap);
    REQUIRE_MESSAGE(d.ok(), target << ": " << d.status().ToString());
    designs.push_back(std::move(*d));
  }
  const uint64_t seed = std::random_device{}();
  CAPTURE(seed);
  std::mt19937_64 rng(seed);

  // The graph: random edges with distinct times, some repeated, some self-follows, and more
  // edges from a few users than the cap allows.
  GeneratedGraph graph;
  TimestampMs now = kT0;
  for (int i = 0; i < 4000; ++i) {
    BenchEdge e{AnyUser(rng), SkewedUser(rng), now += 10};
    if (i % 97 == 0) e.followee = e.follower;
    if (i % 13 == 0 && !graph.edges.empty()) {
      e.follower = graph.edges[rng() % graph.edges.size()].follower;
      e.followee = graph.edges[rng() % graph.edges.size()].followee;
    }
    if (i % 5 == 0) e.follower = 1 + rng() % 4;  // users 1-4 run into the cap
    graph.edges.push_back(e);
  }
  for (size_t i = 0; i < graph.edges.size(); i += 64) {
    std::vector<Op> batch;
    for (size_t k = i; k < std::min(graph.edges.size(), i + 64); ++k) {
      const BenchEdge& e = graph.edges[k];
      batch.push_back(Op{OpKind::kFollow, e.follower, e.followee, 0, e.ts});
    }
    REQUIRE(designs[0]->Execute(batch, nullptr).ok());  // refused edges are error replies
  }
  const KeptGraph kept = KeepEdges(graph, kCap);
  for (size_t d = 1; d < designs.size(); ++d) {
    const Status s = designs[d]->BulkLoad(kept);
    REQUIRE_MESSAGE(s.ok(), designs[d]->name() << ": " << s.ToString());
  }

  // Random batches of graph operations, on all three.
  std::vector<std::vector<UserId>> others_pool(64);
  for (auto& others : others_pool) {
    for (int k = 0; k < 30; ++k) others.push_back(k % 3 ? SkewedUser(rng) : AnyUser(rng));
  }
  uint64_t compared = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<Op> batch;
    const int n = 1 + static_cast<int>(rng() % 24);
    for (int k = 0; k < n; ++k) {
      Op op;
      op.user = AnyUser(rng);
      op.limit = static_cast<uint16_t>(1 + rng() % 30);
      op.viewer = rng() % 4 ? AnyUser(rng) : 0;
      switch (rng() % 9) {
        case 0:
          op.kind = OpKind::kFollow;
          op.other = rng() % 50 ? SkewedUser(rng) : op.user;
          if (rng() % 4 == 0) op.user = 1 + rng() % 4;
          op.ts = now += 10;
          break;
        case 1:
          op.kind = OpKind::kUnfollow;
          op.other = SkewedUser(rng);
          break;
        case 2:
          op.kind = OpKind::kRelation;
          op.other = SkewedUser(rng);
          break;
        case 3:
          op.kind = OpKind::kRelations;
          op.others = others_pool[rng() % others_pool.size()];
          break;
        case 4:
          op.kind = OpKind::kFollowingPage;
          break;
        case 5:
          op.kind = OpKind::kFansPage;
          op.user = SkewedUser(rng);
          if (rng() % 2) {  // a cursor between two follow times (every time is a multiple of 10)
            op.ts = kT0 + 10 * static_cast<TimestampMs>(rng() % ((now - kT0) / 10)) + 5;
            op.cursor_user = AnyUser(rng);
          }
          break;
        case 6:
          op.kind = OpKind::kFriendsPage;
          op.viewer = 0;
          break;
        default:
          op.kind = OpKind::kCounts;
          break;
      }
      batch.push_back(op);
    }
    // The Redis design reads a page's viewer relations in a second round trip, after the whole
    // batch's first: a follow later in the same batch would already show there, as it would to
    // any client pipelining that design. So the writes of a batch go first.
    std::stable_partition(batch.begin(), batch.end(), [](const Op& op) {
      return op.kind == OpKind::kFollow || op.kind == OpKind::kUnfollow;
    });
    std::vector<std::vector<Answer>> answers(designs.size());
    for (size_t d = 0; d < designs.size(); ++d) {
      auto r = designs[d]->Execute(batch, &answers[d]);
      REQUIRE_MESSAGE(r.ok(), designs[d]->name() << ": " << r.status().ToString());
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      for (size_t d = 1; d < designs.size(); ++d) {
        CheckSame(batch[i], answers[0][i], answers[d][i], designs[d]->name());
      }
      ++compared;
    }
  }
  // Every user's counts at the end (the writes above must have kept the counters exact).
  std::vector<Op> counts;
  for (UserId u = 1; u <= kUsers; ++u) counts.push_back(Op{OpKind::kCounts, u});
  std::vector<std::vector<Answer>> final_counts(designs.size());
  for (size_t d = 0; d < designs.size(); ++d) {
    REQUIRE(designs[d]->Execute(counts, &final_counts[d]).ok());
  }
  for (size_t i = 0; i < counts.size(); ++i) {
    for (size_t d = 1; d < designs.size(); ++d) {
      CheckSame(counts[i], final_counts[0][i], final_counts[d][i], designs[d]->name());
    }
  }
  CHECK(compared > 2000);

  // The feed: posts pushed to fans (no follows or unfollows now: the designs as teams run them
  // neither back-fill on follow nor purge on unfollow, which relgraph does), then every
  // user's first timeline page.
  std::vector<Op> posts;
  for (uint64_t p = 0; p < 200; ++p) {
    Op op{OpKind::kPublish, SkewedUser(rng)};
    op.post = 1000 + p;
    op.ts = now += 10;
    posts.push_back(op);
  }
  for (auto& d : designs) REQUIRE(d->Execute(posts, nullptr).ok());
  REQUIRE(designs[0]->WaitIdle().ok());
  std::vector<Op> timelines;
  for (UserId u = 1; u <= kUsers; ++u) {
    Op op{OpKind::kTimeline, u};
    op.limit = 50;
    timelines.push_back(op);
  }
  std::vector<std::vector<Answer>> pages(designs.size());
  for (size_t d = 0; d < designs.size(); ++d) {
    REQUIRE(designs[d]->Execute(timelines, &pages[d]).ok());
  }
  uint64_t entries = 0;
  for (size_t i = 0; i < timelines.size(); ++i) {
    entries += pages[0][i].entries.size();
    for (size_t d = 1; d < designs.size(); ++d) {
      CheckSame(timelines[i], pages[0][i], pages[d][i], designs[d]->name());
    }
  }
  CHECK(entries > 1000);  // the timelines are not trivially empty

  // Memory: each design reports what it holds.
  for (auto& d : designs) {
    auto m = d->Memory();
    REQUIRE(m.ok());
    CHECK(m->bytes > 0);
  }
  designs.clear();
  ::kill(relgraphd, SIGTERM);
  CHECK(WaitExit(relgraphd) == 0);
}

TEST_CASE("a design target that cannot be reached fails with a clear error") {
  net::ClientOptions options;
  options.port = testing::FreeLoopbackPort();
  const std::string port = std::to_string(options.port);
  for (const std::string& target : {std::string("server"), "redis://127.0.0.1:" + port,
                                    "postgres://postgres@127.0.0.1:" + port + "/postgres"}) {
    auto d = ConnectDesign(target, options, kCap);
    REQUIRE_FALSE(d.ok());
    CAPTURE(d.status().ToString());
    CHECK(d.status().message().find(port) != std::string::npos);
  }
  CHECK_FALSE(ConnectDesign("mysql://x", options, kCap).ok());
  CHECK_FALSE(ConnectDesign("redis://127.0.0.1:99999", options, kCap).ok());
}

}  // namespace
}  // namespace relgraph::bench
