// Graph's operations in steps (graph_steps.cpp): a removal or a switch to public run in steps,
// with random changes between the steps, ends in the state of the one-shot operation followed
// by those changes' decided outcomes replayed (what recovery and replicas do with the WAL).
#include <doctest.h>

#include <random>

#include "engine/graph/clock.h"
#include "engine/graph/graph.h"

namespace relgraph {
namespace {

constexpr UserId kTarget = 100;
constexpr UserId kUsers = 30;

GraphOptions Options(ManualClock* clock) {
  GraphOptions o;
  o.clock = clock;
  o.rate_limit.enabled = false;
  o.max_following = 100;
  o.fan_chunk_entries = 4;  // the target's fans and requests span several chunks
  return o;
}

UserId AnyUser(std::mt19937_64& rng) {
  return rng() % 5 == 0 ? kTarget : 1 + rng() % kUsers;
}

// A client change on `live`; what it decided is replayed on `replay` by the ensure forms.
void ChangeBoth(Graph& live, Graph& replay, std::mt19937_64& rng) {
  const UserId a = AnyUser(rng), b = AnyUser(rng);
  switch (rng() % 6) {
    case 0:
    case 1:
      if (auto r = live.Follow(a, b); r.ok() && r->created) {
        REQUIRE((Has(r->relation, Relation::kRequested) ? replay.ApplyRequest(a, b, r->followed_at)
                                                        : replay.ApplyFollow(a, b, r->followed_at))
                    .ok());
      }
      break;
    case 2:
      if (auto r = live.Unfollow(a, b); r.ok() && *r) {
        REQUIRE(replay.ApplyUnfollow(a, b, Graph::ReplayMode::kChecked).ok());
      }
      break;
    case 3:
      if (auto r = live.Block(a, b); r.ok() && r->created)
        REQUIRE(replay.ApplyBlock(a, b, r->ts).ok());
      break;
    case 4:
      if (auto r = live.Approve(kTarget, b); r.ok()) {
        REQUIRE(replay.ApplyApprove(kTarget, b, r->followed_at).ok());
      }
      break;
    default:
      if (auto r = live.Withdraw(a, kTarget); r.ok() && *r) {
        REQUIRE(replay.ApplyRemoveRequest(kTarget, a).ok());
      }
      break;
  }
}

TEST_CASE("graph steps: random changes between the steps end where the one-shot replay ends") {
  for (int round = 0; round < 200; ++round) {
    CAPTURE(round);
    std::mt19937_64 rng(round);
    ManualClock clock(1000);
    Graph live(Options(&clock)), replay(Options(&clock));
    // The same start on both: follows among the users, many of the target (a request when it
    // is private), a few blocks.
    const bool go_public = round % 2 == 1;
    if (go_public) {
      REQUIRE(live.SetPrivate(kTarget, true).ok());
      REQUIRE(replay.SetPrivate(kTarget, true).ok());
    }
    for (int k = 0; k < 120; ++k) {
      clock.Advance(1);
      ChangeBoth(live, replay, rng);
    }
    REQUIRE(live.Digest() == replay.Digest());
    clock.Advance(1);
    if (go_public) {
      auto r = live.SetPrivateInSteps(kTarget, false);
      REQUIRE(r.ok());
      REQUIRE(replay.ApplySetPrivate(kTarget, false, r->ts).ok());
    } else {
      REQUIRE(live.BeginRemoveUser(kTarget).ok());
      REQUIRE(replay.ApplyRemoveUser(kTarget).ok());
    }
    while (live.unfinished()) {
      REQUIRE(live.CheckInvariants().ok());
      for (int k = rng() % 4; k > 0; --k) {
        clock.Advance(1);
        ChangeBoth(live, replay, rng);
      }
      live.RunSteps(1 + rng() % 3);
    }
    REQUIRE(live.CheckInvariants().ok());
    CHECK(live.Digest() == replay.Digest());
    CHECK(live.edge_count() == replay.edge_count());
  }
}

TEST_CASE("graph steps: a replayed change naming a user being removed finishes the removal first") {
  ManualClock clock(1000);
  Graph g(Options(&clock));
  for (UserId u = 1; u <= 20; ++u) REQUIRE(g.Follow(u, kTarget).ok());
  REQUIRE(g.BeginRemoveUser(kTarget).ok());
  g.RunSteps(2);
  REQUIRE(g.unfinished());
  CHECK(g.IsBeingRemoved(kTarget));
  CHECK(g.Follow(1, kTarget).status().code() == Code::kUnavailable);
  REQUIRE(g.ApplyFollow(1, kTarget, 5000).ok());  // the removal is done, then this follow
  CHECK(!g.unfinished());
  CHECK(g.GetCounts(kTarget)->fans == 1);
  CHECK(g.CheckInvariants().ok());
}

}  // namespace
}  // namespace relgraph
