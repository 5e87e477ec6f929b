#include <doctest.h>

#include <random>

#include "engine/clock.h"
#include "engine/graph_builder.h"

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
    Graph::FollowingSlice slice;
    original.CopyFollowing(0, original.user_count(), &slice);
    GraphBuilder builder(o);
    size_t at = 0;
    for (size_t i = 0; i < slice.followers.size(); ++i) {
      // Split lists across calls, as snapshot blocks do.
      const uint32_t n = slice.counts[i], half = n / 2;
      REQUIRE(
          builder.AddFollowing(slice.followers[i], std::span(slice.edges.data() + at, half)).ok());
      REQUIRE(
          builder
              .AddFollowing(slice.followers[i], std::span(slice.edges.data() + at + half, n - half))
              .ok());
      at += n;
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
}

}  // namespace
}  // namespace relgraph
