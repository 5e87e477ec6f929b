// The benchmark's workloads against an embedded Graph. Each returns one WorkloadResult; inputs
// (random users, pairs, cursors) are drawn before the clock starts, so only engine calls are
// timed. Throughput is wall time over all ops; p50/p99 come from every 16th op timed alone.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "tools/bench/workload_generator.h"

namespace relgraph::bench {

struct WorkloadResult {
  std::string name;
  uint64_t ops = 0;
  double seconds = 0;
  double p50_us = 0;
  double p99_us = 0;
  std::string note;  // extra facts for the text report (e.g. edges refused)
  double ops_per_sec() const { return seconds > 0 ? static_cast<double>(ops) / seconds : 0; }
};

// The p-quantile (0..1) of v, reordering v; 0 for an empty v.
double Percentile(std::vector<double>& v, double p);

// A report row; p50/p99 come from samples_us (none: 0, shown as "-").
WorkloadResult Summarize(std::string name, uint64_t ops, double seconds,
                         std::vector<double> samples_us = {}, std::string note = "");

// Runs op(i) for i in [0, n): total wall time, plus every sample_every-th op timed on its own.
template <typename Op>
WorkloadResult Measure(const std::string& name, uint64_t n, Op&& op, uint64_t sample_every = 16) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> samples;
  samples.reserve(n / sample_every + 1);
  const auto start = Clock::now();
  for (uint64_t i = 0; i < n; ++i) {
    if (i % sample_every == 0) {
      const auto t0 = Clock::now();
      op(i);
      samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    } else {
      op(i);
    }
  }
  return Summarize(name, n, std::chrono::duration<double>(Clock::now() - start).count(),
                   std::move(samples));
}

class Workloads {
 public:
  Workloads(Graph& graph, const GeneratedGraph& data, uint64_t seed, uint64_t ops);

  static const std::vector<std::string>& Names();  // in run order; "load" first
  // REQUIRES: name is in Names(); "load" before any other.
  WorkloadResult Run(const std::string& name);

 private:
  WorkloadResult Load();
  WorkloadResult FollowSingle();
  WorkloadResult Churn();
  WorkloadResult Bound();
  WorkloadResult Relation();
  WorkloadResult RelationsBatch();
  WorkloadResult FollowingPage();
  WorkloadResult FansPageDeep();
  WorkloadResult FriendsPage();
  WorkloadResult CountsOp();
  WorkloadResult KnownFollowers();

  void PrepareSamples();  // after load: users with following / friends, the top account
  UserId RandomFollower();
  UserId RandomFollowee();  // weighted by fan count (a random edge's followee)

  Graph& graph_;
  const GeneratedGraph& data_;
  std::mt19937_64 rng_;
  uint64_t ops_;
  bool prepared_ = false;
  std::vector<UserId> followers_;     // distinct users with following > 0
  std::vector<UserId> with_friends_;  // sample of users with friends > 0
  UserId top_account_ = 0;
};

}  // namespace relgraph::bench
