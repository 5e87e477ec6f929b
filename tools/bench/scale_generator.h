// ScaleGenerator: a follow graph of any size (a billion edges and more) streamed in windows,
// in memory that does not grow with it, shaped like GenerateGraph (workload_generator.h):
//   40% of users follow someone (log-normal out-degrees, capped); 35% have fans, each at least
//   one; followees are Zipf(0.9)-skewed over the users with fans, so the top accounts collect
//   tens of millions of fans at a billion edges.
//
// Why this design: GenerateGraph holds every edge (24 bytes each) and a Zipf alias table, so a
// billion edges would need more memory than the graph itself. Here every follower's list is a
// pure function of (seed, follower index): its degree and its draws come from a generator
// seeded by a hash of the two, Zipf ranks come from rejection-inversion sampling (O(1), no
// table), and a rank becomes a user through a bijection on the ranks, so the top accounts are
// scattered over the id space. Lists can so be regenerated one at a time to sample queries.
//
// Follow-backs and bursty times, as GenerateGraph's realistic shape has them (graph_shape.h),
// each still a pure function of the follower: mutual follows pair followers by reflections
// (slot j pairs k with (c_j - k) mod followers, so both sides compute the same pair), a slot
// taken when both of its followers have that many friend slots (a share of their degree,
// calibrated at construction to the reciprocity asked for); the pair's first follow has a
// time of its own, the follow back comes hours later. The other follows come in sessions from
// the follower's join time, and the 100 most followed accounts have popular moments.
//
// The stream goes window by window through the followers (each window shuffled): an import of
// a dump ordered by follower, so fan lists receive their entries out of time order.
//
// Thread-safety: const methods may run concurrently; Next() needs exclusive access.
#pragma once

#include <cstdint>
#include <vector>

#include "tools/bench/workload_generator.h"

namespace relgraph::bench {

class ScaleGenerator {
 public:
  // About `edges` edges (within a fraction of a percent) over edges / 3.16 users, with the
  // reciprocity and times of `shape` (GraphShape::Even(): none, times uniform over ten years).
  ScaleGenerator(uint64_t edges, uint64_t seed, uint32_t max_following,
                 const GraphShape& shape = {});

  uint64_t users() const { return users_; }
  uint64_t followers() const { return followers_; }  // followers are user indexes [0, F)
  uint64_t targets() const { return targets_; }      // users that get at least one fan

  // The external id of user index i (a bijection: distinct indexes, distinct nonzero ids).
  static UserId IdOf(uint64_t i);
  // The external ids follower k follows (no repeats, never k itself, at most max_following),
  // and when given, the time of each. REQUIRES: k < followers().
  void FolloweesOf(uint64_t k, std::vector<UserId>* out,
                   std::vector<TimestampMs>* times = nullptr) const;
  // The user with Zipf rank r (0 = the most followed). REQUIRES: r < targets().
  UserId TargetOfRank(uint64_t r) const;

  // Replaces *out with the next window's edges (kWindowFollowers followers, shuffled); false
  // once every follower was emitted.
  bool Next(std::vector<BenchEdge>* out);
  static constexpr uint64_t kWindowFollowers = 1 << 16;
  // Every time is in [kEpochStart, kEpochStart + kSpanMs): 2016-01-01 and ten years on.
  static constexpr TimestampMs kEpochStart = kGraphEpochStart;
  static constexpr TimestampMs kSpanMs = kGraphSpanMs;

 private:
  uint32_t DegreeOf(uint64_t k) const;
  // How many pair slots k may take when slots are `share` of each degree (friend_share_).
  uint32_t FriendSlotsOf(uint64_t k, double share) const;
  uint64_t PartnerOf(uint64_t k, uint32_t j) const;             // slot j's other follower (k: none)
  double MeanTakenSlots(double share, uint64_t samples) const;  // per follower, sampled
  uint64_t RankToTarget(uint64_t r) const;                      // a bijection on [0, targets_)
  uint64_t TargetIndexToUser(uint64_t t) const;
  uint64_t ZipfRank(uint64_t& state) const;  // rank in [0, targets_), 0 the most likely

  uint64_t seed_;
  uint32_t max_following_;
  GraphShape shape_;
  double friend_share_ = 0;  // friend slots per unit of degree
  uint64_t users_ = 0, followers_ = 0, both_ = 0, targets_ = 0;
  double degree_scale_ = 1;
  uint64_t rank_multiplier_ = 1, rank_offset_ = 0;
  // Rejection-inversion constants for Zipf(0.9) over [1, targets_].
  double h_integral_x1_ = 0, h_integral_n_ = 0, zipf_s_ = 0;
  uint64_t next_follower_ = 0;
};

}  // namespace relgraph::bench
