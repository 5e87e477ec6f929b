// Db's writes (engine/db_writes.cpp) in a cluster: each checks under the exclusive lock that
// this shard decides for the user who makes the change (Db::DecidesLocked, docs/cluster.md,
// "No write after the listing"). Randomized against placements that change between writes:
// every write whose deciding user is handed over (or another shard's) is refused `moving`,
// logs nothing and changes nothing; every other write is served.
#include <doctest.h>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/cluster/user_place.h"
#include "engine/db.h"
#include "engine/graph/clock.h"
#include "tests/storage/test_dir.h"

namespace relgraph {
namespace {

// The gate refuses a moving user's commands, but before the write's lock: a follow admitted
// under the map before the flip could wait for the lock until after the copy phase listed its
// follower. Under the lock the Db checks again: every write that decides for a user handed
// over (or another shard's) is refused kMoving and changes nothing; the others are applied.
// Randomized against a model of the acknowledged writes, single and batched.
TEST_CASE("a write deciding for a user handed over mid-way is refused under the lock, not lost") {
  DbOptions o;
  o.graph.rate_limit.enabled = false;
  auto opened = Db::Open("", o);
  REQUIRE(opened.ok());
  Db& db = **opened;
  constexpr UserId kMovers = 40;
  std::map<UserId, UserPlace> place;
  for (UserId u = 1; u <= kMovers; ++u) place[u] = UserPlace::kHere;
  db.SetPlacement([&](UserId u) { return place.count(u) != 0 ? place[u] : UserPlace::kHere; });
  std::set<std::pair<UserId, UserId>> model;  // the acknowledged edges
  std::mt19937_64 rng(49);
  uint64_t refused = 0;
  for (int step = 0; step < 4000; ++step) {
    if (rng() % 50 == 0) {  // a user's bucket moves on: leaving, then handed over
      UserPlace& p = place[1 + rng() % kMovers];
      p = p == UserPlace::kHere ? UserPlace::kLeaving : UserPlace::kHandedOver;
    }
    std::vector<Db::BatchWrite> writes(1 + rng() % 8);
    std::set<std::pair<UserId, UserId>> pairs;
    for (Db::BatchWrite& w : writes) {
      do {
        w.a = 1 + rng() % kMovers;
        w.b = 1 + rng() % kMovers;
      } while (w.a == w.b || !pairs.insert({w.a, w.b}).second);
      w.kind = rng() % 3 == 0 ? Db::BatchWrite::Kind::kUnfollow : Db::BatchWrite::Kind::kFollow;
    }
    std::vector<Db::BatchWriteResult> results(writes.size());
    if (writes.size() > 1) {
      db.WriteBatch(writes, results);
    } else if (writes[0].kind == Db::BatchWrite::Kind::kFollow) {
      auto r = db.Follow(writes[0].a, writes[0].b);
      results[0].status = r.status();
      if (r.ok()) results[0].follow = *r;
    } else {
      auto r = db.Unfollow(writes[0].a, writes[0].b);
      results[0].status = r.status();
      if (r.ok()) results[0].removed = *r;
    }
    for (size_t i = 0; i < writes.size(); ++i) {
      const Db::BatchWrite& w = writes[i];
      const bool decided_here = place[w.a] != UserPlace::kHandedOver;
      CAPTURE(w.a);
      CAPTURE(w.b);
      if (!decided_here) {
        CHECK(results[i].status.code() == Code::kMoving);
        ++refused;
        continue;
      }
      REQUIRE_MESSAGE(results[i].status.ok(), results[i].status.ToString());
      const bool had = model.count({w.a, w.b}) != 0;
      if (w.kind == Db::BatchWrite::Kind::kFollow) {
        CHECK(results[i].follow.created == !had);
        model.insert({w.a, w.b});
      } else {
        CHECK(results[i].removed == had);
        model.erase({w.a, w.b});
      }
    }
  }
  CHECK(refused > 0);
  db.Read([&](const Graph& g) {
    for (UserId a = 1; a <= kMovers; ++a) {
      for (UserId b = 1; b <= kMovers; ++b) {
        if (a != b) CHECK(g.HasEdge(a, b) == (model.count({a, b}) != 0));
      }
    }
    return 0;
  });
}

// The whole state of a Db as ExportUsers lists it: private marks, blocks, follows, requests,
// retained posts, mutes and hides, with a fixed clock so that two listings compare equal.
std::vector<std::pair<int, std::string>> Everything(const Db& db) {
  auto listed = db.ExportUsers([](UserId) { return true; });
  REQUIRE(listed.ok());
  std::vector<std::pair<int, std::string>> out;
  for (const Db::MovedState& m : *listed) out.push_back({static_cast<int>(m.type), m.payload});
  return out;
}

enum Op : int {
  kFollow,
  kRemoveUser,
  kBlock,
  kUnblock,
  kSetPrivate,
  kApprove,
  kReject,
  kWithdraw,
  kPublish,
  kDeletePost,
  kMute,
  kHide,
  kOps
};
constexpr std::array<const char*, kOps> kOpNames = {
    "follow", "remove_user", "block",   "unblock",     "set_private", "approve",
    "reject", "withdraw",    "publish", "delete_post", "mute",        "hide"};

TEST_CASE("every write whose deciding user is handed over is refused under the lock") {
  testing::TestDir dir;
  ManualClock clock;
  DbOptions o;
  o.graph.rate_limit.enabled = false;
  o.graph.clock = &clock;
  auto opened = Db::Open(dir.path(), o);
  REQUIRE(opened.ok());
  Db& db = **opened;
  constexpr UserId kUsers = 24;
  std::map<UserId, UserPlace> place;  // a user not listed is this shard's
  db.SetPlacement([&](UserId u) {
    auto it = place.find(u);
    return it == place.end() ? UserPlace::kHere : it->second;
  });
  std::mt19937_64 rng(4902);
  std::vector<std::pair<UserId, UserId>> requested;  // (requester, target), maybe stale
  std::vector<std::pair<UserId, PostId>> posts;      // (author, post), maybe deleted
  PostId next_post = 1;
  std::array<int, kOps> refused{}, logged{};
  for (int step = 0; step < 3000; ++step) {
    clock.Advance(1 + rng() % 1000);
    if (rng() % 8 == 0) {  // a user's bucket moves on: leaving, handed over, gone, back
      UserPlace& p = place[1 + rng() % kUsers];
      p = p == UserPlace::kHere         ? UserPlace::kLeaving
          : p == UserPlace::kLeaving    ? UserPlace::kHandedOver
          : p == UserPlace::kHandedOver ? UserPlace::kElsewhere
                                        : UserPlace::kHere;
    }
    // Follows and publishes most often, so that the others find requests and posts.
    const Op op =
        rng() % 3 == 0 ? static_cast<Op>(rng() % kOps) : (rng() % 4 == 0 ? kPublish : kFollow);
    if (op == kRemoveUser && rng() % 4 != 0) continue;  // rarer: it empties a user
    UserId a = 1 + rng() % kUsers, b = 1 + rng() % (kUsers - 1);
    if (b >= a) ++b;
    PostId post = next_post;
    if ((op == kApprove || op == kReject || op == kWithdraw) && !requested.empty() &&
        rng() % 5 != 0) {
      auto [requester, target] = requested[rng() % requested.size()];
      a = op == kWithdraw ? requester : target;
      b = op == kWithdraw ? target : requester;
    }
    if (op == kDeletePost && !posts.empty()) std::tie(a, post) = posts[rng() % posts.size()];
    // The user who makes each change (docs/cluster.md, "Deciding"): the follower, the user
    // removed, the blocker, the user switching, the target approving or rejecting, the
    // requester withdrawing, the author, the muter.
    const UserId decider = a;
    const auto before = Everything(db);
    const uint64_t lsn_before = db.last_lsn();
    Status s;
    switch (op) {
      case kFollow: {
        auto r = db.Follow(a, b);
        if (r.ok() && r->created && Has(r->relation, Relation::kRequested)) {
          requested.push_back({a, b});
        }
        s = r.status();
        break;
      }
      case kRemoveUser:
        s = db.RemoveUser(a).status();
        break;
      case kBlock:
        s = db.Block(a, b).status();
        break;
      case kUnblock:
        s = db.Unblock(a, b).status();
        break;
      case kSetPrivate:
        s = db.SetPrivate(a, rng() % 3 != 0).status();
        break;
      case kApprove:
        s = db.Approve(a, b).status();
        break;
      case kReject:
        s = db.Reject(a, b).status();
        break;
      case kWithdraw:
        s = db.Withdraw(a, b).status();
        break;
      case kPublish: {
        s = db.Publish(a, post, 0, std::nullopt).status();
        if (s.ok()) posts.push_back({a, post});
        ++next_post;
        break;
      }
      case kDeletePost:
        s = db.DeletePost(a, post);
        break;
      case kMute:
        s = db.Mute(a, b, rng() % 3 != 0).status();
        break;
      case kHide:
        s = db.Hide(a, b, rng() % 3 != 0).status();
        break;
      case kOps:
        break;
    }
    const std::string name = kOpNames[op];
    CAPTURE(name);
    CAPTURE(a);
    CAPTURE(b);
    CAPTURE(s.ToString());
    const UserPlace p = place.count(decider) != 0 ? place[decider] : UserPlace::kHere;
    if (!DecidedHere(p)) {
      CHECK(s.code() == Code::kMoving);
      CHECK(db.last_lsn() == lsn_before);
      CHECK(Everything(db) == before);
      ++refused[op];
    } else {
      CHECK(s.code() != Code::kMoving);
      if (db.last_lsn() > lsn_before) ++logged[op];
    }
  }
  for (int op = 0; op < kOps; ++op) {
    const std::string name = kOpNames[op];
    CAPTURE(name);
    CHECK(refused[op] > 0);
    CHECK(logged[op] > 0);
  }
  // What was logged is what the Db holds: recovery rebuilds the same state.
  const auto held = Everything(db);
  opened->reset();
  auto again = Db::Open(dir.path(), o);
  REQUIRE(again.ok());
  // Internal ids, and so the order of the listing, may differ after recovery.
  auto sorted = [](std::vector<std::pair<int, std::string>> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  CHECK(sorted(Everything(**again)) == sorted(held));
}

}  // namespace
}  // namespace relgraph
