// Blocks, private accounts and follow requests (docs/access.md) in relgraph-bench, on one
// thread, against the embedded Graph:
//   block                the followee of a random edge blocks its fan (both edges go)
//   relation_blocked     relation checks, half of them of blocked pairs, half as `relation`
//   unblock              the same blocks lifted (the edges are then re-imported, untimed)
//   follow_request       follows of private accounts (1% of the users with fans), which
//                        become pending requests
//   approve, reject      half the pending requests each
//   block_celebrity      an account with a million fans blocks some of them, and other fans
//                        block it (on a graph of its own: the cost of a block near a celebrity)
//   go_public            an account with a million pending requests goes public, approving
//                        them all in one call (a graph of its own; one op per approval)
// These rows change the loaded graph (blocks remove edges, approvals add some), so
// relgraph-bench runs them after every other row. Inputs are drawn before the clock starts.
#pragma once

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engine/graph/graph.h"
#include "tools/bench/workload_generator.h"
#include "tools/bench/workloads.h"

namespace relgraph::bench {

class AccessWorkloads {
 public:
  // `graph` holds `data` (loaded); both must outlive this object.
  AccessWorkloads(Graph& graph, const GeneratedGraph& data, uint64_t seed, uint64_t ops);

  static const std::vector<std::string>& Names();
  // REQUIRES: name is in Names(). relation_blocked and unblock run `block` first if it has
  // not run; approve and reject run follow_request first.
  WorkloadResult Run(const std::string& name);

 private:
  WorkloadResult Block();
  WorkloadResult RelationBlocked();
  WorkloadResult Unblock();
  WorkloadResult FollowRequest();
  WorkloadResult Answer(bool approve);
  WorkloadResult BlockCelebrity();
  WorkloadResult GoPublic();

  const BenchEdge& RandomEdge() { return data_.edges[rng_() % data_.edges.size()]; }

  Graph& graph_;
  const GeneratedGraph& data_;
  std::mt19937_64 rng_;
  uint64_t ops_;
  std::vector<BenchEdge> blocked_;  // edges whose followee blocks the follower (by `block`)
  std::vector<std::pair<UserId, UserId>> requests_;  // pending (target, requester)
  bool requests_made_ = false;
};

}  // namespace relgraph::bench
