// Why this shape: the benchmark must stress what production does, i.e. many users with a few
// edges and a few accounts with a huge fan list, at a realistic mean degree. Degrees are drawn
// first (so the follower fraction and mean are exact), then followees: one per fan-having user
// (so the fan fraction is exact), the rest from a Zipf alias table (O(1) per draw).
#include "tools/bench/workload_generator.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <sstream>

#include "engine/import/edge_list.h"
#include "tools/bench/graph_shape.h"

namespace relgraph::bench {
namespace {

constexpr TimestampMs kEpochStart = kGraphEpochStart;
constexpr TimestampMs kSpanMs = kGraphSpanMs;

// A bijection on 64-bit values, so distinct user indexes get distinct, scattered ids.
uint64_t ScatterId(uint64_t i) {
  uint64_t x = i + 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x == 0 ? 0x8000000000000000ULL : x;
}

// Walker's alias method: O(n) build, O(1) draw from a discrete distribution.
class AliasTable {
 public:
  explicit AliasTable(const std::vector<double>& weights)
      : prob_(weights.size()), alias_(weights.size()) {
    const size_t n = weights.size();
    const double sum = std::accumulate(weights.begin(), weights.end(), 0.0);
    std::vector<double> scaled(n);
    std::vector<uint32_t> small, large;
    for (size_t i = 0; i < n; ++i) {
      scaled[i] = weights[i] * static_cast<double>(n) / sum;
      (scaled[i] < 1 ? small : large).push_back(static_cast<uint32_t>(i));
    }
    while (!small.empty() && !large.empty()) {
      const uint32_t s = small.back(), l = large.back();
      small.pop_back();
      prob_[s] = scaled[s];
      alias_[s] = l;
      scaled[l] -= 1 - scaled[s];
      if (scaled[l] < 1) {
        large.pop_back();
        small.push_back(l);
      }
    }
    for (uint32_t i : small) prob_[i] = 1;
    for (uint32_t i : large) prob_[i] = 1;
  }
  template <typename Rng>
  uint32_t Draw(Rng& rng) const {
    const uint32_t i = static_cast<uint32_t>(rng() % prob_.size());
    return std::uniform_real_distribution<double>(0, 1)(rng) < prob_[i] ? i : alias_[i];
  }

