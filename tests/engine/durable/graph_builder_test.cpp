#include <doctest.h>

#include <random>

#include "engine/durable/graph_builder.h"
#include "engine/graph/clock.h"

namespace relgraph {
namespace {

std::vector<ListEntry> All(const Graph& g, UserId u, int which) {
  PageRequest r;
  r.limit = kMaxPageLimit;
  std::vector<ListEntry> out;
  for (;;) {
    auto p = which == 0 ? g.Following(u, r) : which == 1 ? g.Fans(u, r) : g.Friends(u, r);
    REQUIRE(p.ok());
    out.insert(out.end(), p->entries.begin(), p->entries.end());
    if (!p->next) return out;
    r.after = p->next;
  }
}

TEST_CASE("graph_builder: a graph rebuilt from its following lists answers every query the same") {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    ManualClock clock;
    GraphOptions o;
    o.rate_limit.enabled = false;
    o.clock = &clock;
    o.fan_chunk_entries = seed % 2 ? 4 : 256;  // chunked fan lists too
    Graph original(o);
    for (int i = 0; i < 20'000; ++i) {
      clock.Advance(static_cast<TimestampMs>(rng() % 3));  // ties on time are common
      const UserId a = 1 + rng() % 150, b = rng() % 4 == 0 ? 1 + rng() % 5 : 1 + rng() % 150;
      if (rng() % 5 == 0)
        original.Unfollow(a, b).status().IgnoreError();
      else
        original.Follow(a, b).status().IgnoreError();
    }
    // Each follower's list in list order, as a snapshot holds it (ForEachEdge groups by
    // follower).
    std::vector<std::pair<UserId, std::vector<SnapshotEdge>>> lists;
    original.ForEachEdge([&](UserId a, UserId b, TimestampMs ts) {
      if (lists.empty() || lists.back().first != a) lists.push_back({a, {}});
      lists.back().second.push_back({b, ts});
    });
    GraphBuilder builder(o);
    for (const auto& [follower, edges] : lists) {
      // Split lists across calls, as snapshot blocks do.
      const size_t half = edges.size() / 2;
      REQUIRE(builder.AddFollowing(follower, std::span(edges.data(), half)).ok());
      REQUIRE(builder.AddFollowing(follower, std::span(edges).subspan(half)).ok());
    }
    std::unique_ptr<Graph> built = builder.Finish();
    REQUIRE(built->CheckInvariants().ok());
    CHECK(built->edge_count() == original.edge_count());
    for (UserId u = 1; u <= 150; ++u) {
      CAPTURE(u);
      REQUIRE(*built->GetCounts(u) == *original.GetCounts(u));
      for (int which = 0; which < 3; ++which)
        REQUIRE(All(*built, u, which) == All(original, u, which));
    }
  }
}

TEST_CASE("graph_builder: lists out of order, repeated followees and bad ids are refused") {
  GraphOptions o;
  o.rate_limit.enabled = false;
  auto add = [&](std::vector<SnapshotEdge> edges, UserId follower = 1) {
    GraphBuilder b(o);
    return b.AddFollowing(follower, edges).code();
  };
  CHECK(add({{2, 10}, {3, 11}}) == Code::kOk);
  CHECK(add({{2, 10}, {3, 9}}) == Code::kCorruption);   // time goes backwards
  CHECK(add({{3, 10}, {2, 10}}) == Code::kCorruption);  // tie broken the wrong way
  CHECK(add({{2, 10}, {2, 11}}) == Code::kCorruption);  // same followee twice
  CHECK(add({{1, 10}}) == Code::kSelfFollow);
  CHECK(add({{0, 10}}) == Code::kInvalidUserId);
  CHECK(add({{2, 10}}, 0) == Code::kInvalidUserId);
  CHECK(add({{2, -1}}) == Code::kInvalidArgument);
  // One more followee than a following list holds (and than the largest follow cap).
  std::vector<SnapshotEdge> many;
  for (uint32_t i = 0; i <= FollowingList::kMaxSize; ++i) many.push_back({UserId{i} + 2, i});
  CHECK(add(many) == Code::kCorruption);
  many.pop_back();
  CHECK(add(many) == Code::kOk);
}

}  // namespace
}  // namespace relgraph
