// The change stream: a reader sees every logged change exactly once, in LSN order, with the
// outcome its call returned; a subscriber from LSN 1 rebuilds the state exactly; masks, "from
// now", visibility under each durability mode, expiry and bad arguments.
#include <doctest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#include "engine/db.h"
#include "engine/graph/clock.h"
#include "tests/engine/graph_state_model.h"
#include "tests/storage/test_dir.h"

namespace relgraph {
namespace {

using testing::TestDir;

bool Same(const ChangeEvent& x, const ChangeEvent& y) {
  return std::tie(x.lsn, x.kind, x.ts, x.a, x.b, x.became_friends, x.post_kind, x.evicted,
                  x.flags) ==
         std::tie(y.lsn, y.kind, y.ts, y.a, y.b, y.became_friends, y.post_kind, y.evicted, y.flags);
}

std::string Show(const ChangeEvent& e) {
  return std::to_string(e.lsn) + " " + std::string(ChangeKindName(e.kind)) + " " +
         std::to_string(e.a) + " " + std::to_string(e.b) + " ts " + std::to_string(e.ts) +
         (e.became_friends ? " friends" : "") + " kind " + std::to_string(e.post_kind) +
         " evicted " + std::to_string(e.evicted) + " flags " + std::to_string(e.flags);
}

DbOptions Options(ManualClock* clock, DurabilityMode mode) {
  DbOptions o;
  o.graph.clock = clock;
  o.graph.rate_limit.enabled = false;  // the test follows in bursts
  o.durability = mode;
  o.wal_segment_bytes = 4096;  // many segments: readers cross them all the time
  o.keep_all_wal = true;
  o.feed.posts_per_author = 4;  // publishes evict often
  o.background_fanout = false;
  return o;
}

// Drives random mutations and writes down the event each logged one must produce.
struct Driver {
  Driver(Db& target, ManualClock& time, uint64_t seed) : db(target), clock(time), rng(seed) {}

  void Step() {
    clock.Advance(rng() % 3);
    const UserId a = 1 + rng() % 25, b = 1 + rng() % 25;
    const uint64_t before = db.last_lsn();
    ChangeEvent e;
    e.ts = clock.NowMs();
    e.a = a;
    e.b = b;
    const int dice = rng() % 100;
    if (dice < 40) {
      auto r = db.Follow(a, b);
      if (!r.ok()) return;
      const bool request = Has(r->relation, Relation::kRequested);  // b is private
      e.kind = request ? ChangeKind::kRequest : ChangeKind::kFollow;
      e.ts = r->followed_at;
      e.became_friends = !request && Has(r->relation, Relation::kMutual);
    } else if (dice < 55) {
      if (!db.Unfollow(a, b).ok()) return;
      e.kind = ChangeKind::kUnfollow;
    } else if (dice < 57) {
      if (!db.RemoveUser(a).ok()) return;
      e.kind = ChangeKind::kRemoveUser;
      e.b = 0;
    } else if (dice < 77) {
      const PostId post = ++next_post;
      const uint8_t kind = rng() % 4;
      std::optional<TimestampMs> ts;
      if (rng() % 4 == 0) ts = clock.NowMs() - static_cast<TimestampMs>(rng() % 5000);
      auto r = db.Publish(a, post, kind, ts);
      if (!r.ok()) return;
      e.kind = ChangeKind::kPublish;
      e.b = post;
      e.ts = r->ts;
      e.post_kind = kind;
      e.evicted = r->evicted;
    } else if (dice < 85) {
      if (next_post == 0) return;
      const PostId post = 1 + rng() % next_post;
      if (!db.DeletePost(a, post).ok()) return;
      e.kind = ChangeKind::kDeletePost;
      e.b = post;
    } else if (dice >= 92) {
      if (!AccessStep(a, b, dice - 92, &e)) return;
    } else {
      const bool on = rng() % 2 == 0;
      const bool mute = rng() % 2 == 0;
      auto r = mute ? db.Mute(a, b, on) : db.Hide(a, b, on);
      if (!r.ok()) return;
      e.kind = mute ? (on ? ChangeKind::kMute : ChangeKind::kUnmute)
                    : (on ? ChangeKind::kHide : ChangeKind::kUnhide);
    }
    if (db.last_lsn() == before) return;  // a no-op: nothing logged, no event
    REQUIRE(db.last_lsn() == before + 1);
    e.lsn = before + 1;
    expected.push_back(e);
  }

