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

using Lists = std::vector<std::pair<UserId, std::vector<SnapshotEdge>>>;

// A graph built from `lists`, each list split across two calls, as snapshot blocks do.
std::unique_ptr<Graph> Build(const GraphOptions& o, const Lists& lists) {
  GraphBuilder builder(o);
  for (const auto& [follower, edges] : lists) {
    const size_t half = edges.size() / 2;
    REQUIRE(builder.AddFollowing(follower, std::span(edges.data(), half)).ok());
    REQUIRE(builder.AddFollowing(follower, std::span(edges).subspan(half)).ok());
  }
  auto finished = builder.Finish();
  REQUIRE(finished.ok());
  return std::move(*finished);
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
    Lists lists;
    original.ForEachEdge([&](UserId a, UserId b, TimestampMs ts) {
      if (lists.empty() || lists.back().first != a) lists.push_back({a, {}});
      lists.back().second.push_back({b, ts});
    });
    std::unique_ptr<Graph> built = Build(o, lists);
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

TEST_CASE("graph_builder: times kept in seconds re-order a list within a second, as follows do") {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    ManualClock clock;
    GraphOptions exact;
    exact.rate_limit.enabled = false;
    exact.clock = &clock;
    exact.fan_chunk_entries = seed % 2 ? 4 : 256;
    Graph original(exact);  // milliseconds, as the snapshot's edge lists hold them
    for (int i = 0; i < 8'000; ++i) {
      clock.Advance(static_cast<TimestampMs>(rng() % 400));  // several follows a second
      const UserId a = 1 + rng() % 80, b = 1 + rng() % 80;
      original.Follow(a, b).status().IgnoreError();
    }
    GraphOptions seconds = exact;
    seconds.time_resolution_ms = 1000;
    Graph expected(seconds);  // the same follows, one at a time
    Lists lists;
    original.ForEachEdge([&](UserId a, UserId b, TimestampMs ts) {
      REQUIRE(expected.FollowAt(a, b, ts).ok());
      if (lists.empty() || lists.back().first != a) lists.push_back({a, {}});
      lists.back().second.push_back({b, ts});
    });
    std::unique_ptr<Graph> built = Build(seconds, lists);
    REQUIRE(built->CheckInvariants().ok());
    CHECK(built->Digest() == expected.Digest());
    for (UserId u = 1; u <= 80; ++u) {
      CAPTURE(u);
      for (int which = 0; which < 3; ++which) {
        const std::vector<ListEntry> got = All(*built, u, which);
        REQUIRE(got == All(expected, u, which));
        for (const ListEntry& e : got) REQUIRE(e.ts % 1000 == 0);
      }
    }
  }
}

}  // namespace
}  // namespace relgraph
