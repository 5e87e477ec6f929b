// The streamed generator of the scale run: its stream is exactly its followers' lists, it is
// deterministic, and its shape matches the in-memory generator's at the same size.
#include "tools/bench/scale_generator.h"

#include <doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace relgraph::bench {
namespace {

struct Shape {
  uint64_t edges = 0;
  uint64_t followers = 0;  // users with at least one followee
  uint64_t with_fans = 0;  // users with at least one fan
  uint64_t top_fans = 0;   // fans of the most followed user
  uint32_t max_degree = 0;
};

Shape ShapeOf(const std::vector<BenchEdge>& edges) {
  std::unordered_map<UserId, uint32_t> out, in;
  for (const BenchEdge& e : edges) {
    ++out[e.follower];
    ++in[e.followee];
  }
  Shape s;
  s.edges = edges.size();
  s.followers = out.size();
  s.with_fans = in.size();
  for (const auto& [u, n] : in) s.top_fans = std::max<uint64_t>(s.top_fans, n);
  for (const auto& [u, n] : out) s.max_degree = std::max(s.max_degree, n);
  return s;
}

std::vector<BenchEdge> Stream(ScaleGenerator& g) {
  std::vector<BenchEdge> all, window;
  while (g.Next(&window)) all.insert(all.end(), window.begin(), window.end());
  return all;
}

TEST_CASE("scale generator: the stream is every follower's list, once, the same on every run") {
  ScaleGenerator g(300'000, 7, 50);
  const std::vector<BenchEdge> edges = Stream(g);
  ScaleGenerator again(300'000, 7, 50);
  const std::vector<BenchEdge> repeated = Stream(again);
  REQUIRE(edges.size() == repeated.size());
  CHECK(std::equal(edges.begin(), edges.end(), repeated.begin(), [](const auto& x, const auto& y) {
    return x.follower == y.follower && x.followee == y.followee && x.ts == y.ts;
  }));

  // Grouped by follower, the stream holds exactly FolloweesOf(k) with TimeOf(k, i).
  std::map<UserId, std::vector<std::pair<UserId, TimestampMs>>> by_follower;
  for (const BenchEdge& e : edges) by_follower[e.follower].push_back({e.followee, e.ts});
  CHECK(by_follower.size() == g.followers());
  std::vector<UserId> list;
  for (uint64_t k = 0; k < g.followers(); ++k) {
    g.FolloweesOf(k, &list);
    auto& got = by_follower[ScaleGenerator::IdOf(k)];
    REQUIRE(got.size() == list.size());
    std::vector<std::pair<UserId, TimestampMs>> want;
    for (size_t i = 0; i < list.size(); ++i) want.push_back({list[i], g.TimeOf(k, i)});
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    CHECK(got == want);
    // No repeat, no self-follow, within the cap.
    CHECK(std::set<UserId>(list.begin(), list.end()).size() == list.size());
    CHECK(std::find(list.begin(), list.end(), ScaleGenerator::IdOf(k)) == list.end());
    CHECK(list.size() <= 50);
    CHECK(!list.empty());
  }
  // A different seed is a different graph.
  ScaleGenerator other(300'000, 8, 50);
  std::vector<UserId> first, second;
  g.FolloweesOf(3, &first);
  other.FolloweesOf(3, &second);
  CHECK(first != second);
}

TEST_CASE("scale generator: ids are distinct and nonzero, times span ten years from 2016") {
  std::unordered_set<UserId> ids;
  for (uint64_t i = 0; i < 200'000; ++i) {
    const UserId id = ScaleGenerator::IdOf(i);
    CHECK(id != 0);
    ids.insert(id);
  }
  CHECK(ids.size() == 200'000);
  ScaleGenerator g(100'000, 1, 1000);
  TimestampMs lo = INT64_MAX, hi = 0;
  for (uint64_t k = 0; k < 5000; ++k) {
    for (size_t i = 0; i < 8; ++i) {
      lo = std::min(lo, g.TimeOf(k, i));
      hi = std::max(hi, g.TimeOf(k, i));
    }
  }
  CHECK(lo >= 1'451'606'400'000);
  CHECK(hi < 1'451'606'400'000 + 10LL * 365 * 24 * 3600 * 1000);
  CHECK(hi - lo > 9LL * 365 * 24 * 3600 * 1000);
  CHECK(g.TargetOfRank(0) != g.TargetOfRank(1));
}

TEST_CASE("scale generator: the shape of the in-memory generator at the same size") {
  constexpr uint64_t kEdges = 2'000'000;
  ScaleGenerator g(kEdges, 1, 1000);
  const Shape streamed = ShapeOf(Stream(g));
  // The in-memory generator's shape without follow-backs and bursts, which this one lacks.
  const Shape reference = ShapeOf(GenerateGraph(kEdges, 1, 1000, GraphShape::Even()).edges);
  INFO("streamed: " << streamed.edges << " edges, " << streamed.followers << " followers, "
                    << streamed.with_fans << " with fans, top " << streamed.top_fans);
  INFO("in memory: " << reference.edges << " edges, " << reference.followers << " followers, "
                     << reference.with_fans << " with fans, top " << reference.top_fans);
  const auto near = [](double a, double b, double tolerance) {
    return std::abs(a - b) <= tolerance * b;
  };
  CHECK(near(streamed.edges, kEdges, 0.01));
  CHECK(streamed.followers == g.followers());
  CHECK(near(streamed.followers, reference.followers, 0.01));
  CHECK(near(streamed.with_fans, reference.with_fans, 0.02));
  CHECK(streamed.with_fans >= g.targets());  // each target has its guaranteed fan
  CHECK(near(streamed.top_fans, reference.top_fans, 0.5));
  CHECK(streamed.max_degree <= 1000);
  // The most followed user is rank 0.
  std::unordered_map<UserId, uint64_t> fans;
  ScaleGenerator again(kEdges, 1, 1000);
  for (const BenchEdge& e : Stream(again)) ++fans[e.followee];
  CHECK(fans[g.TargetOfRank(0)] == streamed.top_fans);
}

}  // namespace
}  // namespace relgraph::bench