  // Blocks, private accounts and requests (`dice` 0..7); false when the call failed.
  bool AccessStep(UserId a, UserId b, int dice, ChangeEvent* e) {
    if (dice < 2) {
      auto r = db.Block(a, b);
      if (!r.ok()) return false;
      e->kind = ChangeKind::kBlock;
      e->ts = r->ts;
      e->flags = (r->unfollowed ? kBlockUnfollowed : 0) |
                 (r->lost_follower ? kBlockLostFollower : 0) |
                 (r->requests_removed ? kBlockDroppedRequest : 0);
    } else if (dice < 3) {
      if (!db.Unblock(a, b).ok()) return false;
      e->kind = ChangeKind::kUnblock;
    } else if (dice < 5) {
      const bool on = rng() % 3 != 0;
      auto r = db.SetPrivate(a, on);
      if (!r.ok()) return false;
      e->kind = ChangeKind::kSetPrivate;
      e->b = 0;
      e->ts = r->ts;
      e->flags = on ? 1 : 0;
    } else if (dice < 6) {
      auto r = db.Approve(a, b);
      if (!r.ok()) return false;
      e->kind = ChangeKind::kApprove;
      e->ts = r->followed_at;
      e->became_friends = Has(r->relation, Relation::kMutual);
    } else if (dice < 7) {
      if (!db.Reject(a, b).ok()) return false;
      e->kind = ChangeKind::kReject;
    } else {
      if (!db.Withdraw(a, b).ok()) return false;
      e->kind = ChangeKind::kWithdraw;
    }
    return true;
  }

  Db& db;
  ManualClock& clock;
  std::mt19937_64 rng;
  PostId next_post = 0;
  std::vector<ChangeEvent> expected;
};

// Reads until the reader has passed `last_lsn`.
std::vector<ChangeEvent> ReadThrough(ChangeReader& reader, uint64_t last_lsn) {
  std::vector<ChangeEvent> got;
  while (reader.next_lsn() <= last_lsn) {
    auto n = reader.Read(1000, [&](const ChangeEvent& e) { got.push_back(e); });
    REQUIRE_MESSAGE(n.ok(), n.status().ToString());
    if (*n == 0) std::this_thread::yield();
  }
  return got;
}

void CheckEvents(const std::vector<ChangeEvent>& got, const std::vector<ChangeEvent>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (!Same(got[i], want[i])) {
      FAIL("event " << i << ": got " << Show(got[i]) << ", want " << Show(want[i]));
    }
  }
}

// The state a subscriber rebuilds from events alone.
struct Rebuilt {
  testing::GraphStateModel graph;  // edges, blocks, requests, private users
  std::map<UserId, std::set<std::tuple<PostId, TimestampMs, uint8_t>>> posts;
  std::map<UserId, std::set<UserId>> mutes, hides;

