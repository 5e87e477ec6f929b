// Db: recovery after close and after simulated crashes, durability modes, failure handling.
#include <doctest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <tuple>
#include <vector>

#include "engine/db.h"
#include "engine/graph/clock.h"
#include "storage/env/fault_injection_env.h"
#include "storage/env/file_names.h"
#include "storage/wal/wal_reader.h"
#include "tests/storage/test_dir.h"

namespace relgraph {
namespace {

using testing::TestDir;
using Edge = std::tuple<UserId, UserId, TimestampMs>;

std::vector<Edge> Edges(const Graph& g) {
  std::vector<Edge> v;
  g.ForEachEdge([&](UserId a, UserId b, TimestampMs ts) { v.emplace_back(a, b, ts); });
  std::sort(v.begin(), v.end());
  return v;
}

// Applies logged operations to a plain edge set: the reference for "state at LSN n".
struct Op {
  int kind;  // 0 follow, 1 unfollow, 2 remove_user
  UserId a, b;
  TimestampMs ts;
};
std::vector<Edge> Replay(const std::vector<Op>& ops, size_t n) {
  std::map<std::pair<UserId, UserId>, TimestampMs> e;
  for (size_t i = 0; i < n; ++i) {
    const Op& op = ops[i];
    if (op.kind == 0) e[{op.a, op.b}] = op.ts;
    if (op.kind == 1) e.erase({op.a, op.b});
    if (op.kind == 2)
      std::erase_if(
          e, [&](const auto& kv) { return kv.first.first == op.a || kv.first.second == op.a; });
  }
  std::vector<Edge> v;
  for (const auto& [k, ts] : e) v.emplace_back(k.first, k.second, ts);
  return v;
}

struct Driver {
  explicit Driver(uint64_t seed) : rng(seed) {}
  // One random mutation; appends it to `logged` when it changed the graph (got an LSN).
  Status Step(Db& db) {
    clock.Advance(1 + rng() % 50);
    const UserId a = 1 + rng() % 30, b = 1 + rng() % 30;
    const uint64_t before = db.last_lsn();
    const int dice = rng() % 100;
    Status st;
    if (dice < 60) {
      auto r = db.Follow(a, b);
      st = r.status();
      if (r.ok() && r->created) logged.push_back({0, a, b, r->followed_at});
    } else if (dice < 95) {
      auto r = db.Unfollow(a, b);
      st = r.status();
      if (r.ok() && *r) logged.push_back({1, a, b, 0});
    } else {
      auto r = db.RemoveUser(a);
      st = r.status();
      if (r.ok()) logged.push_back({2, a, 0, 0});
    }
    if (st.ok()) {
      if (!db.dir().empty()) REQUIRE(db.last_lsn() == before + (logged.size() > acked ? 1 : 0));
      acked = logged.size();
    }
    return st.code() == Code::kSelfFollow ? Status::OK() : st;
  }
  DbOptions Options(Env* env, DurabilityMode mode) {
    DbOptions o;
    o.env = env;
    o.durability = mode;
    o.graph.clock = &clock;
    o.graph.rate_limit.enabled = false;
    o.graph.time_resolution_ms = time_unit_ms;
    o.wal_segment_bytes = 2048;
    return o;
  }
  uint32_t time_unit_ms = 1;
  std::mt19937_64 rng;
  ManualClock clock;
  std::vector<Op> logged;  // in LSN order: logged[i] has LSN i + 1
  size_t acked = 0;
};

// Cuts the power under `db` (its process is gone), then opens its directory again.
std::unique_ptr<Db> CrashAndReopen(std::unique_ptr<Db>& db, FaultInjectionEnv& env, Driver& d,
                                   const std::string& dir) {
  env.SimulateCrash();
  db.reset();
  env.Revive();
  auto reopened = Db::Open(dir, d.Options(&env, DurabilityMode::kAlways));
  REQUIRE_MESSAGE(reopened.ok(), reopened.status().ToString());
  return std::move(*reopened);
}

TEST_CASE("db: state survives close and reopen in every durability mode") {
  for (DurabilityMode mode :
       {DurabilityMode::kAlways, DurabilityMode::kEverySec, DurabilityMode::kNone}) {
    TestDir dir;
    Driver d(1);
    std::vector<Edge> before;
    {
      auto db = Db::Open(dir.path(), d.Options(Env::Posix(), mode));
      REQUIRE(db.ok());
      for (int i = 0; i < 2000; ++i) REQUIRE((d.Step(**db)).ok());
      before = (*db)->Read([](const Graph& g) { return Edges(g); });
      REQUIRE((*db)->Close().ok());
    }
    CHECK(before == Replay(d.logged, d.logged.size()));
    auto db = Db::Open(dir.path(), d.Options(Env::Posix(), mode));
    REQUIRE_MESSAGE(db.ok(), db.status().ToString());
    CHECK((*db)->Read([](const Graph& g) { return Edges(g); }) == before);
    CHECK((*db)->recovery().last_lsn == d.logged.size());
    CHECK((*db)->Read([](const Graph& g) { return g.CheckInvariants(); }).ok());
    // Writing continues after the recovered LSN.
    REQUIRE((*db)->Follow(1000, 1001).ok());
    CHECK((*db)->last_lsn() == d.logged.size() + 1);
  }
}

TEST_CASE("db: times kept in whole seconds survive the WAL and snapshots; a node at 1 ms refuses them") {
  TestDir dir;
  Driver d(7);
  d.time_unit_ms = 1000;
  d.clock.Advance(1'700'000'000'000);
  // Either refusal is unsupported and names the flag at 1 s (to start with, or the node's).
  auto require_refused = [](const Result<std::unique_ptr<Db>>& opened) {
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.status().code() == Code::kUnsupported);
    CHECK_MESSAGE(opened.status().message().find("--follow-time-resolution=1s") !=
                      std::string::npos,
                  opened.status().message());
  };
  std::vector<Edge> before;
  {
    auto db = Db::Open(dir.path(), d.Options(Env::Posix(), DurabilityMode::kAlways));
    REQUIRE(db.ok());
    for (int i = 0; i < 3000; ++i) {
      const TimestampMs now = d.clock.NowMs() + 1 + 49;  // Step advances by 1..50 ms
      const size_t logged = d.logged.size();
      REQUIRE(d.Step(**db).ok());
      if (d.logged.size() > logged && d.logged.back().kind == 0) {
        REQUIRE(d.logged.back().ts % 1000 == 0);  // the answer is in whole seconds
        REQUIRE(d.logged.back().ts > now - 1050);
      }
      if (i == 1500) REQUIRE((*db)->Snapshot().ok());
    }
    // A caller's time between two seconds is kept as the second below it.
    auto r = (*db)->FollowAt(40, 41, 1'600'000'000'999);
    REQUIRE(r.ok());
    CHECK(r->followed_at == 1'600'000'000'000);
    d.logged.push_back({0, 40, 41, r->followed_at});
    before = (*db)->Read([](const Graph& g) { return Edges(g); });
    REQUIRE((*db)->Close().ok());
  }
  CHECK(before == Replay(d.logged, d.logged.size()));
  {
    auto db = Db::Open(dir.path(), d.Options(Env::Posix(), DurabilityMode::kAlways));
    REQUIRE_MESSAGE(db.ok(), db.status().ToString());
    CHECK((*db)->Read([](const Graph& g) { return Edges(g); }) == before);
    CHECK((*db)->Read([](const Graph& g) { return g.CheckInvariants(); }).ok());
    REQUIRE((*db)->Snapshot().ok());
    REQUIRE((*db)->Close().ok());
  }
  {  // and the other way: a WAL written at 1 ms, met by a node at 1 s, is refused, not rounded
    TestDir exact_dir;
    Driver w(9);
    w.clock.Advance(1'700'000'000'123);
    {
      auto db = Db::Open(exact_dir.path(), w.Options(Env::Posix(), DurabilityMode::kAlways));
      REQUIRE(db.ok());
      for (int i = 0; i < 200; ++i) REQUIRE(w.Step(**db).ok());
      REQUIRE((*db)->Close().ok());
    }
    require_refused(Db::Open(exact_dir.path(), d.Options(Env::Posix(), DurabilityMode::kAlways)));
  }
  Driver exact(8);
  require_refused(Db::Open(dir.path(), exact.Options(Env::Posix(), DurabilityMode::kAlways)));
}

TEST_CASE("db: after a crash in `always` mode every acknowledged write is there (many cycles)") {
  TestDir dir;
  FaultInjectionEnv env(Env::Posix());
  Driver d(2);
  std::mt19937 rng(5);
  for (int cycle = 0; cycle < 40; ++cycle) {
    CAPTURE(cycle);
    auto db = Db::Open(dir.path(), d.Options(&env, DurabilityMode::kAlways));
    REQUIRE_MESSAGE(db.ok(), db.status().ToString());
    const uint64_t recovered = (*db)->recovery().last_lsn;
    REQUIRE(recovered >= d.acked);  // nothing acknowledged is lost
    REQUIRE(recovered <= d.logged.size());
    d.logged.resize(recovered);  // the state is exactly "ops up to recovered"
    d.acked = recovered;
    REQUIRE((*db)->Read([](const Graph& g) { return Edges(g); }) == Replay(d.logged, recovered));
    const int steps = 1 + rng() % 80;
    for (int i = 0; i < steps; ++i) REQUIRE(d.Step(**db).ok());
    env.SimulateCrash();  // power cut: the process is gone
    db->reset();
    env.Revive();
  }
}

TEST_CASE("db: a one-off failed write or fsync is retried: the write waits, then is acknowledged") {
  for (int which = 0; which < 2; ++which) {
    CAPTURE(which);
    TestDir dir;
    FaultInjectionEnv env(Env::Posix());
    Driver d(3);
    auto db = Db::Open(dir.path(), d.Options(&env, DurabilityMode::kAlways));
    REQUIRE(db.ok());
    for (int i = 0; i < 50; ++i) REQUIRE(d.Step(**db).ok());
    if (which == 0) env.FailNthWrite(1);
    if (which == 1) env.FailNthSync(1);
    // Its flush fails; the WAL's retry cuts the tail back, writes the record again and fsyncs.
    auto r = (*db)->Follow(500, 501);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    d.logged.push_back({0, 500, 501, r->followed_at});
    d.acked = d.logged.size();
    CHECK((*db)->WalHealth().ok());
    for (int i = 0; i < 20; ++i) REQUIRE(d.Step(**db).ok());  // writes go on
    // A clean close and a power cut alike keep exactly what was acknowledged.
    REQUIRE((*db)->Close().ok());
    auto reopened = CrashAndReopen(*db, env, d, dir.path());
    CHECK(reopened->Read([](const Graph& g) { return g.GetRelation(500, 501).value(); }) ==
          Relation::kFollowing);
    CHECK(reopened->Read([](const Graph& g) { return Edges(g); }) ==
          Replay(d.logged, d.logged.size()));
  }
}

// A full disk under `always`, as a server sees it: a write that was applied and appended when
// the disk filled waits (commit_lsn, as the server's durability thread does); new writes are
// refused before they change anything; space again resumes both by itself. Or the Db closes
// while the disk is still full.
TEST_CASE("db: a full disk refuses writes until there is space; no refused write ever appears") {
  for (const bool close_while_full : {false, true}) {
    CAPTURE(close_while_full);
    TestDir dir;
    FaultInjectionEnv env(Env::Posix());
    Driver d(13);
    DbOptions options = d.Options(&env, DurabilityMode::kAlways);
    options.wal_retry_max = std::chrono::milliseconds(20);
    std::mutex events_mu;
    std::vector<WalEvent> events;
    options.on_wal_event = [&](const WalEvent& e) {
      std::lock_guard lock(events_mu);
      events.push_back(e);
    };
    auto db = Db::Open(dir.path(), options);
    REQUIRE(db.ok());
    for (int i = 0; i < 100; ++i) REQUIRE(d.Step(**db).ok());
    env.SetDiskSpace(40);  // the next record is torn half way
    uint64_t held = 0;
    auto r = (*db)->Follow(500, 501, &held);
    REQUIRE(r.ok());
    REQUIRE(held == d.logged.size() + 1);
    Status waited(Code::kInternal, "not returned");
    std::thread waiter([&] { waited = (*db)->WaitDurable(held); });
    while ((*db)->WalHealth().ok()) std::this_thread::yield();
    CHECK(IsNoSpace((*db)->WalHealth()));

    auto refused = (*db)->Follow(600, 601);
    CHECK(refused.status().code() == Code::kUnavailable);
    CHECK(refused.status().message().find("writes refused") != std::string::npos);
    CHECK(refused.status().message().find("WAL segment") != std::string::npos);
    CHECK(refused.status().message().find("No space left on device") != std::string::npos);
    std::vector<Db::BatchWriteResult> results(1);
    const std::vector<Db::BatchWrite> batch = {{Db::BatchWrite::Kind::kFollow, 700, 701, {}}};
    (*db)->WriteBatch(batch, results);
    CHECK(results[0].status.code() == Code::kUnavailable);
    CHECK((*db)->Publish(600, 9, 0, std::nullopt).status().code() == Code::kUnavailable);
    // Refused before anything changed; reads go on (and see the held write).
    auto relation = [&](Db& x, UserId a, UserId b) {
      return x.Read([&](const Graph& g) { return g.GetRelation(a, b).value(); });
    };
    CHECK(relation(**db, 600, 601) == Relation::kNone);
    CHECK(relation(**db, 700, 701) == Relation::kNone);
    CHECK(relation(**db, 500, 501) == Relation::kFollowing);

    if (!close_while_full) {
      env.SetDiskSpace(0);
      waiter.join();  // the retry wrote the held record again, then it was acknowledged
      CHECK_MESSAGE(waited.ok(), waited.ToString());
      d.logged.push_back({0, 500, 501, r->followed_at});
      d.acked = d.logged.size();
      CHECK((*db)->WalHealth().ok());
      for (int i = 0; i < 50; ++i) REQUIRE(d.Step(**db).ok());  // writes resume
      {
        std::lock_guard lock(events_mu);
        REQUIRE(events.size() == 2);
        CHECK(events[0].kind == WalEvent::Kind::kStalled);
        CHECK(events[0].message.find("No space left on device") != std::string::npos);
        CHECK(events[1].kind == WalEvent::Kind::kResumed);
      }
      REQUIRE((*db)->Close().ok());
    } else {
      // A clean stop while still full: the held write was never acknowledged, so it is
      // refused and its torn record cut off; nothing acknowledged is lost.
      const Status closed = (*db)->Close();
      CHECK_MESSAGE(closed.ok(), closed.ToString());
      waiter.join();
      CHECK(waited.code() == Code::kUnavailable);
      std::lock_guard lock(events_mu);
      REQUIRE_FALSE(events.empty());
      CHECK(events.back().kind == WalEvent::Kind::kClosedStalled);
      env.SetDiskSpace(0);
    }
    db->reset();
    auto reopened = Db::Open(dir.path(), d.Options(&env, DurabilityMode::kAlways));
    REQUIRE_MESSAGE(reopened.ok(), reopened.status().ToString());
    CHECK((*reopened)->recovery().torn_bytes == 0);
    CHECK((*reopened)->recovery().last_lsn == d.acked);
    CHECK((*reopened)->Read([](const Graph& g) { return Edges(g); }) == Replay(d.logged, d.acked));
    CHECK(relation(**reopened, 600, 601) == Relation::kNone);
    CHECK(relation(**reopened, 700, 701) == Relation::kNone);
    CHECK((*reopened)->Read([](const Graph& g) { return g.CheckInvariants(); }).ok());
  }
}

// Writes for a batch: follows at the engine's time or the caller's (some out of range),
// unfollows, ids of 0 and self-follows among 12 users, so that with a cap of 6 and the rate
// limiter on, every outcome a follow can have comes up.
std::vector<Db::BatchWrite> RandomWrites(std::mt19937_64& rng, size_t n) {
  std::vector<Db::BatchWrite> writes(n);
  for (Db::BatchWrite& w : writes) {
    w.a = rng() % 12;
    w.b = rng() % 12;
    w.kind = rng() % 3 == 0 ? Db::BatchWrite::Kind::kUnfollow : Db::BatchWrite::Kind::kFollow;
    if (w.kind == Db::BatchWrite::Kind::kFollow && rng() % 3 == 0) {
      w.ts = rng() % 40 == 0 ? kMaxTimestampMs + 1 : static_cast<TimestampMs>(rng() % 1'000'000);
    }
  }
  return writes;
}

// What Follow, FollowAt or Unfollow gives for `w` run alone.
Db::BatchWriteResult RunAlone(Db& db, const Db::BatchWrite& w) {
  Db::BatchWriteResult r;
  if (w.kind == Db::BatchWrite::Kind::kUnfollow) {
    auto got = db.Unfollow(w.a, w.b);
    r.status = got.status();
    if (got.ok()) r.removed = *got;
  } else {
    auto got = w.ts ? db.FollowAt(w.a, w.b, *w.ts) : db.Follow(w.a, w.b);
    r.status = got.status();
    if (got.ok()) r.follow = *got;
  }
  return r;
}

void CheckSameResult(const Db::BatchWriteResult& batched, const Db::BatchWriteResult& alone) {
  CHECK(batched.status.code() == alone.status.code());
  CHECK(batched.status.message() == alone.status.message());
  CHECK(batched.status.retry_after_ms() == alone.status.retry_after_ms());
  CHECK(batched.removed == alone.removed);
  CHECK(batched.follow.created == alone.follow.created);
  CHECK(batched.follow.relation == alone.follow.relation);
  CHECK(batched.follow.followed_at == alone.follow.followed_at);
}

TEST_CASE("db: WriteBatch answers as the same writes run one by one, and recovers to that graph") {
  for (DurabilityMode mode : {DurabilityMode::kAlways, DurabilityMode::kEverySec}) {
    TestDir dir;
    ManualClock batched_clock, alone_clock;
    DbOptions options;
    options.durability = mode;
    options.graph.max_following = 6;
    options.graph.rate_limit.capacity = 3;  // bursts in a batch run out of tokens
    options.graph.rate_limit.refill_per_second = 20;
    options.graph.clock = &batched_clock;
    auto batched = Db::Open(dir.path(), options);
    REQUIRE(batched.ok());
    options.graph.clock = &alone_clock;
    auto alone = Db::Open("", options);
    REQUIRE(alone.ok());
    const uint64_t seed = std::random_device{}();
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    std::map<Code, int> seen;
    for (int round = 0; round < 200; ++round) {
      const TimestampMs step = static_cast<TimestampMs>(rng() % 400);
      batched_clock.Advance(step);
      alone_clock.Advance(step);
      const auto writes = RandomWrites(rng, rng() % 80);
      std::vector<Db::BatchWriteResult> results(writes.size());
      uint64_t commit = 0;
      const uint64_t before = (*batched)->last_lsn();
      (*batched)->WriteBatch(writes, results, &commit);
      if (commit != 0) REQUIRE((*batched)->WaitDurable(commit).ok());
      uint64_t logged = 0;
      for (size_t i = 0; i < writes.size(); ++i) {
        CAPTURE(i);
        const Db::BatchWriteResult want = RunAlone(**alone, writes[i]);
        CheckSameResult(results[i], want);
        ++seen[want.status.code()];
        logged += want.status.ok() && (want.follow.created || want.removed);
      }
      CHECK((*batched)->last_lsn() == before + logged);  // one record per change, in order
      // Under `always` the batch's last record is what the caller waits for.
      const bool waits = mode == DurabilityMode::kAlways && logged > 0;
      CHECK(commit == (waits ? (*batched)->last_lsn() : 0));
    }
    for (Code code : {Code::kOk, Code::kInvalidUserId, Code::kSelfFollow, Code::kFollowLimit,
                      Code::kRateLimited, Code::kInvalidArgument}) {
      CHECK_MESSAGE(seen[code] > 0, "no write came out " << CodeName(code));
    }
    const auto digest = [](Db& db) { return db.Read([](const Graph& g) { return g.Digest(); }); };
    CHECK(digest(**batched) == digest(**alone));
    CHECK((*batched)->Read([](const Graph& g) { return g.CheckInvariants(); }).ok());
    REQUIRE((*batched)->Close().ok());
    batched->reset();
    options.graph.clock = &batched_clock;
    auto reopened = Db::Open(dir.path(), options);
    REQUIRE(reopened.ok());
    CHECK(digest(**reopened) == digest(**alone));
  }
}

TEST_CASE("db: a failed fsync under a batch is retried: its logged writes wait, then succeed") {
  TestDir dir;
  FaultInjectionEnv env(Env::Posix());
  Driver d(9);
  auto db = Db::Open(dir.path(), d.Options(&env, DurabilityMode::kAlways));
  REQUIRE(db.ok());
  for (int i = 0; i < 50; ++i) REQUIRE(d.Step(**db).ok());
  REQUIRE((*db)->Follow(40, 41).ok());
  env.FailNthSync(1);
  using Kind = Db::BatchWrite::Kind;
  const std::vector<Db::BatchWrite> writes = {
      {Kind::kFollow, 500, 501, std::nullopt},  // a change: its fsync fails, the retry's works
      {Kind::kFollow, 40, 41, std::nullopt},    // already there: nothing to log, answered
      {Kind::kFollow, 7, 7, std::nullopt},      // refused before logging
      {Kind::kUnfollow, 40, 41, std::nullopt},  // a change
  };
  std::vector<Db::BatchWriteResult> results(writes.size());
  (*db)->WriteBatch(writes, results);  // no commit_lsn: it waits for the fsync itself
  CHECK(results[0].status.ok());
  CHECK(results[0].follow.created);
  CHECK(results[1].status.ok());
  CHECK_FALSE(results[1].follow.created);
  CHECK(results[2].status.code() == Code::kSelfFollow);
  CHECK(results[3].status.ok());
  CHECK(results[3].removed);
  auto reopened = CrashAndReopen(*db, env, d, dir.path());
  CHECK(reopened->Read([](const Graph& g) { return g.GetRelation(500, 501).value(); }) ==
        Relation::kFollowing);
  CHECK(reopened->Read([](const Graph& g) { return g.GetRelation(40, 41).value(); }) ==
        Relation::kNone);
}

TEST_CASE("db: past max_users publish and mute refuse new users; a larger snapshot is refused") {
  TestDir dir;
  DbOptions options;
  options.graph.rate_limit.enabled = false;
  {
    auto db = Db::Open(dir.path(), options);
    REQUIRE(db.ok());
    for (UserId u = 1; u <= 9; ++u) REQUIRE((*db)->Follow(u, u + 1).ok());  // 10 users
    REQUIRE((*db)->Snapshot().ok());
  }
  options.graph.max_users = 10;
  {
    auto db = Db::Open(dir.path(), options);
    REQUIRE_MESSAGE(db.ok(), db.status().ToString());
    const uint64_t lsn = (*db)->last_lsn();
    CHECK((*db)->Publish(11, 1, 0, std::nullopt).status().code() == Code::kResourceExhausted);
    CHECK((*db)->Mute(1, 12, true).status().code() == Code::kResourceExhausted);
    CHECK((*db)->Follow(1, 13).status().code() == Code::kResourceExhausted);
    CHECK((*db)->last_lsn() == lsn);  // nothing refused was logged
    CHECK((*db)->Publish(1, 1, 0, std::nullopt).ok());
    CHECK((*db)->Mute(1, 2, true).ok());
  }
  options.graph.max_users = 9;
  auto refused = Db::Open(dir.path(), options);
  CHECK(refused.status().code() == Code::kResourceExhausted);
  CHECK(refused.status().message().find("max_users 9") != std::string::npos);
  CHECK(refused.status().message().find("the snapshot holds 10 users") != std::string::npos);
}

TEST_CASE("db: a data directory in use is refused until its Db is gone") {
  TestDir dir;
  Driver d(12);
  auto first = Db::Open(dir.path(), d.Options(Env::Posix(), DurabilityMode::kNone));
  REQUIRE(first.ok());
  auto second = Db::Open(dir.path(), d.Options(Env::Posix(), DurabilityMode::kNone));
  CHECK(second.status().code() == Code::kUnavailable);
  CHECK(second.status().message().find("in use") != std::string::npos);
  first->reset();
  CHECK(Db::Open(dir.path(), d.Options(Env::Posix(), DurabilityMode::kNone)).ok());
}

TEST_CASE("db: without a directory the Db is in memory only") {
  Driver d(4);
  auto db = Db::Open("", d.Options(nullptr, DurabilityMode::kAlways));
  REQUIRE(db.ok());
  for (int i = 0; i < 100; ++i) REQUIRE(d.Step(**db).ok());
  CHECK((*db)->last_lsn() == 0);
  CHECK((*db)->Read([](const Graph& g) { return Edges(g); }) == Replay(d.logged, d.logged.size()));
}

TEST_CASE("db: a WAL that does not start at LSN 1 without a snapshot fails to open, by name") {
  TestDir dir;
  Driver d(5);
  {
    auto db = Db::Open(dir.path(), d.Options(Env::Posix(), DurabilityMode::kAlways));
    REQUIRE(db.ok());
    for (int i = 0; i < 500; ++i) REQUIRE(d.Step(**db).ok());
  }
  REQUIRE(ListWalSegments(Env::Posix(), dir.path())->size() > 2);
  REQUIRE(Env::Posix()->RemoveFile(JoinPath(dir.path(), WalSegmentName(1))).ok());
  auto db = Db::Open(dir.path(), d.Options(Env::Posix(), DurabilityMode::kNone));
  CHECK(db.status().code() == Code::kCorruption);
  CHECK(db.status().message().find("starts at LSN") != std::string::npos);
}

TEST_CASE("db: a snapshot plus the WAL after it restores the state; only the tail is replayed") {
  TestDir dir;
  Driver d(6);
  std::vector<Edge> final_edges;
  uint64_t snap_lsn = 0;
  {
    auto db = Db::Open(dir.path(), d.Options(Env::Posix(), DurabilityMode::kEverySec));
    REQUIRE(db.ok());
    for (int i = 0; i < 1500; ++i) REQUIRE(d.Step(**db).ok());
    auto info = (*db)->Snapshot();
    REQUIRE_MESSAGE(info.ok(), info.status().ToString());
    snap_lsn = info->lsn;
    CHECK(snap_lsn == d.logged.size());
    for (int i = 0; i < 300; ++i) REQUIRE(d.Step(**db).ok());
    final_edges = (*db)->Read([](const Graph& g) { return Edges(g); });
  }
  auto db = Db::Open(dir.path(), d.Options(Env::Posix(), DurabilityMode::kEverySec));
  REQUIRE_MESSAGE(db.ok(), db.status().ToString());
  CHECK((*db)->recovery().snapshot_lsn == snap_lsn);
  CHECK((*db)->recovery().replayed_records == d.logged.size() - snap_lsn);
  CHECK((*db)->Read([](const Graph& g) { return Edges(g); }) == final_edges);
  CHECK((*db)->Read([](const Graph& g) { return g.CheckInvariants(); }).ok());
}

// Writers also block, unblock, go private and public, approve and withdraw: the snapshot's
// access records are copied after its image, and replay must still reach the exact state.
TEST_CASE("db: an online snapshot taken while writers run, plus replay, gives the exact state") {
  TestDir dir;
  DbOptions o;
  o.durability = DurabilityMode::kNone;
  o.graph.rate_limit.enabled = false;
  o.snapshot_slice_users = 7;  // many slices, so writes land between them
  std::vector<Edge> final_edges;
  uint64_t final_digest = 0;
  size_t access = 0;
  {
    auto db = Db::Open(dir.path(), o);
    REQUIRE(db.ok());
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> ops{0};
    std::vector<std::thread> writers;
    for (int t = 0; t < 3; ++t) {
      writers.emplace_back([&, t] {
        std::mt19937_64 rng(t);
        while (!stop) {
          ++ops;
          const UserId a = 1 + rng() % 200, b = 1 + rng() % 200;
          const int dice = rng() % 100;
          if (dice < 55)
            (*db)->FollowAt(a, b, static_cast<TimestampMs>(rng() % 1000)).status().IgnoreError();
          else if (dice < 80)
            (*db)->Unfollow(a, b).status().IgnoreError();
          else if (dice < 84)
            (*db)->Block(a, b).status().IgnoreError();
          else if (dice < 87)
            (*db)->Unblock(a, b).status().IgnoreError();
          else if (dice < 90)
            (*db)->SetPrivate(a % 20 + 1, rng() % 3 != 0).status().IgnoreError();
          else if (dice < 95)
            (*db)->Approve(a % 20 + 1, b).status().IgnoreError();
          else if (dice < 97)
            (*db)->Withdraw(a, b).status().IgnoreError();
          else
            (*db)->RemoveUser(a).status().IgnoreError();
        }
      });
    }
    for (int s = 0; s < 5; ++s) {
      // Each snapshot starts after more writes: on a loaded machine the writer threads may not
      // have run yet, and a snapshot of the empty state would test nothing.
      const uint64_t target = ops + 200;
      while (ops < target) std::this_thread::yield();
      auto info = (*db)->Snapshot();
      REQUIRE_MESSAGE(info.ok(), info.status().ToString());
    }
    stop = true;
    for (auto& w : writers) w.join();
    final_edges = (*db)->Read([](const Graph& g) { return Edges(g); });
    final_digest = (*db)->Read([](const Graph& g) { return g.Digest(); });
    access = (*db)->Read([](const Graph& g) { return g.block_count() + g.request_count(); });
  }
  CHECK(access > 0);
  auto db = Db::Open(dir.path(), o);
  REQUIRE_MESSAGE(db.ok(), db.status().ToString());
  CHECK((*db)->recovery().snapshot_lsn > 0);
  CHECK((*db)->Read([](const Graph& g) { return Edges(g); }) == final_edges);
  CHECK((*db)->Read([](const Graph& g) { return g.Digest(); }) == final_digest);
  CHECK((*db)->Read([](const Graph& g) { return g.CheckInvariants(); }).ok());
}

TEST_CASE("db: a damaged newest snapshot is reported and the previous one is used") {
  TestDir dir;
  Driver d(7);
  std::vector<Edge> final_edges;
  uint64_t newest = 0, previous = 0;
  {
    auto db = Db::Open(dir.path(), d.Options(Env::Posix(), DurabilityMode::kAlways));
    REQUIRE(db.ok());
    for (int i = 0; i < 400; ++i) REQUIRE(d.Step(**db).ok());
    previous = (*db)->Snapshot()->lsn;
    for (int i = 0; i < 400; ++i) REQUIRE(d.Step(**db).ok());
    newest = (*db)->Snapshot()->lsn;
    for (int i = 0; i < 100; ++i) REQUIRE(d.Step(**db).ok());
    final_edges = (*db)->Read([](const Graph& g) { return Edges(g); });
  }
  const std::string path = JoinPath(dir.path(), SnapshotName(newest));
  std::string bytes = *Env::Posix()->ReadFile(path);
  bytes[bytes.size() / 2] ^= 0x10;
  auto f = Env::Posix()->OpenWritable(path, true);
  REQUIRE((*f)->Append(bytes).ok());
  REQUIRE((*f)->Close().ok());
  auto db = Db::Open(dir.path(), d.Options(Env::Posix(), DurabilityMode::kAlways));
  REQUIRE_MESSAGE(db.ok(), db.status().ToString());
  CHECK((*db)->recovery().snapshot_lsn == previous);
  REQUIRE((*db)->recovery().skipped_snapshots.size() == 1);
  CHECK((*db)->recovery().skipped_snapshots[0].find(SnapshotName(newest)) != std::string::npos);
  CHECK((*db)->Read([](const Graph& g) { return Edges(g); }) == final_edges);
}

TEST_CASE("db: retention keeps the newest snapshots and the WAL the oldest kept one needs") {
  TestDir dir;
  Driver d(8);
  auto opts = d.Options(Env::Posix(), DurabilityMode::kAlways);
  opts.keep_snapshots = 2;
  std::vector<Edge> final_edges;
  {
    auto db = Db::Open(dir.path(), opts);
    REQUIRE(db.ok());
    for (int round = 0; round < 5; ++round) {
      for (int i = 0; i < 300; ++i) REQUIRE(d.Step(**db).ok());
      REQUIRE((*db)->Snapshot().ok());
    }
    final_edges = (*db)->Read([](const Graph& g) { return Edges(g); });
  }
  CHECK(ListNumberedFiles(Env::Posix(), dir.path(), FileType::kSnapshot)->size() == 2);
  auto segments = ListWalSegments(Env::Posix(), dir.path());
  CHECK(segments->front() > 1);  // old segments went
  auto db = Db::Open(dir.path(), opts);
  REQUIRE_MESSAGE(db.ok(), db.status().ToString());
  CHECK((*db)->Read([](const Graph& g) { return Edges(g); }) == final_edges);
}

TEST_CASE("db: keep_all_wal keeps every segment from LSN 1 while snapshots come and go") {
  TestDir dir;
  Driver d(9);
  auto opts = d.Options(Env::Posix(), DurabilityMode::kAlways);
  opts.keep_snapshots = 1;
  opts.keep_all_wal = true;
  uint64_t last = 0;
  {
    auto db = Db::Open(dir.path(), opts);
    REQUIRE(db.ok());
    for (int round = 0; round < 5; ++round) {
      for (int i = 0; i < 300; ++i) REQUIRE(d.Step(**db).ok());
      REQUIRE((*db)->Snapshot().ok());
    }
    last = (*db)->last_lsn();
  }
  CHECK(ListNumberedFiles(Env::Posix(), dir.path(), FileType::kSnapshot)->size() == 1);
  REQUIRE(ListWalSegments(Env::Posix(), dir.path())->size() > 1);
  uint64_t first = 0, count = 0;
  auto scan = ScanWal(Env::Posix(), dir.path(), {}, [&](const WalRecordView& r) {
    if (first == 0) first = r.lsn;
    ++count;
    return Status::OK();
  });
  REQUIRE(scan.ok());
  CHECK(first == 1);
  CHECK(count == last);
}

TEST_CASE(
    "db: a snapshot that fails midway leaves no snapshot; writes go on or are refused cleanly") {
  for (int which = 0; which < 3; ++which) {
    CAPTURE(which);
    TestDir dir;
    FaultInjectionEnv env(Env::Posix());
    Driver d(20 + which);
    auto db = Db::Open(dir.path(), d.Options(&env, DurabilityMode::kAlways));
    REQUIRE(db.ok());
    for (int i = 0; i < 200; ++i) REQUIRE(d.Step(**db).ok());
    if (which == 0) env.FailNthWrite(1);    // the snapshot header
    if (which == 1) env.FailNthSync(1);     // the WAL flush before the snapshot is finished
    if (which == 2) env.SetDiskSpace(200);  // the first block does not fit
    auto snap = (*db)->Snapshot();
    CHECK_FALSE(snap.ok());
    CHECK(ListNumberedFiles(&env, dir.path(), FileType::kSnapshot)->empty());
    CHECK(ListNumberedFiles(&env, dir.path(), FileType::kSnapshotTemp)->empty());
    env.SetDiskSpace(0);
    // Writes continue where the WAL is healthy, and are refused where the failure hit it.
    for (int i = 0; i < 20; ++i) {
      const Status st = d.Step(**db);
      CHECK((st.ok() || st.code() == Code::kUnavailable));
    }
    env.SimulateCrash();
    db->reset();
    env.Revive();
    auto reopened = Db::Open(dir.path(), d.Options(&env, DurabilityMode::kAlways));
    REQUIRE_MESSAGE(reopened.ok(), reopened.status().ToString());
    CHECK((*reopened)->recovery().last_lsn >= d.acked);
    d.logged.resize((*reopened)->recovery().last_lsn);
    CHECK((*reopened)->Read([](const Graph& g) { return Edges(g); }) ==
          Replay(d.logged, d.logged.size()));
  }
}

TEST_CASE("db: power cuts with snapshots in between never lose an acknowledged write") {
  TestDir dir;
  FaultInjectionEnv env(Env::Posix());
  Driver d(9);
  std::mt19937 rng(11);
  for (int cycle = 0; cycle < 30; ++cycle) {
    CAPTURE(cycle);
    auto db = Db::Open(dir.path(), d.Options(&env, DurabilityMode::kAlways));
    REQUIRE_MESSAGE(db.ok(), db.status().ToString());
    const uint64_t recovered = (*db)->recovery().last_lsn;
    REQUIRE(recovered >= d.acked);
    d.logged.resize(recovered);
    d.acked = recovered;
    REQUIRE((*db)->Read([](const Graph& g) { return Edges(g); }) == Replay(d.logged, recovered));
    const int steps = 1 + rng() % 120;
    for (int i = 0; i < steps; ++i) {
      REQUIRE(d.Step(**db).ok());
      if (rng() % 60 == 0) REQUIRE((*db)->Snapshot().ok());
    }
    env.SimulateCrash();
    db->reset();
    env.Revive();
  }
}

TEST_CASE("db: the background fan-out delivers every post of a burst without DrainFanout") {
  for (uint32_t gather_us : {0u, 1000u}) {
    DbOptions o;  // in memory, background fan-out on (the default)
    o.graph.rate_limit.enabled = false;
    o.fanout_gather_us = gather_us;
    auto db = Db::Open("", o);
    REQUIRE(db.ok());
    const UserId author = 1;
    std::vector<UserId> readers;
    for (UserId r = 2; r < 50; ++r) {
      REQUIRE((*db)->FollowAt(r, author, 1).ok());
      readers.push_back(r);
    }
    // Each reader reads once, so it has an inbox with nothing pending: from now on the
    // author's posts reach it only through the fan-out thread.
    for (UserId r : readers) REQUIRE((*db)->Timeline(r, FeedPageRequest{}).ok());
    constexpr PostId kPosts = 500;
    for (PostId p = 1; p <= kPosts; ++p) REQUIRE((*db)->Publish(author, p, 0, 1000 + p).ok());
    // A lost wake-up would leave the last posts queued until the next publish.
    for (UserId r : readers) {
      bool seen = false;
      for (int tries = 0; tries < 5000 && !seen; ++tries) {
        auto page = (*db)->Timeline(r, FeedPageRequest{});
        REQUIRE(page.ok());
        seen = !page->entries.empty() && page->entries.front().post == kPosts;
        if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      CHECK_MESSAGE(seen,
                    "reader " << r << " never saw the last post (gather " << gather_us << " us)");
    }
  }
}

// The id index grows in steps: new users move a few users each (64 with the worker,
// IdMap::kGrowthStep without), and the background worker moves the rest with no further
// writes, so the old table does not stay until enough new users arrive (it once held 1.9 GB
// at a billion edges).
TEST_CASE("db: the background worker finishes the id index's growth without more writes") {
  auto open = [](bool background) {
    DbOptions o;  // in memory
    o.graph.rate_limit.enabled = false;
    o.background_id_growth = background;
    auto db = Db::Open("", o);
    REQUIRE(db.ok());
    return std::move(*db);
  };
  auto growing = [](Db& db) {
    return db.Read([](const Graph& g) { return g.id_index_growing(); });
  };
  // Follows between new users until a growth starts on a map of 10,000+ users (12+ steps
  // of new users to finish it), without the worker.
  std::unique_ptr<Db> manual = open(false);
  UserId next = 1;
  while (next < 20'000 || !growing(*manual)) {
    REQUIRE(manual->Follow(next, next + 1).ok());
    next += 2;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(growing(*manual));  // nothing moves users but new ones
  // The same writes with the worker: the growth ends by itself, every user still found.
  std::unique_ptr<Db> db = open(true);
  for (UserId u = 1; u < next; u += 2) REQUIRE(db->Follow(u, u + 1).ok());
  bool done = false;
  for (int tries = 0; tries < 10'000 && !done; ++tries) {
    done = !growing(*db);
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(done);
  db->Read([&](const Graph& g) {
    for (UserId u = 1; u < next; ++u) REQUIRE(g.FindUser(u) != kNoInternalId);
    CHECK(g.FindUser(next) == kNoInternalId);
    return 0;
  });
  CHECK(db->Close().ok());
}

// Where the worker moves a growth, a new user's own step is 64 (it only bounds the growth);
// without the worker, or with a step set, the graph gets the option as given. So does the
// graph a restart builds from the snapshot.
TEST_CASE("db: new users move 64 users of a growth where the worker runs, as set elsewhere") {
  auto step_of = [](Db& db) {
    return db.Read([](const Graph& g) { return g.options().id_growth_step; });
  };
  struct Case {
    bool background;
    uint32_t set, want;
  };
  for (const Case c : {Case{true, 0, 64}, Case{false, 0, 0}, Case{true, 512, 512}}) {
    CAPTURE(c.background);
    CAPTURE(c.set);
    TestDir dir;
    DbOptions o;
    o.background_id_growth = c.background;
    o.graph.id_growth_step = c.set;
    {
      auto db = Db::Open(dir.path(), o);
      REQUIRE(db.ok());
      CHECK(step_of(**db) == c.want);
      REQUIRE((*db)->Follow(1, 2).ok());
      REQUIRE((*db)->Snapshot().ok());
      REQUIRE((*db)->Close().ok());
    }
    auto again = Db::Open(dir.path(), o);
    REQUIRE(again.ok());
    CHECK(step_of(**again) == c.want);
    CHECK((*again)->Close().ok());
  }
}

TEST_CASE("db: a snapshot corrupted on its way to disk is caught at once, older state stays") {
  // part: which write to the snapshot's temp file has a bit flipped (1: the header, 2: the
  // block, 3: the footer).
  for (int part = 1; part <= 3; ++part) {
    TestDir dir;
    FaultInjectionEnv env(Env::Posix());
    Driver d(5);
    auto db = Db::Open(dir.path(), d.Options(&env, DurabilityMode::kNone));
    REQUIRE(db.ok());
    for (int i = 0; i < 300; ++i) REQUIRE(d.Step(**db).ok());
    auto good = (*db)->Snapshot();
    REQUIRE(good.ok());
    for (int i = 0; i < 300; ++i) REQUIRE(d.Step(**db).ok());
    env.CorruptNthWriteTo(".rgs.tmp", part);
    auto bad = (*db)->Snapshot();
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.status().code() == Code::kCorruption);
    CHECK(bad.status().message().find("read-back") != std::string::npos);
    for (int i = 0; i < 100; ++i) REQUIRE(d.Step(**db).ok());  // writes go on
    const std::vector<Edge> want = (*db)->Read([](const Graph& g) { return Edges(g); });
    db->reset();
    auto reopened = Db::Open(dir.path(), d.Options(&env, DurabilityMode::kNone));
    REQUIRE(reopened.ok());
    CHECK((*reopened)->recovery().snapshot_lsn == good->lsn);  // the bad one is gone
    CHECK((*reopened)->Read([](const Graph& g) { return Edges(g); }) == want);
  }
}

}  // namespace
}  // namespace relgraph

namespace relgraph {
namespace {

// Property: after any sequence of follows, publishes, blocks, requests and approvals, no post
// of either side of a block is in the other's home timeline, by push or by the celebrity pull
// (a low celebrity threshold makes the first users pulled), while reads interleave with the
// fan-out so inboxes exist before the blocks.
TEST_CASE("db: no post crosses a block, pushed or pulled, whatever came before it") {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    DbOptions o;
    o.graph.rate_limit.enabled = false;
    o.background_fanout = false;
    o.feed.celebrity_fans = 6;
    auto db = Db::Open("", o);
    REQUIRE(db.ok());
    std::mt19937_64 rng(seed);
    constexpr UserId kUsers = 40;
    PostId next_post = 1;
    auto user = [&] { return 1 + rng() % kUsers; };
    size_t blocks_seen = 0;
    for (int step = 0; step < 6000; ++step) {
      const UserId a = user(), b = rng() % 3 == 0 ? 1 + rng() % 4 : user();  // 1..4: popular
      const int dice = static_cast<int>(rng() % 100);
      if (dice < 45) {
        (void)(*db)->Follow(a, b);
      } else if (dice < 65) {
        (void)(*db)->Publish(b, next_post++, 0, std::nullopt);
      } else if (dice < 72) {
        (void)(*db)->Block(a, b);
      } else if (dice < 76) {
        (void)(*db)->Unblock(a, b);
      } else if (dice < 80) {
        (void)(*db)->SetPrivate(b, rng() % 2 == 0);
      } else if (dice < 84) {
        (void)(*db)->Approve(b, a);
      } else if (dice < 88) {
        (void)(*db)->Unfollow(a, b);
      } else {
        FeedPageRequest q;
        q.limit = 50;
        (void)(*db)->Timeline(a, q);  // builds (or refreshes) a's inbox
        if (rng() % 2 == 0) (*db)->RunFanoutBatch();
      }
      if (step % 500 != 499) continue;
      (*db)->DrainFanout();
      std::vector<std::pair<UserId, UserId>> pairs;
      (*db)->Read([&](const Graph& g) {
        g.ForEachBlock([&](UserId x, UserId y, TimestampMs) { pairs.emplace_back(x, y); });
        return 0;
      });
      blocks_seen += pairs.size();
      for (const auto& [x, y] : pairs) {
        for (const auto& [reader, author] : {std::pair{x, y}, std::pair{y, x}}) {
          FeedPageRequest q;
          q.limit = kMaxFeedPageLimit;
          for (;;) {  // the whole timeline, page by page
            auto page = (*db)->Timeline(reader, q);
            REQUIRE_MESSAGE(page.ok(), page.status().ToString());
            for (const FeedEntry& e : page->entries) {
              INFO("reader ", reader, " author ", author, " post ", e.post);
              REQUIRE(e.author != author);
            }
            if (!page->next) break;
            q.after = page->next;
          }
        }
      }
      REQUIRE((*db)->CheckInvariants().ok());
    }
    CHECK(blocks_seen > 0);
  }
}

}  // namespace
}  // namespace relgraph
