// Db's operations in steps (RemoveUser, going public; docs/design.md, "Operations in steps"):
// other writes run between the steps, readers between them see the states docs/access.md
// describes, and the end state equals what the WAL replays (recovery and a replica apply the
// one logged record whole, then the writes logged after it), also after a crash half way.
#include <doctest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "engine/db.h"
#include "engine/graph/clock.h"
#include "storage/env/fault_injection_env.h"
#include "tests/engine/graph_state_model.h"
#include "tests/storage/test_dir.h"

namespace relgraph {
namespace {

using testing::GraphStateModel;
using testing::TestDir;

constexpr UserId kPrivate = 1000;  // a private account with many pending requests
constexpr UserId kStar = 2000;     // a user with many fans
constexpr UserId kUsers = 40;      // ordinary users 1..kUsers

// Runs `between` between the steps of the operation under test, once `armed`.
struct StepHook {
  bool armed = false;
  int calls = 0;
  std::function<void()> between;
};

DbOptions Options(ManualClock* clock, StepHook* hook, Env* env = nullptr) {
  DbOptions o;
  o.env = env;
  o.graph.clock = clock;
  o.graph.rate_limit.enabled = false;
  o.graph.max_following = 200;
  o.feed.celebrity_fans = 10;  // the star crosses the push/pull line as its fans go
  o.feed.posts_per_author = 4;
  o.background_fanout = false;
  o.step_units = 3;
  o.keep_all_wal = true;
  o.between_steps = [hook] {
    if (hook == nullptr || !hook->armed) return;
    ++hook->calls;
    if (hook->between) hook->between();
  };
  return o;
}

// Users 1..kUsers follow each other at random; many of them follow kStar, ask kPrivate, and
// post; a few block each other.
void Populate(Db& db, ManualClock& clock, std::mt19937_64& rng) {
  REQUIRE(db.SetPrivate(kPrivate, true).ok());
  PostId post = 1;
  for (UserId u = 1; u <= kUsers; ++u) {
    clock.Advance(1 + rng() % 3);
    for (int k = 0; k < 6; ++k) db.Follow(u, 1 + rng() % kUsers).status().IgnoreError();
    if (rng() % 4 != 0) REQUIRE(db.Follow(u, kStar).ok());
    if (rng() % 4 != 0) REQUIRE(db.Follow(u, kPrivate).ok());  // a request
    if (rng() % 3 == 0) REQUIRE(db.Publish(u, post++, 0, std::nullopt).ok());
  }
  REQUIRE(db.Follow(kStar, 1).ok());
  REQUIRE(db.Follow(kPrivate, 2).ok());
  REQUIRE(db.Publish(kStar, post++, 0, std::nullopt).ok());
  REQUIRE(db.Publish(kPrivate, post++, 0, std::nullopt).ok());
  for (int k = 0; k < 4; ++k) {
    db.Block(1 + rng() % kUsers, 1 + rng() % kUsers).status().IgnoreError();
  }
  db.DrainFanout();
}

UserId AnyUser(std::mt19937_64& rng) {
  const int r = rng() % 10;
  return r == 0 ? kStar : r == 1 ? kPrivate : 1 + rng() % kUsers;
}

// One random write of any kind but RemoveUser and SetPrivate (they wait for the operation
// running the steps). Refusals are part of the mix.
void RandomWrite(Db& db, ManualClock& clock, std::mt19937_64& rng, PostId* next_post) {
  clock.Advance(rng() % 3);
  const UserId a = AnyUser(rng), b = AnyUser(rng);
  switch (rng() % 9) {
    case 0:
    case 1:
      db.Follow(a, b).status().IgnoreError();
      break;
    case 2:
      db.Unfollow(a, b).status().IgnoreError();
      break;
    case 3:
      db.Block(a, b).status().IgnoreError();
      break;
    case 4:
      db.Unblock(a, b).status().IgnoreError();
      break;
    case 5:
      db.Approve(kPrivate, b).status().IgnoreError();
      break;
    case 6:
      db.Withdraw(a, kPrivate).status().IgnoreError();
      break;
    case 7:
      db.Reject(a, b).status().IgnoreError();
      break;
    default:
      db.Publish(a, (*next_post)++, 0, std::nullopt).status().IgnoreError();
      break;
  }
}

// Everything replay must rebuild: the graph (edges, blocks, requests, private marks, with
// times) and each user's timeline and posts.
struct State {
  GraphStateModel graph;
  std::vector<std::vector<PostId>> timelines;
  bool operator==(const State& o) const {
    return graph.edges == o.graph.edges && graph.blocks == o.graph.blocks &&
           graph.requests == o.graph.requests && graph.private_users == o.graph.private_users &&
           timelines == o.timelines;
  }
};

State StateOf(Db& db) {
  db.DrainFanout();
  State s;
  s.graph = db.Read([](const Graph& g) { return GraphStateModel::Of(g); });
  std::vector<UserId> users = {kStar, kPrivate};
  for (UserId u = 1; u <= kUsers; ++u) users.push_back(u);
  for (UserId u : users) {
    FeedPageRequest q;
    q.limit = 100;
    auto page = db.Timeline(u, q);
    REQUIRE(page.ok());
    std::vector<PostId> ids;
    for (const FeedEntry& e : page->entries) ids.push_back(e.post);
    s.timelines.push_back(ids);
  }
  return s;
}

// Copies every record of `primary` after the replica's newest into `replica`.
Status CatchUp(Db& primary, Db& replica) {
  auto reader = primary.OpenChanges(replica.last_lsn() + 1);
  if (!reader.ok()) return reader.status();
  while (replica.last_lsn() < primary.last_lsn()) {
    std::vector<std::string> payloads;
    std::vector<Db::ReplicatedRecord> records;
    auto n = (*reader)->ReadRecords(64, [&](const WalRecordView& r) {
      payloads.emplace_back(r.payload);
      records.push_back({r.lsn, r.type, {}});
      return Status::OK();
    });
    if (!n.ok()) return n.status();
    for (size_t i = 0; i < records.size(); ++i) records[i].payload = payloads[i];
    if (*n == 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    RELGRAPH_RETURN_IF_ERROR(replica.ApplyReplicated(records));
  }
  return Status::OK();
}

TEST_CASE("db steps: with random writes between the steps, the end state is the WAL's replay") {
  for (int round = 0; round < 24; ++round) {
    CAPTURE(round);
    std::mt19937_64 rng(round);
    TestDir dir, replica_dir;
    ManualClock clock(1'000'000);
    StepHook hook;
    auto db = Db::Open(dir.path(), Options(&clock, &hook));
    REQUIRE(db.ok());
    Db& live = **db;
    Populate(live, clock, rng);
    PostId next_post = 10'000;
    hook.between = [&] {
      for (int k = rng() % 4; k > 0; --k) RandomWrite(live, clock, rng, &next_post);
      const Status invariants = live.CheckInvariants();
      REQUIRE_MESSAGE(invariants.ok(), invariants.ToString());
    };
    hook.armed = true;
    clock.Advance(5);
    switch (round % 4) {
      case 0:
        REQUIRE(live.RemoveUser(kStar).ok());
        break;
      case 1: {
        auto r = live.SetPrivate(kPrivate, false);
        REQUIRE(r.ok());
        REQUIRE(r->changed);
        break;
      }
      case 2:
        REQUIRE(live.RemoveUser(kPrivate).ok());  // it still holds its requests
        break;
      default:
        REQUIRE(live.SetPrivate(kPrivate, false).ok());
        REQUIRE(live.RemoveUser(kStar).ok());
        break;
    }
    hook.armed = false;
    CHECK(hook.calls >= 2);  // it did run in steps
    REQUIRE(live.CheckInvariants().ok());
    const State want = StateOf(live);

    // A replica applies the same records (checked replay: every follow meets no edge, every
    // unfollow its edge).
    auto replica = Db::Open(replica_dir.path(), Options(&clock, nullptr));
    REQUIRE(replica.ok());
    const Status caught = CatchUp(live, **replica);
    REQUIRE_MESSAGE(caught.ok(), caught.ToString());
    CHECK(StateOf(**replica) == want);

    // Recovery replays them too.
    REQUIRE(live.Close().ok());
    db->reset();
    auto reopened = Db::Open(dir.path(), Options(&clock, nullptr));
    REQUIRE(reopened.ok());
    CHECK((*reopened)->recovery().snapshot_file.empty());
    CHECK(StateOf(**reopened) == want);
  }
}

TEST_CASE("db steps: between the steps of a removal the user is gone but for its fans") {
  TestDir dir;
  ManualClock clock(1'000'000);
  StepHook hook;
  auto db = Db::Open(dir.path(), Options(&clock, &hook));
  REQUIRE(db.ok());
  Db& live = **db;
  std::mt19937_64 rng(7);
  Populate(live, clock, rng);
  const uint32_t fans_before = live.Read([](const Graph& g) { return g.GetCounts(kStar); })->fans;
  REQUIRE(fans_before > 9);
  // The fans, newest first (they go in that order).
  std::vector<UserId> fans;
  {
    PageRequest q;
    q.limit = 1000;
    auto page = live.Read([&](const Graph& g) { return g.Fans(kStar, q); });
    for (const ListEntry& e : page->entries) fans.push_back(e.user);
  }
  uint32_t last_fans = fans_before;
  hook.between = [&] {
    const Counts c = *live.Read([](const Graph& g) { return g.GetCounts(kStar); });
    CHECK(c.following == 0);
    CHECK(c.blocks == 0);
    CHECK(c.fans <= last_fans);
    if (hook.calls > 1) CHECK(c.fans < last_fans);
    last_fans = c.fans;
    // The fans left are the oldest ones.
    PageRequest q;
    q.limit = 1000;
    auto page = live.Read([&](const Graph& g) { return g.Fans(kStar, q); });
    REQUIRE(page->entries.size() == c.fans);
    for (size_t i = 0; i < c.fans; ++i)
      CHECK(page->entries[i].user == fans[fans.size() - c.fans + i]);
    // It refuses what would give it edges or posts; a fan's unfollow waits for the removal.
    CHECK(live.Follow(3, kStar).status().code() == Code::kUnavailable);
    CHECK(live.Follow(kStar, 3).status().code() == Code::kUnavailable);
    if (c.fans > 0) {
      CHECK(live.Unfollow(fans.back(), kStar).status().code() == Code::kUnavailable);
    }
    CHECK(live.Block(3, kStar).status().code() == Code::kUnavailable);
    CHECK(live.Publish(kStar, 99'999, 0, std::nullopt).status().code() == Code::kUnavailable);
    CHECK(!*live.Read([](const Graph& g) { return g.IsPrivate(kStar); }));
    // Writes between others go on.
    CHECK(live.Follow(5, 6).ok());
    CHECK(live.CheckInvariants().ok());
  };
  hook.armed = true;
  auto removed = live.RemoveUser(kStar);
  hook.armed = false;
  REQUIRE(removed.ok());
  CHECK(hook.calls >= 3);
  CHECK(last_fans < fans_before);
  CHECK(*removed == fans_before + 1);  // its fans and its one follow
  CHECK(live.Read([](const Graph& g) { return g.GetCounts(kStar); })->fans == 0);
  CHECK(live.Follow(3, kStar).ok());  // a new user of the same id, once the removal is done
}

TEST_CASE("db steps: going public is public at once; requests are approved oldest first") {
  TestDir dir;
  ManualClock clock(1'000'000);
  StepHook hook;
  auto db = Db::Open(dir.path(), Options(&clock, &hook));
  REQUIRE(db.ok());
  Db& live = **db;
  std::mt19937_64 rng(11);
  Populate(live, clock, rng);
  std::vector<UserId> requesters;  // oldest first
  live.Read([&](const Graph& g) {
    g.ForEachRequest([&](UserId t, UserId r, TimestampMs) {
      if (t == kPrivate) requesters.push_back(r);
    });
    return 0;
  });
  REQUIRE(requesters.size() > 9);
  clock.Advance(100);
  const TimestampMs switch_ts = clock.NowMs();
  UserId newcomer = 500;
  bool withdrew = false, followed = false;
  std::vector<UserId> settled;  // approved early by a write that touched them
  hook.between = [&] {
    CHECK(!*live.Read([](const Graph& g) { return g.IsPrivate(kPrivate); }));
    // The requests left are the newest ones.
    std::vector<UserId> left;
    live.Read([&](const Graph& g) {
      g.ForEachRequest([&](UserId t, UserId r, TimestampMs) {
        if (t == kPrivate) left.push_back(r);
      });
      return 0;
    });
    std::vector<UserId> expect;
    for (UserId u : requesters) {
      if (std::find(settled.begin(), settled.end(), u) == settled.end()) expect.push_back(u);
    }
    REQUIRE(left.size() <= expect.size());
    CHECK(std::equal(left.begin(), left.end(), expect.end() - left.size()));
    clock.Advance(1);
    // A new follow is an edge at once.
    auto f = live.Follow(newcomer, kPrivate);
    REQUIRE(f.ok());
    CHECK(f->created);
    CHECK(!Has(f->relation, Relation::kRequested));
    ++newcomer;
    // A write touching a pending request meets it approved at the switch's time.
    if (left.size() >= 2 && !withdrew) {
      withdrew = true;
      settled.push_back(left.back());
      auto w = live.Withdraw(left.back(), kPrivate);
      REQUIRE(w.ok());
      CHECK(!*w);
      CHECK(live.Read([&](const Graph& g) { return g.HasEdge(left.back(), kPrivate); }));
    } else if (left.size() >= 2 && !followed) {
      followed = true;
      settled.push_back(left[left.size() - 2]);
      auto again = live.Follow(left[left.size() - 2], kPrivate);
      REQUIRE(again.ok());
      CHECK(!again->created);
      CHECK(again->followed_at == switch_ts);
    }
    CHECK(live.CheckInvariants().ok());
  };
  hook.armed = true;
  auto r = live.SetPrivate(kPrivate, false);
  hook.armed = false;
  REQUIRE(r.ok());
  CHECK(hook.calls >= 3);
  CHECK(withdrew);
  CHECK(followed);
  // Every request pending at the switch is an edge at its time.
  for (UserId u : requesters) {
    CAPTURE(u);
    auto rel = live.Read([&](const Graph& g) { return g.GetRelation(u, kPrivate); });
    CHECK(Has(*rel, Relation::kFollowing));
  }
  CHECK(live.Read([](const Graph& g) { return g.GetCounts(kPrivate); })->requests == 0);
}

TEST_CASE(
    "db steps: a crash half way through recovers the whole operation and the writes between") {
  for (int round = 0; round < 6; ++round) {
    CAPTURE(round);
    TestDir dir;
    FaultInjectionEnv env(Env::Posix());
    ManualClock clock(1'000'000);
    StepHook hook;
    DbOptions o = Options(&clock, &hook, &env);
    o.durability = DurabilityMode::kAlways;
    auto db = Db::Open(dir.path(), o);
    REQUIRE(db.ok());
    Db& live = **db;
    std::mt19937_64 rng(100 + round);
    Populate(live, clock, rng);
    PostId next_post = 10'000;
    const int crash_at = 2 + round;
    hook.between = [&] {
      if (hook.calls < crash_at) {
        RandomWrite(live, clock, rng, &next_post);  // acknowledged: fsynced under `always`
      } else if (hook.calls == crash_at) {
        env.SimulateCrash();  // the steps after it run in memory only
      }
    };
    hook.armed = true;
    if (round % 2 == 0) {
      REQUIRE(live.RemoveUser(kStar).ok());
    } else {
      REQUIRE(live.SetPrivate(kPrivate, false).ok());
    }
    hook.armed = false;
    REQUIRE(hook.calls > crash_at);
    // The operation finished in memory: that is the state the WAL must give back.
    const State want = StateOf(live);
    db->reset();
    env.Revive();
    auto reopened = Db::Open(dir.path(), Options(&clock, nullptr, &env));
    REQUIRE_MESSAGE(reopened.ok(), reopened.status().ToString());
    CHECK(StateOf(**reopened) == want);
    CHECK((*reopened)->CheckInvariants().ok());
  }
}

TEST_CASE("db steps: a snapshot waits for an operation in steps, so its image is never half done") {
  TestDir dir;
  ManualClock clock(1'000'000);
  StepHook hook;
  auto db = Db::Open(dir.path(), Options(&clock, &hook));
  REQUIRE(db.ok());
  Db& live = **db;
  std::mt19937_64 rng(3);
  Populate(live, clock, rng);
  std::thread snapshotter;
  Status snapshot_status;
  hook.between = [&] {
    if (hook.calls == 1)
      snapshotter = std::thread([&] { snapshot_status = live.Snapshot().status(); });
    // Room for the snapshot to fix its image now, were it allowed to.
    if (hook.calls <= 3) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  };
  hook.armed = true;
  REQUIRE(live.RemoveUser(kStar).ok());
  hook.armed = false;
  REQUIRE(snapshotter.joinable());
  snapshotter.join();
  REQUIRE_MESSAGE(snapshot_status.ok(), snapshot_status.ToString());
  const State want = StateOf(live);
  REQUIRE(live.Close().ok());
  db->reset();
  auto reopened = Db::Open(dir.path(), Options(&clock, nullptr));
  REQUIRE(reopened.ok());
  CHECK(!(*reopened)->recovery().snapshot_file.empty());
  CHECK(StateOf(**reopened) == want);
}

}  // namespace
}  // namespace relgraph
