#include "tools/bench/designs/design.h"

#include <algorithm>
#include <numeric>

#include "tools/bench/designs/postgres_design.h"
#include "tools/bench/designs/redis_design.h"
#include "tools/bench/designs/relgraph_design.h"

namespace relgraph::bench {

bool IsDesignTarget(const std::string& target) {
  return target == "server" || target.starts_with("redis://") ||
         target.starts_with("postgres://") || target.starts_with("postgresql://");
}

Result<std::unique_ptr<Design>> ConnectDesign(const std::string& target,
                                              const net::ClientOptions& options,
                                              uint32_t max_following) {
  if (target == "server") return ConnectRelgraphDesign(options);
  if (target.starts_with("redis://")) return ConnectRedisDesign(target, max_following);
  if (target.starts_with("postgres://") || target.starts_with("postgresql://")) {
    return ConnectPostgresDesign(target, max_following);
  }
  return Status::InvalidArgument("unknown target '" + target +
                                 "' (server, redis://HOST:PORT or postgres://...)");
}

namespace {

// For each of `edges` (distinct pairs), the time of the reverse edge, or -1 when there is none.
std::vector<TimestampMs> ReverseTimes(const std::vector<BenchEdge>& edges) {
  std::vector<uint32_t> order(edges.size());
  std::iota(order.begin(), order.end(), 0u);
  auto key = [&](uint32_t i) { return std::pair(edges[i].follower, edges[i].followee); };
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return key(x) < key(y); });
  std::vector<TimestampMs> out(edges.size(), -1);
  for (size_t i = 0; i < edges.size(); ++i) {
    const std::pair<UserId, UserId> reverse(edges[i].followee, edges[i].follower);
    auto it = std::lower_bound(order.begin(), order.end(), reverse,
                               [&](uint32_t x, const auto& k) { return key(x) < k; });
    if (it != order.end() && key(*it) == reverse) out[i] = edges[*it].ts;
  }
  return out;
}

}  // namespace

KeptGraph KeepEdges(const GeneratedGraph& graph, uint32_t max_following) {
  const std::vector<BenchEdge>& e = graph.edges;
  std::vector<uint32_t> order(e.size());
  std::iota(order.begin(), order.end(), 0u);
  // By follower, then arrival: a repeat is found among the follower's followees kept so far
  // (at most max_following), and the cap counts kept edges in arrival order.
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    return e[x].follower != e[y].follower ? e[x].follower < e[y].follower : x < y;
  });
  std::vector<bool> kept(e.size(), false);
  std::vector<UserId> seen;
  for (size_t begin = 0; begin < order.size();) {
    size_t end = begin;
    while (end < order.size() && e[order[end]].follower == e[order[begin]].follower) ++end;
    seen.clear();
    uint32_t count = 0;
    for (size_t i = begin; i < end; ++i) {
      const BenchEdge& edge = e[order[i]];
      if (edge.follower == edge.followee || count >= max_following) continue;
      if (std::find(seen.begin(), seen.end(), edge.followee) != seen.end()) continue;
      seen.push_back(edge.followee);
      kept[order[i]] = true;
      ++count;
    }
    begin = end;
  }
  KeptGraph out;
  out.edges.reserve(e.size());
  for (size_t i = 0; i < e.size(); ++i) {
    if (kept[i]) out.edges.push_back(e[i]);
  }
  out.reverse_ts = ReverseTimes(out.edges);
  return out;
}

}  // namespace relgraph::bench
