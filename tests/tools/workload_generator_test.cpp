// The in-memory graph generator (tools/bench/workload_generator.h, graph_shape.h): the edge
// count, no repeats, no self-follows, the cap; the reciprocity asked for; times strictly
// increasing in arrival order within the ten years; bursts (a follower's next follow seconds
// later, often) with the bursty shape and none with the even one; deterministic by seed.
#include "tools/bench/workload_generator.h"

#include <doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace relgraph::bench {
namespace {

struct Measured {
  double reciprocity = 0;
  double burst_share = 0;  // of a follower's follows, the share within 60 s of its previous one
  uint32_t max_following = 0;
  uint64_t top_fans = 0;
  uint64_t self_follows = 0, repeated_edges = 0;
};

Measured Measure(const GeneratedGraph& g) {
  std::set<std::pair<UserId, UserId>> pairs;
  std::unordered_map<UserId, uint32_t> following;
  std::unordered_map<UserId, uint64_t> fans;
  std::unordered_map<UserId, TimestampMs> last_follow;
  uint64_t bursts = 0, repeats = 0;
  Measured m;
  for (const BenchEdge& e : g.edges) {
    m.self_follows += e.follower == e.followee ? 1 : 0;
    m.repeated_edges += pairs.insert({e.follower, e.followee}).second ? 0 : 1;
    ++following[e.follower];
    ++fans[e.followee];
    auto [it, first] = last_follow.try_emplace(e.follower, e.ts);
    if (!first) {
      ++repeats;
      if (e.ts - it->second <= 60'000) ++bursts;
      it->second = e.ts;
    }
  }
  uint64_t mutual = 0;
  for (const auto& [a, b] : pairs) mutual += pairs.count({b, a});
  m.reciprocity = static_cast<double>(mutual) / static_cast<double>(pairs.size());
  m.burst_share = static_cast<double>(bursts) / static_cast<double>(std::max<uint64_t>(1, repeats));
  for (const auto& [u, n] : following) m.max_following = std::max(m.max_following, n);
  for (const auto& [u, n] : fans) m.top_fans = std::max(m.top_fans, n);
  return m;
}

void CheckTimes(const GeneratedGraph& g) {
  uint64_t out_of_order = 0;
  for (size_t i = 1; i < g.edges.size(); ++i)
    out_of_order += g.edges[i].ts > g.edges[i - 1].ts ? 0 : 1;
  CHECK(out_of_order == 0);
  CHECK(g.edges.front().ts >= kGraphEpochStart);
  // A bump of a millisecond per collision may pass the end by a little, never by a day.
  CHECK(g.edges.back().ts < kGraphEpochStart + kGraphSpanMs + 86'400'000);
}

TEST_CASE("generator: the default shape has the reciprocity asked for and bursty times") {
  constexpr uint64_t kEdges = 400'000;
  const GeneratedGraph g = GenerateGraph(kEdges, 3, 1000);
  INFO(g.description);
  CHECK(std::abs(static_cast<double>(g.edges.size()) - kEdges) <= kEdges * 0.005);
  CheckTimes(g);
  const Measured m = Measure(g);
  INFO("reciprocity " << m.reciprocity << ", bursts " << m.burst_share << ", top fans "
                      << m.top_fans);
  CHECK(m.self_follows == 0);
  CHECK(m.repeated_edges == 0);
  CHECK(m.reciprocity == doctest::Approx(0.22).epsilon(0.1));
  CHECK(m.max_following <= 1000);
  CHECK(m.burst_share > 0.5);        // sessions: most follows come seconds after the previous
  CHECK(m.top_fans > kEdges / 200);  // a power-law head
  for (double r : {0.06, 0.41, 0.84}) {
    GraphShape shape;
    shape.reciprocity = r;
    const Measured other = Measure(GenerateGraph(kEdges, 3, 1000, shape));
    CAPTURE(r);
    CHECK(other.reciprocity == doctest::Approx(r).epsilon(0.1));
  }
}

TEST_CASE("generator: the even shape has no follow-backs and no bursts") {
  const GeneratedGraph g = GenerateGraph(200'000, 3, 1000, GraphShape::Even());
  INFO(g.description);
  CheckTimes(g);
  const Measured m = Measure(g);
  CHECK(m.self_follows == 0);
  CHECK(m.repeated_edges == 0);
  CHECK(m.reciprocity < 0.01);
  CHECK(m.burst_share < 0.05);
}

TEST_CASE("generator: the same seed gives the same graph, another seed another") {
  const GeneratedGraph a = GenerateGraph(50'000, 9, 100), b = GenerateGraph(50'000, 9, 100),
                       c = GenerateGraph(50'000, 10, 100);
  REQUIRE(a.edges.size() == b.edges.size());
  bool same = true;
  for (size_t i = 0; i < a.edges.size(); ++i) {
    same = same && a.edges[i].follower == b.edges[i].follower &&
           a.edges[i].followee == b.edges[i].followee && a.edges[i].ts == b.edges[i].ts;
  }
  CHECK(same);
  CHECK(a.description == b.description);
  CHECK(a.description != c.description);
  CHECK(Measure(a).max_following <= 100);
}

}  // namespace
}  // namespace relgraph::bench
