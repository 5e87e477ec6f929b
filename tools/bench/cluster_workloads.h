// relgraph-bench --target=cluster: rows measured through a running cluster (docs/cluster.md;
// docs/benchmarks.md, "Cluster").
//
//   cluster_follow_same_unpipelined   single follows whose followee is on the follower's shard
//   cluster_follow_cross_unpipelined  single follows whose followee is on another shard
//                                     (both: ops/s of one client, p50/p99 of the reply)
//   cluster_follows                   pipelined follows of fresh pairs, two in three across
//                                     shards, from `connections` connections to every shard
//                                     at once: acknowledged follows/s; the note adds the rate
//                                     counted until the barrier saw every one applied on the
//                                     followee's shard
//   cluster_propagation_idle          a marker follow every 5 ms, nothing else running: from its
//                                     acknowledgement to the followee's shard answering the
//                                     relation (p50/p99)
//   cluster_propagation               the same beside a steady load of `load_rate` follows/s
//                                     (pipelined, fresh pairs, two in three across shards) on
//                                     one shard
//   cluster_relation_unpipelined      relation(a, b) through ClusterClient
//
// Thread-safety: one call at a time; rows start and join their own threads.
#pragma once

#include <string>
#include <vector>

#include "net/cluster/cluster_client.h"
#include "tools/bench/workloads.h"

namespace relgraph::bench {

struct ClusterBenchFlags {
  std::string nats_url = "nats://127.0.0.1:4222";
  net::ClientOptions client;  // token and timeouts (hosts and ports come from the map)
  uint32_t connections = 4;   // per shard, for cluster_follows
  uint32_t pipeline = 64;
  uint64_t ops = 2'000'000;       // cluster_follows
  uint64_t latency_ops = 20'000;  // each unpipelined row
  double propagation_seconds = 5;
  uint64_t load_rate = 100'000;  // cluster_propagation's follows/s beside the markers
};

const std::vector<std::string>& ClusterWorkloadNames();
// Runs one row; kInvalidArgument for a name not in ClusterWorkloadNames().
Result<WorkloadResult> RunClusterWorkload(const std::string& name, const ClusterBenchFlags& flags);

}  // namespace relgraph::bench
