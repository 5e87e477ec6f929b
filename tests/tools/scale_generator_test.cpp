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

  // Grouped by follower, the stream holds exactly FolloweesOf(k) with its times.
  std::map<UserId, std::vector<std::pair<UserId, TimestampMs>>> by_follower;
  for (const BenchEdge& e : edges) by_follower[e.follower].push_back({e.followee, e.ts});
  CHECK(by_follower.size() == g.followers());
  std::vector<UserId> list;
  std::vector<TimestampMs> times;
  for (uint64_t k = 0; k < g.followers(); ++k) {
    g.FolloweesOf(k, &list, &times);
    auto& got = by_follower[ScaleGenerator::IdOf(k)];
    REQUIRE(got.size() == list.size());
    std::vector<std::pair<UserId, TimestampMs>> want;
    for (size_t i = 0; i < list.size(); ++i) want.push_back({list[i], times[i]});
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
  for (const GraphShape& shape : {GraphShape(), GraphShape::Even()}) {
    ScaleGenerator g(100'000, 1, 1000, shape);
    TimestampMs lo = INT64_MAX, hi = 0;
    std::vector<UserId> list;
    std::vector<TimestampMs> times;
    for (uint64_t k = 0; k < 5000; ++k) {
      g.FolloweesOf(k, &list, &times);
      REQUIRE(times.size() == list.size());
      for (TimestampMs t : times) {
        lo = std::min(lo, t);
        hi = std::max(hi, t);
      }
    }
    CAPTURE(shape.bursty_times);
    CHECK(lo >= 1'451'606'400'000);
    CHECK(hi < 1'451'606'400'000 + 10LL * 365 * 24 * 3600 * 1000);
    CHECK(hi - lo > 9LL * 365 * 24 * 3600 * 1000);
    CHECK(g.TargetOfRank(0) != g.TargetOfRank(1));
  }
}

// Of the edges, the share whose reverse is an edge too; of a follower's follows after its
// first (in time), the share within a minute of the one before.
std::pair<double, double> MutualAndBursts(const std::vector<BenchEdge>& edges) {
  std::set<std::pair<UserId, UserId>> pairs;
  std::unordered_map<UserId, std::vector<TimestampMs>> times;
  for (const BenchEdge& e : edges) {
    pairs.insert({e.follower, e.followee});
    times[e.follower].push_back(e.ts);
  }
  uint64_t mutual = 0, bursts = 0, gaps = 0;
  for (const auto& [a, b] : pairs) mutual += pairs.count({b, a});
  for (auto& [u, t] : times) {
    std::sort(t.begin(), t.end());
    for (size_t i = 1; i < t.size(); ++i, ++gaps) bursts += t[i] - t[i - 1] <= 60'000 ? 1 : 0;
  }
  return {static_cast<double>(mutual) / static_cast<double>(pairs.size()),
          static_cast<double>(bursts) / static_cast<double>(std::max<uint64_t>(gaps, 1))};
}

TEST_CASE("scale generator: the shape of the in-memory generator at the same size") {
  // The realistic shapes differ in who follows back (here: followers paired at random; in
  // memory: the fans of ordinary accounts), so followers and users with fans differ by a
  // tenth; the even shapes match closely.
  struct Case {
    GraphShape shape;
    uint64_t edges;
    double roles_tolerance;
  };
  for (const Case& c :
       {Case{GraphShape::Even(), 2'000'000, 0.01}, Case{GraphShape(), 500'000, 0.15}}) {
    const GraphShape& shape = c.shape;
    const uint64_t kEdges = c.edges;
    CAPTURE(shape.reciprocity);
    ScaleGenerator g(kEdges, 1, 1000, shape);
    const std::vector<BenchEdge> stream = Stream(g);
    const Shape streamed = ShapeOf(stream);
    const GeneratedGraph in_memory = GenerateGraph(kEdges, 1, 1000, shape);
    const Shape reference = ShapeOf(in_memory.edges);
    INFO("streamed: " << streamed.edges << " edges, " << streamed.followers << " followers, "
                      << streamed.with_fans << " with fans, top " << streamed.top_fans);
    INFO("in memory: " << reference.edges << " edges, " << reference.followers << " followers, "
                       << reference.with_fans << " with fans, top " << reference.top_fans);
    const auto near = [](double a, double b, double tolerance) {
      return std::abs(a - b) <= tolerance * b;
    };
    CHECK(near(streamed.edges, kEdges, 0.01));
    CHECK(streamed.followers == g.followers());
    CHECK(near(streamed.followers, reference.followers, c.roles_tolerance));
    CHECK(near(streamed.with_fans, reference.with_fans, 2 * c.roles_tolerance));
    CHECK(streamed.with_fans >= g.targets());  // each target has its guaranteed fan
    CHECK(near(streamed.top_fans, reference.top_fans, 0.5));
    CHECK(streamed.max_degree <= 1000);
    // The most followed user is rank 0.
    std::unordered_map<UserId, uint64_t> fans;
    for (const BenchEdge& e : stream) ++fans[e.followee];
    CHECK(fans[g.TargetOfRank(0)] == streamed.top_fans);
    // Follow-backs and sessions as the in-memory generator has them.
    const auto [mutual, bursts] = MutualAndBursts(stream);
    const auto [reference_mutual, reference_bursts] = MutualAndBursts(in_memory.edges);
    INFO("mutual " << mutual << " (in memory " << reference_mutual << "), bursts " << bursts
                   << " (in memory " << reference_bursts << ")");
    if (shape.reciprocity > 0) {
      CHECK(mutual == doctest::Approx(shape.reciprocity).epsilon(0.1));
      CHECK(bursts == doctest::Approx(reference_bursts).epsilon(0.2));
    } else {
      CHECK(mutual < 0.01);
      CHECK(bursts < 0.05);
    }
  }
}

}  // namespace
}  // namespace relgraph::bench