 private:
  std::vector<double> prob_;
  std::vector<uint32_t> alias_;
};

// Out-degrees of `followers` users: log-normal, at least 1, capped, scaled so they sum to
// `edges`.
std::vector<uint32_t> OutDegrees(size_t followers, uint64_t edges, uint32_t max_following,
                                 std::mt19937_64& rng) {
  std::lognormal_distribution<double> lognormal(0, 1.3);
  std::vector<double> raw(followers);
  for (double& w : raw) w = lognormal(rng);
  std::vector<uint32_t> degree(followers);
  double scale = static_cast<double>(edges) / std::accumulate(raw.begin(), raw.end(), 0.0);
  for (int pass = 0; pass < 4; ++pass) {
    uint64_t sum = 0;
    for (size_t i = 0; i < raw.size(); ++i) {
      degree[i] =
          static_cast<uint32_t>(std::clamp<double>(std::round(raw[i] * scale), 1, max_following));
      sum += degree[i];
    }
    scale *= static_cast<double>(edges) / static_cast<double>(sum);
  }
  int64_t excess =
      static_cast<int64_t>(std::accumulate(degree.begin(), degree.end(), uint64_t{0})) -
      static_cast<int64_t>(edges);
  for (size_t guard = 0; excess != 0 && guard < 100 * followers; ++guard) {
    uint32_t& d = degree[rng() % degree.size()];
    if (excess > 0 && d > 1) {
      --d;
      --excess;
    }
    if (excess < 0 && d < max_following) {
      ++d;
      ++excess;
    }
  }
  return degree;
}

}  // namespace

GeneratedGraph GenerateGraph(uint64_t edges, uint64_t seed, uint32_t max_following,
                             const GraphShape& shape) {
  std::mt19937_64 rng(seed);
  const uint64_t users = std::max<uint64_t>(10, static_cast<uint64_t>(std::llround(edges / 3.16)));
  // Each follow-back adds one edge and makes two mutual: the base has the rest.
  const uint64_t follow_backs = static_cast<uint64_t>(std::llround(
      static_cast<double>(edges) * std::clamp(shape.reciprocity, 0.0, 1.0) / 2));
  const uint64_t base_edges = edges - follow_backs;

  // Roles: 26% follow and have fans, 14% only follow, 9% only have fans, 51% neither.
  std::vector<uint32_t> order(users);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const uint64_t both = users * 26 / 100, follow_only = users * 14 / 100,
                 fan_only = users * 9 / 100;
  std::vector<uint32_t> followers(order.begin(), order.begin() + both + follow_only);
  std::vector<uint32_t> targets(order.begin(), order.begin() + both);
  targets.insert(targets.end(), order.begin() + both + follow_only,
                 order.begin() + both + follow_only + fan_only);
  std::shuffle(targets.begin(), targets.end(), rng);  // rank order for Zipf

  const std::vector<uint32_t> degree =
      OutDegrees(followers.size(), base_edges, max_following, rng);

  // Followees: one guaranteed fan per target, then Zipf(0.9) draws without repeats.
  std::vector<std::vector<uint32_t>> lists(followers.size());
  {
    std::vector<double> dw(degree.begin(), degree.end());
    AliasTable by_degree(dw);
    for (uint32_t t : targets) {
      for (int tries = 0; tries < 64; ++tries) {
        const uint32_t f = by_degree.Draw(rng);
        if (lists[f].size() < degree[f] && followers[f] != t) {
          lists[f].push_back(t);
          break;
        }
      }
    }
  }
  std::vector<double> zipf(targets.size());
  for (size_t r = 0; r < zipf.size(); ++r)
    zipf[r] = 1.0 / std::pow(static_cast<double>(r + 1), 0.9);
  AliasTable by_rank(zipf);
  for (size_t f = 0; f < followers.size(); ++f) {
    std::vector<uint32_t>& l = lists[f];
    for (int round = 0; round < 8 && l.size() < degree[f]; ++round) {
      while (l.size() < degree[f]) l.push_back(targets[by_rank.Draw(rng)]);
      std::sort(l.begin(), l.end());
      l.erase(std::unique(l.begin(), l.end()), l.end());
      l.erase(std::remove(l.begin(), l.end(), followers[f]), l.end());
    }
  }

  std::vector<IndexEdge> index_edges;
  index_edges.reserve(edges);
  for (size_t f = 0; f < followers.size(); ++f) {
    // A follower's follows in its own order (the even shape keeps the earlier generator's
    // draws: lists in id order, the whole shuffled below).
    if (shape.bursty_times) std::shuffle(lists[f].begin(), lists[f].end(), rng);
    for (uint32_t t : lists[f]) index_edges.push_back({followers[f], t, 0});
  }
  uint64_t added = 0;
  if (shape.bursty_times) {
    StampBurstyTimes(&index_edges, users, targets, rng);
    added = AddFollowBacks(&index_edges, users, follow_backs, max_following, rng);
    OrderByTime(&index_edges);  // arrival order: time order
  } else {
    // Arrival order: all edges shuffled, then stamped with evenly spaced times.
    added = AddFollowBacks(&index_edges, users, follow_backs, max_following, rng);
    std::shuffle(index_edges.begin(), index_edges.end(), rng);
    const TimestampMs step =
        std::max<TimestampMs>(1, kSpanMs / static_cast<TimestampMs>(index_edges.size() + 1));
    for (size_t i = 0; i < index_edges.size(); ++i) {
      index_edges[i].ts = kEpochStart + static_cast<TimestampMs>(i) * step;
    }
  }

  GeneratedGraph g;
  g.users = users;
  g.edges.reserve(index_edges.size());
  for (const IndexEdge& e : index_edges) g.edges.push_back({ScatterId(e.from), ScatterId(e.to), e.ts});
  std::ostringstream d;
  d.precision(3);
  d << "generated: " << g.edges.size() << " edges over " << users << " users (seed " << seed << ", "
    << followers.size() << " followers, " << targets.size() << " with fans, zipf 0.9, "
    << added << " follow-backs, reciprocity " << Reciprocity(index_edges) << ", "
    << (shape.bursty_times ? "bursty times" : "even times") << ")";
  g.description = d.str();
  return g;
}

Result<GeneratedGraph> LoadDatasetEdges(const std::string& path, uint64_t id_offset) {
  auto reader = EdgeListReader::Open(path);
  if (!reader.ok()) return reader.status();
  GeneratedGraph g;
  EdgeRecord e;
  uint64_t self_loops = 0;
  while ((*reader)->Next(&e)) {
    if (e.follower == e.followee) {
      ++self_loops;
      continue;
    }
    UserId a, b;
    RELGRAPH_RETURN_IF_ERROR(OffsetEdgeIds(path, e, id_offset, &a, &b));
    g.edges.push_back({a, b, e.ts.value_or(-1)});
  }
  if (!(*reader)->status().ok()) return (*reader)->status();
  const TimestampMs step =
      std::max<TimestampMs>(1, kSpanMs / static_cast<TimestampMs>(g.edges.size() + 1));
  for (size_t i = 0; i < g.edges.size(); ++i) {
    if (g.edges[i].ts < 0) g.edges[i].ts = kEpochStart + static_cast<TimestampMs>(i) * step;
  }
  std::ostringstream d;
  d << "dataset: " << path << " (" << g.edges.size() << " edges, " << self_loops
    << " self-loops dropped)";
  g.description = d.str();
  return g;
}

}  // namespace relgraph::bench