  void Apply(const ChangeEvent& e) {
    auto erase_post = [&](UserId author, PostId post) {
      std::erase_if(posts[author], [&](const auto& p) { return std::get<0>(p) == post; });
    };
    switch (e.kind) {
      case ChangeKind::kFollow:
        graph.Follow(e.a, e.b, e.ts);
        break;
      case ChangeKind::kUnfollow:
        graph.Unfollow(e.a, e.b);
        break;
      case ChangeKind::kRemoveUser:
        graph.RemoveUser(e.a);
        posts.erase(e.a);
        mutes.erase(e.a);
        hides.erase(e.a);
        break;
      case ChangeKind::kPublish:
        posts[e.a].insert({e.b, e.ts, e.post_kind});
        if (e.evicted != 0) erase_post(e.a, e.evicted);
        break;
      case ChangeKind::kDeletePost:
        erase_post(e.a, e.b);
        break;
      case ChangeKind::kMute:
        mutes[e.a].insert(e.b);
        break;
      case ChangeKind::kUnmute:
        mutes[e.a].erase(e.b);
        break;
      case ChangeKind::kHide:
        hides[e.a].insert(e.b);
        break;
      case ChangeKind::kUnhide:
        hides[e.a].erase(e.b);
        break;
      case ChangeKind::kCursor:
      case ChangeKind::kCursorStart:
      case ChangeKind::kEpoch:
      case ChangeKind::kRemote:
      case ChangeKind::kPosts:
      case ChangeKind::kPostsWanted:
      case ChangeKind::kMoved:
        FAIL("cursor, epoch, remote and posts-wanted records are never events");
        break;
      case ChangeKind::kBlock: {  // the flags say what went; a consumer may also just erase
        const auto severed = graph.Block(e.a, e.b, e.ts);
        CHECK(((e.flags & kBlockUnfollowed) != 0) == severed.unfollowed);
        CHECK(((e.flags & kBlockLostFollower) != 0) == severed.lost_follower);
        CHECK(((e.flags & kBlockDroppedRequest) != 0) == severed.request);
        break;
      }
      case ChangeKind::kUnblock:
        graph.Unblock(e.a, e.b);
        break;
      case ChangeKind::kSetPrivate:
        graph.SetPrivate(e.a, e.flags != 0, e.ts);
        break;
      case ChangeKind::kRequest:
        graph.Request(e.a, e.b, e.ts);
        break;
      case ChangeKind::kApprove:  // a is the target
        graph.Approve(e.a, e.b, e.ts);
        break;
      case ChangeKind::kReject:  // a is the target
        graph.RemoveRequest(e.b, e.a);
        break;
      case ChangeKind::kWithdraw:
        graph.RemoveRequest(e.a, e.b);
        break;
    }
  }

