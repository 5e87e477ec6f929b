// Unit tests of every Graph operation and every error path, one behaviour per case.
#include <doctest.h>

#include <algorithm>
#include <random>

#include "engine/graph/clock.h"
#include "engine/graph/graph.h"

namespace relgraph {
namespace {

struct Fixture {
  Fixture() {
    options.clock = &clock;
    options.rate_limit.enabled = false;
    graph = std::make_unique<Graph>(options);
  }
  explicit Fixture(GraphOptions o) : options(o) {
    options.clock = &clock;
    graph = std::make_unique<Graph>(options);
  }
  FollowOutcome MustFollow(UserId a, UserId b) {
    auto r = graph->Follow(a, b);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    return *r;
  }
  std::vector<UserId> Users(const Result<Page>& p) {
    REQUIRE(p.ok());
    std::vector<UserId> v;
    for (const ListEntry& e : p->entries) v.push_back(e.user);
    return v;
  }
  PageRequest Req(uint32_t limit = 20) {
    PageRequest r;
    r.limit = limit;
    return r;
  }
  ManualClock clock{1'700'000'000'000};
  GraphOptions options;
  std::unique_ptr<Graph> graph;
};

TEST_CASE("follow: creates the edge at the clock's time and reports the relation") {
  Fixture f;
  FollowOutcome o = f.MustFollow(1, 2);
  CHECK(o.created);
  CHECK(o.relation == Relation::kFollowing);
  CHECK(o.followed_at == 1'700'000'000'000);
  f.clock.Advance(5);
  o = f.MustFollow(2, 1);
  CHECK(o.relation == Relation::kMutual);
  CHECK(*f.graph->GetCounts(1) == Counts{1, 1, 1});
  CHECK(f.graph->edge_count() == 2);
}

TEST_CASE("follow: following again changes nothing and keeps the original time") {
  Fixture f;
  f.MustFollow(1, 2);
  f.clock.Advance(1000);
  FollowOutcome o = f.MustFollow(1, 2);
  CHECK_FALSE(o.created);
  CHECK(o.followed_at == 1'700'000'000'000);
  CHECK(f.graph->edge_count() == 1);
}

TEST_CASE("follow: id 0 and self-follow are distinct errors and create no user") {
  Fixture f;
  CHECK(f.graph->Follow(0, 2).status().code() == Code::kInvalidUserId);
  CHECK(f.graph->Follow(2, 0).status().code() == Code::kInvalidUserId);
  auto self = f.graph->Follow(3, 3);
  CHECK(self.status().code() == Code::kSelfFollow);
  CHECK(self.status().message().find("3") != std::string::npos);
  CHECK(f.graph->user_count() == 0);
}

TEST_CASE(
    "users: past max_users a call that would add one is resource_exhausted, nothing changes") {
  GraphOptions o;
  o.rate_limit.enabled = false;
  o.max_users = 5;
  Fixture f(o);
  Graph& g = *f.graph;
  f.MustFollow(1, 2);
  f.MustFollow(3, 4);
  f.MustFollow(1, 5);  // the fifth user: still room
  const uint64_t digest = g.Digest();
  auto refused = g.Follow(1, 6);
  CHECK(refused.status().code() == Code::kResourceExhausted);
  CHECK(refused.status().message().find("holds 5 users") != std::string::npos);
  CHECK(refused.status().message().find("user 6 would be a new one") != std::string::npos);
  CHECK(refused.status().message().find("max_users") != std::string::npos);
  // Every way in that could add a user.
  CHECK(g.FollowAt(7, 2, 100).status().code() == Code::kResourceExhausted);
  CHECK(g.Block(1, 8).status().code() == Code::kResourceExhausted);
  CHECK(g.SetPrivate(9, true).status().code() == Code::kResourceExhausted);
  const ImportEdge edges[] = {{2, 3, 10}, {2, 10, 11}};
  auto imported = g.Import(edges);
  CHECK(imported.status().code() == Code::kResourceExhausted);
  CHECK(imported.status().detail() == 1);  // the edge's index; the one before it stays
  const Graph::ReplayOp op{Graph::ReplayOp::kFollow, 11, 1, 50};
  CHECK(g.ApplyBatch(std::span(&op, 1)).code() == Code::kResourceExhausted);
  CHECK(g.ApplyBlock(1, 12, 60).code() == Code::kResourceExhausted);
  CHECK(g.ApplyRequest(13, 1, 60).code() == Code::kResourceExhausted);
  CHECK(g.CheckRoomFor(1, 14).code() == Code::kResourceExhausted);
  CHECK(g.CheckRoomFor(1, 2).ok());
  CHECK(g.user_count() == 5);
  CHECK(g.edge_count() == 4);  // 1->2, 3->4, 1->5 and the imported 2->3
  CHECK(g.Digest() != digest);
  // Between users it holds, everything goes on.
  CHECK(g.GetRelation(2, 3).value() == Relation::kFollowing);
  f.MustFollow(4, 1);
  CHECK(g.Block(5, 2).ok());
  CHECK(g.CheckInvariants().ok());
}

TEST_CASE("users: max_users defaults to what 4-byte internal ids allow, and is checked") {
  CHECK(GraphOptions{}.max_users == kMaxUsersLimit);
  CHECK(kMaxUsersLimit == uint64_t{kNoInternalId});  // ids 0 .. 2^32 - 2; 2^32 - 1 is "none"
  GraphOptions o;
  o.max_users = 0;
  CHECK(ValidateGraphOptions(o).code() == Code::kInvalidArgument);
  o.max_users = kMaxUsersLimit + 1;
  CHECK(ValidateGraphOptions(o).message().find("max_users") != std::string::npos);
  o.max_users = kMaxUsersLimit;
  CHECK(ValidateGraphOptions(o).ok());
}

TEST_CASE("follow: the cap is enforced with its own error, and unfollow makes room") {
  GraphOptions o;
  o.max_following = 3;
  o.rate_limit.enabled = false;
  Fixture f(o);
  for (UserId b = 2; b <= 4; ++b) f.MustFollow(1, b);
  auto r = f.graph->Follow(1, 5);
  CHECK(r.status().code() == Code::kFollowLimit);
  CHECK(f.graph->user_count() == 4);               // user 5 was not created
  CHECK(f.graph->Follow(1, 4)->created == false);  // an existing edge is not refused
  CHECK(*f.graph->Unfollow(1, 2));
  CHECK(f.MustFollow(1, 5).created);
}

TEST_CASE("follow: the rate limiter refuses with the wait until the next token") {
  GraphOptions o;
  o.rate_limit = {true, 2, 1};  // 2 tokens, 1 per second
  Fixture f(o);
  f.MustFollow(1, 2);
  f.MustFollow(1, 3);
  auto r = f.graph->Follow(1, 4);
  REQUIRE(r.status().code() == Code::kRateLimited);
  CHECK(r.status().retry_after_ms() == 1000);
  f.clock.Advance(400);
  CHECK(f.graph->Follow(1, 4).status().retry_after_ms() == 600);
  f.MustFollow(9, 4);  // other followers have their own bucket
  f.clock.Advance(600);
  CHECK(f.MustFollow(1, 4).created);
  CHECK(f.graph->Follow(1, 2)->created == false);  // re-following costs no token
}

TEST_CASE("follow: engine time never goes backwards when the clock does") {
  Fixture f;
  f.MustFollow(1, 2);
  f.clock.Advance(-10'000);
  CHECK(f.MustFollow(1, 3).followed_at == 1'700'000'000'000);
}

TEST_CASE("follow_at: uses the caller's time and rejects times out of range") {
  Fixture f;
  CHECK(f.graph->FollowAt(1, 2, 42)->followed_at == 42);
  CHECK(f.graph->FollowAt(1, 3, -1).status().code() == Code::kInvalidArgument);
  CHECK(f.graph->FollowAt(1, 3, kMaxTimestampMs + 1).status().code() == Code::kInvalidArgument);
  CHECK(f.graph->FollowAt(1, 3, kMaxTimestampMs)->followed_at == kMaxTimestampMs);
}

TEST_CASE("unfollow: removes the edge, its mutual bits and counters; absent edge is no change") {
  Fixture f;
  f.MustFollow(1, 2);
  f.MustFollow(2, 1);
  CHECK(*f.graph->Unfollow(1, 2));
  CHECK_FALSE(*f.graph->Unfollow(1, 2));
  CHECK_FALSE(*f.graph->Unfollow(7, 8));
  CHECK(*f.graph->GetRelation(1, 2) == Relation::kFollowedBy);
  CHECK(*f.graph->GetRelation(2, 1) == Relation::kFollowing);
  CHECK(*f.graph->GetCounts(1) == Counts{0, 1, 0});
  CHECK(*f.graph->GetCounts(2) == Counts{1, 0, 0});
  CHECK(f.graph->Unfollow(0, 1).status().code() == Code::kInvalidUserId);
}

TEST_CASE("relation: all four states, self, unknown users and the batch form") {
  Fixture f;
  f.MustFollow(1, 2);
  f.MustFollow(3, 1);
  f.MustFollow(1, 4);
  f.MustFollow(4, 1);
  CHECK(*f.graph->GetRelation(1, 2) == Relation::kFollowing);
  CHECK(*f.graph->GetRelation(1, 3) == Relation::kFollowedBy);
  CHECK(*f.graph->GetRelation(1, 4) == Relation::kMutual);
  CHECK(*f.graph->GetRelation(1, 99) == Relation::kNone);
  CHECK(*f.graph->GetRelation(1, 1) == Relation::kNone);
  CHECK(f.graph->GetRelation(1, 0).status().code() == Code::kInvalidUserId);
  std::vector<UserId> batch{2, 3, 4, 99, 1};
  CHECK(*f.graph->GetRelations(1, batch) ==
        std::vector<Relation>{Relation::kFollowing, Relation::kFollowedBy, Relation::kMutual,
                              Relation::kNone, Relation::kNone});
  CHECK(f.graph->GetRelations(1, {}).status().code() == Code::kInvalidArgument);
  std::vector<UserId> too_many(kMaxBatchSize + 1, 2);
  CHECK(f.graph->GetRelations(1, too_many).status().code() == Code::kInvalidArgument);
  std::vector<UserId> with_zero{2, 0};
  auto bad = f.graph->GetRelations(1, with_zero);
  CHECK(bad.status().code() == Code::kInvalidUserId);
  CHECK(bad.status().message().find("position 1") != std::string::npos);
}

TEST_CASE("lists: newest first, ties broken by larger user id first") {
  Fixture f;
  f.MustFollow(1, 5);
  f.MustFollow(1, 9);  // same millisecond as 5
  f.clock.Advance(1);
  f.MustFollow(1, 3);
  CHECK(f.Users(f.graph->Following(1, f.Req())) == std::vector<UserId>{3, 9, 5});
  f.MustFollow(7, 3);
  f.MustFollow(8, 3);
  CHECK(f.Users(f.graph->Fans(3, f.Req())) == std::vector<UserId>{8, 7, 1});
}

TEST_CASE("lists: offset and cursor pages with next cursors; unknown users are empty") {
  Fixture f;
  for (UserId b = 10; b < 20; ++b) {
    f.MustFollow(1, b);
    f.clock.Advance(1);
  }
  auto p = f.graph->Following(1, f.Req(4));
  CHECK(f.Users(p) == std::vector<UserId>{19, 18, 17, 16});
  REQUIRE(p->next);
  CHECK(p->next->user == 16);
  PageRequest r = f.Req(4);
  r.after = p->next;
  CHECK(f.Users(f.graph->Following(1, r)) == std::vector<UserId>{15, 14, 13, 12});
  r.after.reset();
  r.offset = 8;
  auto last = f.graph->Following(1, r);
  CHECK(f.Users(last) == std::vector<UserId>{11, 10});
  CHECK_FALSE(last->next);
  r.offset = 50;
  CHECK(f.graph->Following(1, r)->entries.empty());
  CHECK(f.graph->Fans(12345, f.Req())->entries.empty());
  CHECK(*f.graph->GetCounts(12345) == Counts{});
}

TEST_CASE("lists: limit out of range and viewer 0 are rejected") {
  Fixture f;
  CHECK(f.graph->Following(1, f.Req(0)).status().code() == Code::kInvalidArgument);
  CHECK(f.graph->Fans(1, f.Req(kMaxPageLimit + 1)).status().code() == Code::kInvalidArgument);
  CHECK(f.graph->Friends(0, f.Req()).status().code() == Code::kInvalidUserId);
  PageRequest r = f.Req();
  r.viewer = 0;
  CHECK(f.graph->Following(1, r).status().code() == Code::kInvalidUserId);
}

TEST_CASE("lists: a viewer sees its relation to each listed user") {
  Fixture f;
  f.MustFollow(2, 1);  // fans of 1: 2, 3, 4
  f.MustFollow(3, 1);
  f.MustFollow(4, 1);
  f.MustFollow(9, 2);  // viewer 9 follows 2, is followed by 3, mutual with 4
  f.MustFollow(3, 9);
  f.MustFollow(9, 4);
  f.MustFollow(4, 9);
  PageRequest r = f.Req();
  r.viewer = 9;
  auto p = f.graph->Fans(1, r);
  REQUIRE(p->entries.size() == 3);
  CHECK(p->entries[0].viewer_relation == Relation::kMutual);      // 4
  CHECK(p->entries[1].viewer_relation == Relation::kFollowedBy);  // 3
  CHECK(p->entries[2].viewer_relation == Relation::kFollowing);   // 2
}

TEST_CASE("friends: ordered by the time the pair became mutual") {
  Fixture f;
  f.MustFollow(1, 2);  // t0
  f.clock.Advance(10);
  f.MustFollow(3, 1);  // t10
  f.clock.Advance(10);
  f.MustFollow(1, 3);  // t20: 1 and 3 become friends
  f.clock.Advance(10);
  f.MustFollow(2, 1);  // t30: 1 and 2 become friends
  auto p = f.graph->Friends(1, f.Req());
  REQUIRE(p->entries.size() == 2);
  CHECK(p->entries[0] == ListEntry{2, 1'700'000'000'030, Relation::kNone, true});
  CHECK(p->entries[1] == ListEntry{3, 1'700'000'000'020, Relation::kNone, true});
}

TEST_CASE("known_followers: the users I follow who follow the target, with a total") {
  Fixture f;
  for (UserId x : {2, 3, 4, 5}) {
    f.MustFollow(1, x);
    f.clock.Advance(1);
  }
  f.MustFollow(2, 100);
  f.MustFollow(4, 100);
  f.MustFollow(5, 100);
  f.MustFollow(6, 100);  // 1 does not follow 6
  auto k = f.graph->GetKnownFollowers(1, 100, 2);
  REQUIRE(k.ok());
  CHECK(k->total == 3);
  CHECK(k->users == std::vector<UserId>{5, 4});
  CHECK(f.graph->GetKnownFollowers(1, 100, 0)->total == 3);
  CHECK(f.graph->GetKnownFollowers(1, 100, kMaxPageLimit + 1).status().code() ==
        Code::kInvalidArgument);
  CHECK(f.graph->GetKnownFollowers(0, 100, 1).status().code() == Code::kInvalidUserId);
}

TEST_CASE("remove_user: every edge in and out goes, and all counters stay exact") {
  Fixture f;
  f.MustFollow(1, 2);
  f.MustFollow(2, 1);
  f.MustFollow(3, 1);
  f.MustFollow(1, 4);
  f.MustFollow(2, 4);
  CHECK(*f.graph->RemoveUser(1) == 4);
  CHECK(*f.graph->GetCounts(1) == Counts{});
  CHECK(*f.graph->GetCounts(2) == Counts{1, 0, 0});
  CHECK(*f.graph->GetCounts(3) == Counts{0, 0, 0});
  CHECK(*f.graph->GetCounts(4) == Counts{0, 1, 0});
  CHECK(f.graph->edge_count() == 1);
  CHECK(*f.graph->RemoveUser(1) == 0);
  CHECK(*f.graph->RemoveUser(777) == 0);
  CHECK(f.graph->RemoveUser(0).status().code() == Code::kInvalidUserId);
}

TEST_CASE("a celebrity's fan list: deep pages by cursor and offset, and unfollows inside it") {
  GraphOptions o;
  o.rate_limit.enabled = false;
  o.fan_chunk_entries = 16;
  Fixture f(o);
  const UserId star = 1;
  for (UserId fan = 2; fan < 2002; ++fan) {
    f.MustFollow(fan, star);
    if (fan % 3 == 0) f.clock.Advance(1);
  }
  for (UserId fan = 2; fan < 2002; fan += 7) CHECK(*f.graph->Unfollow(fan, star));
  const uint32_t n = f.graph->GetCounts(star)->fans;
  CHECK(n == 2000 - 286);
  PageRequest r = f.Req(1000);
  std::vector<UserId> all = f.Users(f.graph->Fans(star, r));
  r.after = f.graph->Fans(star, r)->next;
  for (UserId u : f.Users(f.graph->Fans(star, r))) all.push_back(u);
  REQUIRE(all.size() == n);
  PageRequest deep = f.Req(20);
  deep.offset = 1500;
  CHECK(f.Users(f.graph->Fans(star, deep)) ==
        std::vector<UserId>(all.begin() + 1500, all.begin() + 1520));
}

// id_growth_step reaches the id map: at a step of 2 a growth of a 20,000-user map takes about
// half as many new users as it moves, at the default 1,024 a few dozen.
TEST_CASE("graph: id_growth_step sets how much of a growth each new user moves") {
  for (const uint32_t step : {2u, 0u}) {
    CAPTURE(step);
    GraphOptions o;
    o.rate_limit.enabled = false;
    o.id_growth_step = step;
    Graph g(o);
    UserId next = 1;
    while (g.user_count() < 20'000 || !g.id_index_growing()) {
      REQUIRE(g.Follow(next, next + 1).ok());
      next += 2;
    }
    const size_t moving = g.user_count();
    size_t fresh = 0;
    while (g.id_index_growing()) {
      REQUIRE(g.Follow(next, next + 1).ok());
      next += 2;
      fresh += 2;
    }
    if (step == 2) {
      CHECK(fresh >= moving / 3);
    } else {
      CHECK(fresh <= moving / IdMap::kGrowthStep + 2);
    }
  }
}

TEST_CASE("options: out-of-range values are rejected by name") {
  GraphOptions o;
  o.max_following = 0;
  CHECK(ValidateGraphOptions(o).message().find("max_following") != std::string::npos);
  o = {};
  o.rate_limit.refill_per_second = 0;
  CHECK_FALSE(ValidateGraphOptions(o).ok());
  o.rate_limit.enabled = false;
  CHECK(ValidateGraphOptions(o).ok());
  o.fan_chunk_entries = 2;
  CHECK_FALSE(ValidateGraphOptions(o).ok());
  o = {};
  for (uint32_t step : {1u, (1u << 20) + 1}) {
    o.id_growth_step = step;
    CHECK(ValidateGraphOptions(o).message().find("id_growth_step") != std::string::npos);
  }
  for (uint32_t step : {0u, 2u, 1u << 20}) {
    o.id_growth_step = step;
    CHECK(ValidateGraphOptions(o).ok());
  }
}

}  // namespace
}  // namespace relgraph

namespace relgraph {
namespace {

TEST_CASE("replay: exact, ensuring and checked replays of the logged changes rebuild the graph") {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    ManualClock clock;
    GraphOptions o;
    o.clock = &clock;
    o.rate_limit.enabled = false;
    o.fan_chunk_entries = 4;
    Graph live(o);
    std::vector<Graph::ReplayOp> log;  // what a Db logs: only the calls that changed the graph
    for (int i = 0; i < 20'000; ++i) {
      clock.Advance(static_cast<TimestampMs>(rng() % 2));
      const UserId a = 1 + rng() % 80, b = rng() % 2 ? 1 + rng() % 4 : 1 + rng() % 80;
      const int dice = static_cast<int>(rng() % 100);
      if (dice < 65) {
        auto r = live.Follow(a, b);
        if (r.ok() && r->created) log.push_back({Graph::ReplayOp::kFollow, a, b, r->followed_at});
      } else if (dice < 99) {
        auto r = live.Unfollow(a, b);
        if (r.ok() && *r) log.push_back({Graph::ReplayOp::kUnfollow, a, b, 0});
      } else if (*live.RemoveUser(a) > 0) {
        log.push_back({Graph::ReplayOp::kRemoveUser, a, 0, 0});
      }
    }
    for (Graph::ReplayMode mode :
         {Graph::ReplayMode::kExact, Graph::ReplayMode::kEnsure, Graph::ReplayMode::kChecked}) {
      CAPTURE(static_cast<int>(mode));
      Graph replayed(o);
      size_t hooked = 0;
      const Graph::AppliedEdgeHook count_edge_ops = [&](const Graph::ReplayOp& op, InternalId a,
                                                        InternalId b) {
        // The hook sees the change already made, under the ids the graph gives its users.
        CHECK(replayed.FindUser(op.a) == a);
        CHECK(replayed.FindUser(op.b) == b);
        CHECK(replayed.FollowsInternal(a, b) == (op.kind == Graph::ReplayOp::kFollow));
        ++hooked;
      };
      REQUIRE(replayed.ApplyBatch(log, mode, count_edge_ops).ok());
      REQUIRE(replayed.CheckInvariants().ok());
      CHECK(replayed.Digest() == live.Digest());
      CHECK(replayed.edge_count() == live.edge_count());
      CHECK(hooked == static_cast<size_t>(std::count_if(log.begin(), log.end(), [](auto& op) {
              return op.kind != Graph::ReplayOp::kRemoveUser;
            })));
    }
  }
}

bool Follows(const Graph& g, UserId a, UserId b) {
  const Relation r = *g.GetRelation(a, b);
  return r == Relation::kFollowing || r == Relation::kMutual;
}

TEST_CASE("replay: the checked mode refuses an op that does not fit, and stops before it") {
  std::mt19937_64 rng(7);
  GraphOptions o;
  o.rate_limit.enabled = false;
  for (int round = 0; round < 200; ++round) {
    CAPTURE(round);
    // A valid log of follows and unfollows, then one op that cannot fit the state it meets:
    // a follow of an edge that exists or an unfollow of one that does not.
    Graph reference(o);
    std::vector<Graph::ReplayOp> log;
    for (int i = 0; i < 50; ++i) {
      const UserId a = 1 + rng() % 6, b = 1 + rng() % 6;
      if (a == b) continue;
      const bool exists = Follows(reference, a, b);
      const auto kind = exists ? Graph::ReplayOp::kUnfollow : Graph::ReplayOp::kFollow;
      log.push_back({kind, a, b, exists ? 0 : 1000 + i});
      REQUIRE(reference.ApplyBatch(std::span(&log.back(), 1), Graph::ReplayMode::kChecked).ok());
    }
    UserId a = 0, b = 0;
    while (a == b) a = 1 + rng() % 7, b = 1 + rng() % 7;  // 7: maybe a user never seen
    const bool exists = Follows(reference, a, b);
    log.push_back({exists ? Graph::ReplayOp::kFollow : Graph::ReplayOp::kUnfollow, a, b, 5});
    const size_t extra = rng() % 3;  // ops after the bad one must not be applied
    for (size_t i = 0; i < extra; ++i) log.push_back({Graph::ReplayOp::kRemoveUser, a, 0, 0});

    Graph replayed(o);
    Status s = replayed.ApplyBatch(log, Graph::ReplayMode::kChecked);
    CHECK(s.code() == (exists ? Code::kAlreadyExists : Code::kNotFound));
    CHECK(static_cast<size_t>(s.detail()) == log.size() - 1 - extra);
    CHECK(replayed.Digest() == reference.Digest());
    REQUIRE(replayed.CheckInvariants().ok());
  }
}

}  // namespace
}  // namespace relgraph
