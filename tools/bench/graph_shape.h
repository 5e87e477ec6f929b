// The parts of the generated graph's shape that make it look like a social product's data
// rather than a random one (GenerateGraph, workload_generator.h):
//
//   - Follow-backs. A fraction of the edges is reciprocated (mutual follows, "friends"):
//     real graphs range from a few percent (wiki-Vote 6%) through Twitter (22%, Kwak et al.
//     2010) and Epinions (41%) to Slashdot (84%). The default is Twitter's 22%. An ordinary
//     user follows back; an account with more than kMaxFollowBackFans fans does not, and no
//     one passes the follow cap.
//   - Bursty times. Users join over ten years, more of them later (the join time's density
//     grows linearly). A user's follows come in sessions: the first at joining, the next ones
//     days to months apart (log-normal gaps, median 3 days), each session a run of follows
//     seconds apart. The 100 most followed accounts have three popular moments each: a third
//     of their fans (of those who had joined by then) follow in the hours after one of them.
//     A follow-back comes hours after the follow it answers.
//   - Edges arrive in time order, each time strictly after the previous one.
//
// Why this design: the benchmarks judge friends pages, mutual bits and the packing of follow
// times. On a graph with 40 mutual edges in 10M and times on a lattice (each edge 31,536 ms
// after the previous one), the first two are hardly exercised and the third is judged on data
// no product has.
//
// Thread-safety: pure functions of their arguments and the generator passed in.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engine/types.h"

namespace relgraph::bench {

struct GraphShape {
  double reciprocity = 0.22;  // the fraction of edges whose reverse is an edge too
  bool bursty_times = true;   // false: edges shuffled, times evenly spaced over ten years
  // The shape of the earlier generator: no follow-backs, times on a lattice.
  static GraphShape Even() { return {.reciprocity = 0, .bursty_times = false}; }
};

// An edge between user indexes (followers and followees before they get their ids).
struct IndexEdge {
  uint32_t from;
  uint32_t to;
  TimestampMs ts;
};

inline constexpr TimestampMs kGraphEpochStart = 1'451'606'400'000;  // 2016-01-01
inline constexpr TimestampMs kGraphSpanMs = 10LL * 365 * 24 * 3600 * 1000;
inline constexpr uint32_t kMaxFollowBackFans = 1000;

// The numbers of the bursty times, shared by both generators.
inline constexpr double kNewSessionShare = 0.15;       // a follow starts a new session
inline constexpr double kInSessionMeanGapMs = 20'000;  // plus 300 ms, exponential
inline constexpr double kSessionGapMedianDays = 3;     // log-normal, sigma below
inline constexpr double kSessionGapSigma = 1.5;
inline constexpr double kFollowBackMeanDelayMs = 6.0 * 3600 * 1000;  // plus 1 s
inline constexpr size_t kMomentAccounts = 100;                       // the most followed
inline constexpr int kMomentsEach = 3;
inline constexpr double kFansInMoments = 1.0 / 3;
inline constexpr double kMomentMeanDelayMs = 2.0 * 3600 * 1000;

// `from + delay` when that is before the ten years end, else a time in [from, end) chosen by
// `random`; the end's last millisecond when `from` is there already.
TimestampMs LaterWithin(TimestampMs from, TimestampMs delay, uint64_t random);
// A join time: the density grows linearly over the ten years. `unit` in [0, 1].
TimestampMs JoinTime(double unit);

// Adds up to `want` follow-backs t -> f, each for a distinct edge f -> t of *edges whose
// reverse is not an edge, whose t has at most kMaxFollowBackFans fans and follows fewer than
// `max_following`. A follow-back's time is its edge's plus a delay of hours. Returns how
// many were added. REQUIRES: every user index < users; the edges' times are set.
uint64_t AddFollowBacks(std::vector<IndexEdge>* edges, uint64_t users, uint64_t want,
                        uint32_t max_following, std::mt19937_64& rng);

// Sets the times of *edges, grouped by follower (each follower's edges one run), as
// described above. `ranked` lists the user indexes with fans, the most followed first.
void StampBurstyTimes(std::vector<IndexEdge>* edges, uint64_t users,
                      const std::vector<uint32_t>& ranked, std::mt19937_64& rng);

// Sorts *edges by time and makes every time strictly greater than the one before.
void OrderByTime(std::vector<IndexEdge>* edges);

// The fraction of *edges whose reverse is an edge too.
double Reciprocity(const std::vector<IndexEdge>& edges);

}  // namespace relgraph::bench
