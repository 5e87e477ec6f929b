#include "tools/bench/layout_bound.h"

#include <algorithm>
#include <cmath>

namespace relgraph::bench {
namespace {

double Log2Factorial(double n) {
  return std::lgamma(n + 1) / std::log(2.0);
}

}  // namespace

double ListBits(uint64_t k, uint64_t span, uint64_t others) {
  if (k == 0) return 0;
  const auto kd = static_cast<double>(k);
  const auto s = static_cast<double>(span);
  const auto u = static_cast<double>(others);
  const double times = Log2Factorial(s + kd - 1) - Log2Factorial(kd) - Log2Factorial(s - 1);
  const double peers = Log2Factorial(u) - Log2Factorial(u - kd);
  return times + peers;
}

LayoutBound ComputeLayoutBound(const Graph& graph) {
  LayoutBound b;
  b.users = graph.user_count();
  b.edges = graph.edge_count();
  if (b.edges == 0) return b;
  // Every edge is in one following list, each list in time order: their ends give the span.
  b.first_ts = INT64_MAX;
  b.last_ts = INT64_MIN;
  for (size_t i = 0; i < b.users; ++i) {
    const FollowingList& following = graph.FollowingOf(static_cast<InternalId>(i));
    if (following.empty()) continue;
    b.first_ts = std::min(b.first_ts, following.TsAt(0));
    b.last_ts = std::max(b.last_ts, following.TsAt(following.size() - 1));
  }
  const auto span = static_cast<uint64_t>(b.last_ts - b.first_ts) + 1;
  for (size_t i = 0; i < b.users; ++i) {
    const auto id = static_cast<InternalId>(i);
    b.following_bits += ListBits(graph.FollowingOf(id).size(), span, b.users - 1);
    b.fan_bits += ListBits(graph.FanCountOf(id), span, b.users - 1);
  }
  b.mutual_bits = 2 * static_cast<double>(b.edges);
  // log2 C(2^64, U) = log2(2^64! / (2^64 - U)!) - log2 U!, and for U far below 2^64 the first
  // term is U * 64 to well within a bit per user.
  const auto users = static_cast<double>(b.users);
  b.id_bits = users * 64 - Log2Factorial(users);
  return b;
}

}  // namespace relgraph::bench