  void CheckAgainst(Db& db) {
    const testing::GraphStateModel real =
        db.Read([](const Graph& g) { return testing::GraphStateModel::Of(g); });
    CHECK(real.edges == graph.edges);
    CHECK(real.blocks == graph.blocks);
    CHECK(real.requests == graph.requests);
    CHECK(real.private_users == graph.private_users);
    for (UserId u = 1; u <= 25; ++u) {
      FeedPageRequest req;
      req.limit = 100;
      auto page = db.UserPosts(u, req);
      std::set<std::tuple<PostId, TimestampMs, uint8_t>> have;
      if (page.ok()) {
        for (const FeedEntry& p : page->entries) have.insert({p.post, p.ts, p.kind});
      }
      CHECK_MESSAGE(have == posts[u], "posts of " << u);
      auto m = db.Mutes(u);
      const std::set<UserId> mset =
          m.ok() ? std::set<UserId>(m->begin(), m->end()) : std::set<UserId>();
      CHECK_MESSAGE(mset == mutes[u], "mutes of " << u);
      auto h = db.Hides(u);
      const std::set<UserId> hset =
          h.ok() ? std::set<UserId>(h->begin(), h->end()) : std::set<UserId>();
      CHECK_MESSAGE(hset == hides[u], "hides of " << u);
    }
  }
};

TEST_CASE("stream: a reader running beside the writer sees each change once, in order, exact") {
  for (DurabilityMode mode :
       {DurabilityMode::kEverySec, DurabilityMode::kNone, DurabilityMode::kAlways}) {
    CAPTURE(DurabilityModeName(mode));
    TestDir dir;
    ManualClock clock;
    auto db = Db::Open(dir.path(), Options(&clock, mode));
    REQUIRE(db.ok());
    auto reader = (*db)->OpenChanges(1);
    REQUIRE(reader.ok());

    Driver driver(**db, clock, 7 + static_cast<int>(mode));
    const int steps = mode == DurabilityMode::kAlways ? 3000 : 20000;
    std::atomic<bool> done{false};
    std::vector<ChangeEvent> got;
    std::thread tail([&] {
      // Reads while the writer writes; never sees a record not yet visible.
      while (!done.load()) {
        auto n = (*reader)->Read(64, [&](const ChangeEvent& e) { got.push_back(e); });
        REQUIRE(n.ok());
      }
    });
    for (int i = 0; i < steps; ++i) driver.Step();
    done = true;
    tail.join();
    const std::vector<ChangeEvent> rest = ReadThrough(**reader, (*db)->last_lsn());
    got.insert(got.end(), rest.begin(), rest.end());
    CHECK(driver.expected.size() > static_cast<size_t>(steps) / 4);
    CheckEvents(got, driver.expected);

    Rebuilt state;
    for (const ChangeEvent& e : got) state.Apply(e);
    state.CheckAgainst(**db);
  }
}

TEST_CASE("stream: a kind mask delivers exactly the events of those kinds") {
  TestDir dir;
  ManualClock clock;
  auto db = Db::Open(dir.path(), Options(&clock, DurabilityMode::kEverySec));
  REQUIRE(db.ok());
  Driver driver(**db, clock, 11);
  for (int i = 0; i < 5000; ++i) driver.Step();
  std::mt19937_64 rng(3);
  for (int round = 0; round < 20; ++round) {
    const ChangeKindMask mask = (rng() & kAllChangeKinds) | MaskOf(ChangeKind::kUnhide);
    auto reader = (*db)->OpenChanges(1, mask);
    REQUIRE(reader.ok());
    std::vector<ChangeEvent> want;
    for (const ChangeEvent& e : driver.expected) {
      if (mask & MaskOf(e.kind)) want.push_back(e);
    }
    CheckEvents(ReadThrough(**reader, (*db)->last_lsn()), want);
  }
}

TEST_CASE("stream: 'from now' and from any LSN start exactly there") {
  TestDir dir;
  ManualClock clock;
  auto db = Db::Open(dir.path(), Options(&clock, DurabilityMode::kEverySec));
  REQUIRE(db.ok());
  Driver driver(**db, clock, 12);
  for (int i = 0; i < 3000; ++i) driver.Step();
  const size_t logged = driver.expected.size();
  auto now = (*db)->OpenChanges(Db::kChangesFromNow);
  REQUIRE(now.ok());
  CHECK((*now)->next_lsn() == (*db)->last_lsn() + 1);
  for (int i = 0; i < 3000; ++i) driver.Step();
  CheckEvents(ReadThrough(**now, (*db)->last_lsn()),
              std::vector<ChangeEvent>(driver.expected.begin() + logged, driver.expected.end()));

  std::mt19937_64 rng(5);
  for (int round = 0; round < 20; ++round) {
    const size_t from = rng() % driver.expected.size();
    auto reader = (*db)->OpenChanges(driver.expected[from].lsn);
    REQUIRE(reader.ok());
    CheckEvents(ReadThrough(**reader, (*db)->last_lsn()),
                std::vector<ChangeEvent>(driver.expected.begin() + from, driver.expected.end()));
  }
}

TEST_CASE("stream: under everysec a change is visible at once; under always only once fsynced") {
  TestDir dir;
  ManualClock clock;
  DbOptions o = Options(&clock, DurabilityMode::kEverySec);
  {
    auto db = Db::Open(dir.path(), o);
    REQUIRE(db.ok());
    auto reader = (*db)->OpenChanges(Db::kChangesFromNow);
    REQUIRE(reader.ok());
    REQUIRE((*db)->Follow(1, 2).ok());
    // The background flush runs once a second; the reader asks for the record and gets it
    // well before that.
    const auto start = std::chrono::steady_clock::now();
    CHECK(ReadThrough(**reader, (*db)->last_lsn()).size() == 1);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500));
  }
  TestDir dir2;
  o.durability = DurabilityMode::kAlways;
  auto db = Db::Open(dir2.path(), o);
  REQUIRE(db.ok());
  auto reader = (*db)->OpenChanges(Db::kChangesFromNow);
  REQUIRE(reader.ok());
  uint64_t commit_lsn = 0;
  REQUIRE((*db)->Follow(1, 2, &commit_lsn).ok());  // logged, not yet fsynced, not acknowledged
  REQUIRE(commit_lsn == (*db)->last_lsn());
  REQUIRE((*db)->OpenChanges(Db::kChangesFromNow).ok());  // writes it to the file, no fsync
  for (int i = 0; i < 5; ++i) {
    auto n = (*reader)->Read(10, [](const ChangeEvent&) { FAIL("an unacknowledged change"); });
    REQUIRE(n.ok());
    CHECK(*n == 0);
  }
  REQUIRE((*db)->WaitDurable(commit_lsn).ok());
  CHECK(ReadThrough(**reader, commit_lsn).size() == 1);
}

