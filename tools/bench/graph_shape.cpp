// Follow-backs and bursty times for the generated graph (graph_shape.h says what and why).
#include "tools/bench/graph_shape.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

namespace relgraph::bench {
namespace {

constexpr TimestampMs kEnd = kGraphEpochStart + kGraphSpanMs;
constexpr TimestampMs kHourMs = 3600 * 1000;

uint64_t PairKey(uint32_t from, uint32_t to) {
  return uint64_t{from} << 32 | to;
}

// The sorted keys of every edge, for "is the reverse an edge?".
std::vector<uint64_t> SortedKeys(const std::vector<IndexEdge>& edges) {
  std::vector<uint64_t> keys(edges.size());
  for (size_t i = 0; i < edges.size(); ++i) keys[i] = PairKey(edges[i].from, edges[i].to);
  std::sort(keys.begin(), keys.end());
  return keys;
}

bool Has(const std::vector<uint64_t>& sorted, uint64_t key) {
  return std::binary_search(sorted.begin(), sorted.end(), key);
}

TimestampMs ExponentialMs(double mean_ms, std::mt19937_64& rng) {
  return static_cast<TimestampMs>(std::exponential_distribution<double>(1.0 / mean_ms)(rng));
}

// LaterWithin, drawing from `rng` only when it must.
TimestampMs Later(TimestampMs from, TimestampMs delay, std::mt19937_64& rng) {
  if (from >= kEnd - 1 || from + delay < kEnd) return LaterWithin(from, delay, 0);
  return LaterWithin(from, delay, rng());
}

}  // namespace

TimestampMs LaterWithin(TimestampMs from, TimestampMs delay, uint64_t random) {
  if (from >= kEnd - 1) return kEnd - 1;
  if (from + delay < kEnd) return from + delay;
  return from + static_cast<TimestampMs>(random % static_cast<uint64_t>(kEnd - from));
}

TimestampMs JoinTime(double unit) {
  return kGraphEpochStart +
         static_cast<TimestampMs>(std::sqrt(unit) * 0.995 * static_cast<double>(kGraphSpanMs));
}

uint64_t AddFollowBacks(std::vector<IndexEdge>* edges, uint64_t users, uint64_t want,
                        uint32_t max_following, std::mt19937_64& rng) {
  if (want == 0) return 0;  // and draws nothing from rng
  std::vector<uint32_t> following(users), fans(users);
  for (const IndexEdge& e : *edges) {
    ++following[e.from];
    ++fans[e.to];
  }
  const std::vector<uint64_t> keys = SortedKeys(*edges);
  std::vector<uint32_t> candidates;  // edges that may be followed back, by position
  for (size_t i = 0; i < edges->size(); ++i) {
    const IndexEdge& e = (*edges)[i];
    if (fans[e.to] <= kMaxFollowBackFans && !Has(keys, PairKey(e.to, e.from))) {
      candidates.push_back(static_cast<uint32_t>(i));
    }
  }
  std::shuffle(candidates.begin(), candidates.end(), rng);
  // Each candidate is the only edge whose follow-back is its reverse: no follow-back repeats.
  uint64_t added = 0;
  for (uint32_t i : candidates) {
    if (added == want) break;
    const IndexEdge e = (*edges)[i];
    if (following[e.to] >= max_following) continue;
    ++following[e.to];
    const TimestampMs delay = 1000 + ExponentialMs(kFollowBackMeanDelayMs, rng);
    edges->push_back({e.to, e.from, Later(e.ts, delay, rng)});
    ++added;
  }
  return added;
}

void StampBurstyTimes(std::vector<IndexEdge>* edges, uint64_t users,
                      const std::vector<uint32_t>& ranked, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0, 1);
  std::lognormal_distribution<double> session_gap_days(std::log(kSessionGapMedianDays),
                                                       kSessionGapSigma);
  std::vector<TimestampMs> joined(users, kGraphEpochStart);
  for (size_t i = 0; i < edges->size();) {
    size_t end = i;
    while (end < edges->size() && (*edges)[end].from == (*edges)[i].from) ++end;
    TimestampMs t = JoinTime(unit(rng));
    joined[(*edges)[i].from] = t;
    for (size_t k = i; k < end; ++k) {
      if (k > i) {
        const bool session = unit(rng) < kNewSessionShare;
        const TimestampMs gap = session
                                    ? static_cast<TimestampMs>(session_gap_days(rng) * 24 * kHourMs)
                                    : 300 + ExponentialMs(kInSessionMeanGapMs, rng);
        t = Later(t, gap, rng);
      }
      (*edges)[k].ts = t;
    }
    i = end;
  }
  // Popular moments of the most followed accounts.
  std::unordered_map<uint32_t, std::vector<TimestampMs>> moments;
  for (size_t r = 0; r < std::min(kMomentAccounts, ranked.size()); ++r) {
    std::vector<TimestampMs>& m = moments[ranked[r]];
    for (int k = 0; k < kMomentsEach; ++k) {
      m.push_back(kGraphEpochStart +
                  static_cast<TimestampMs>(unit(rng) * 0.99 * static_cast<double>(kGraphSpanMs)));
    }
  }
  for (IndexEdge& e : *edges) {
    auto it = moments.find(e.to);
    if (it == moments.end() || unit(rng) >= kFansInMoments) continue;
    const TimestampMs moment = it->second[rng() % it->second.size()];
    if (moment >= joined[e.from]) {
      e.ts = Later(moment, ExponentialMs(kMomentMeanDelayMs, rng), rng);
    }
  }
}

void OrderByTime(std::vector<IndexEdge>* edges) {
  std::stable_sort(edges->begin(), edges->end(),
                   [](const IndexEdge& a, const IndexEdge& b) { return a.ts < b.ts; });
  for (size_t i = 1; i < edges->size(); ++i) {
    (*edges)[i].ts = std::max((*edges)[i].ts, (*edges)[i - 1].ts + 1);
  }
}

double Reciprocity(const std::vector<IndexEdge>& edges) {
  if (edges.empty()) return 0;
  const std::vector<uint64_t> keys = SortedKeys(edges);
  uint64_t mutual = 0;
  for (const IndexEdge& e : edges) mutual += Has(keys, PairKey(e.to, e.from)) ? 1 : 0;
  return static_cast<double>(mutual) / static_cast<double>(edges.size());
}

}  // namespace relgraph::bench
