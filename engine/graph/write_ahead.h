// Graph::WriteAhead: prefetching for a loop of writes over the graph.
//
// Thread-safety: one object serves one loop on the thread that holds the graph's writes.
#pragma once

#include <cstddef>
#include <utility>

#include "engine/graph/graph.h"

namespace relgraph {

// A loop over n follows or unfollows (Import, ApplyBatch, Db::WriteBatch) calls Advance(i)
// at the i-th: it starts fetching what the ones 32, 16, 8 and 4 ahead will read (their id
// slots; the user records the slots point to, whose external ids confirm them; their list
// ends once the ids are confirmed, for a packed fan list its header and newest entry; then,
// 4 ahead, a packed following list's newest directory entry, which its header locates, and
// 2 ahead the newest gaps that entry points to), so the cache misses of
// consecutive writes overlap. Each id is looked up once, 8 ahead, and Known(i) hands the i-th's
// pair to Follow/FollowAt, which then skip their own lookup (kNoInternalId: unknown then, so looked
// up again; an earlier write may have created it). pair_at(j) returns {follower, followee} of the
// j-th. One object serves one loop; the graph must not lose users meanwhile (it never does).
class Graph::WriteAhead {
 public:
  explicit WriteAhead(const Graph& graph) : g_(graph) {}
  template <typename PairAt>
  void Advance(size_t i, size_t n, PairAt&& pair_at) {
    if (i == 0) {
      // Nothing is on its way yet: start every stage for the first ones at once, so a short
      // run (a pipelined batch of 64) does not take its first 32 misses one after another.
      for (size_t j = 0; j < kSlots && j < n; ++j) PrefetchSlots(pair_at(j));
      for (size_t j = 0; j < kRecords && j < n; ++j) PrefetchRecords(j, pair_at(j));
      for (size_t j = 0; j < kLookUp && j < n; ++j) LookUp(j, pair_at(j));
      for (size_t j = 0; j < kTimes && j < n; ++j) g_.PrefetchNewestTimes(ring_[j % kRing]);
      for (size_t j = 0; j < kGaps && j < n; ++j) g_.PrefetchNewestGaps(ring_[j % kRing]);
    }
    if (i + kSlots < n) PrefetchSlots(pair_at(i + kSlots));
    if (i + kRecords < n) PrefetchRecords(i + kRecords, pair_at(i + kRecords));
    if (i + kLookUp < n) LookUp(i + kLookUp, pair_at(i + kLookUp));
    if (i + kTimes < n) g_.PrefetchNewestTimes(ring_[(i + kTimes) % kRing]);
    if (i + kGaps < n) g_.PrefetchNewestGaps(ring_[(i + kGaps) % kRing]);
  }
  const InternalId* Known(size_t i) const { return ring_[i % kRing]; }

 private:
  static constexpr size_t kSlots = 32, kRecords = 16, kLookUp = 8, kTimes = 4, kGaps = 2;
  static constexpr size_t kRing = 32;  // > kRecords: a pair stays until its write
  void PrefetchSlots(const std::pair<UserId, UserId>& p) const {
    g_.ids_.Prefetch(p.first);
    g_.ids_.Prefetch(p.second);
  }
  void PrefetchRecords(size_t j, const std::pair<UserId, UserId>& p) {
    InternalId* ids = ring_[j % kRing];
    ids[0] = g_.ids_.PrefetchCandidate(p.first);
    ids[1] = g_.ids_.PrefetchCandidate(p.second);
  }
  // A kNoInternalId guess may be stale (a write since created the user): Known then says
  // "unknown", as it must.
  void LookUp(size_t j, const std::pair<UserId, UserId>& p) {
    InternalId* ids = ring_[j % kRing];
    ids[0] = g_.ids_.Confirm(ids[0], p.first);
    ids[1] = g_.ids_.Confirm(ids[1], p.second);
    g_.PrefetchLists(ids);
  }
  const Graph& g_;
  InternalId ring_[kRing][2];
};

}  // namespace relgraph