TEST_CASE("stream: a position the WAL no longer keeps is lsn_expired naming the oldest kept") {
  TestDir dir;
  ManualClock clock;
  DbOptions o = Options(&clock, DurabilityMode::kEverySec);
  o.keep_all_wal = false;
  o.keep_snapshots = 1;
  auto db = Db::Open(dir.path(), o);
  REQUIRE(db.ok());
  Driver driver(**db, clock, 13);
  for (int i = 0; i < 1000; ++i) driver.Step();
  auto early = (*db)->OpenChanges(1);  // opened before retention: keeps reading its segment
  REQUIRE(early.ok());
  // Each snapshot writes the WAL out (a new segment past 4 KiB) and drops what the previous
  // one covered.
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 1000; ++i) driver.Step();
    REQUIRE((*db)->Snapshot().ok());
  }
  for (int i = 0; i < 100; ++i) driver.Step();
  uint64_t oldest = 0;
  auto late = (*db)->OpenChanges(1, kAllChangeKinds, &oldest);
  REQUIRE(late.status().code() == Code::kLsnExpired);
  CHECK(oldest > 1);
  CHECK(late.status().message().find(std::to_string(oldest)) != std::string::npos);
  auto from_oldest = (*db)->OpenChanges(oldest);
  REQUIRE(from_oldest.ok());
  std::vector<ChangeEvent> want;
  for (const ChangeEvent& e : driver.expected) {
    if (e.lsn >= oldest) want.push_back(e);
  }
  CheckEvents(ReadThrough(**from_oldest, (*db)->last_lsn()), want);
  // The early reader reads on in its open segment, then finds the next one gone.
  Status end;
  while (end.ok()) {
    auto n = (*early)->Read(1000, [](const ChangeEvent&) {});
    if (!n.ok()) end = n.status();
    if (n.ok() && *n == 0) break;
  }
  CHECK(end.code() == Code::kLsnExpired);
}

TEST_CASE("stream: bad arguments are refused by name") {
  ManualClock clock;
  auto mem = Db::Open("", Options(&clock, DurabilityMode::kEverySec));
  REQUIRE(mem.ok());
  CHECK((*mem)->OpenChanges(1).status().code() == Code::kInvalidArgument);

  TestDir dir;
  auto db = Db::Open(dir.path(), Options(&clock, DurabilityMode::kEverySec));
  REQUIRE(db.ok());
  REQUIRE((*db)->Follow(1, 2).ok());
  auto past = (*db)->OpenChanges(3);
  CHECK(past.status().code() == Code::kInvalidArgument);
  CHECK(past.status().message().find("past the next") != std::string::npos);
  CHECK((*db)->OpenChanges(2).ok());  // the next one: a reader waiting for it
  CHECK((*db)->OpenChanges(1, 0).status().code() == Code::kInvalidArgument);
  CHECK((*db)->OpenChanges(1, 1).status().code() == Code::kInvalidArgument);
  CHECK((*db)->OpenChanges(1, 1u << 10).status().code() == Code::kInvalidArgument);

  CHECK(*ParseChangeKinds("follow,publish") ==
        (MaskOf(ChangeKind::kFollow) | MaskOf(ChangeKind::kPublish)));
  CHECK(*ParseChangeKinds("all") == kAllChangeKinds);
  auto bad = ParseChangeKinds("follow,folow");
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK(bad.status().message().find("'folow'") != std::string::npos);
}

}  // namespace
}  // namespace relgraph
