// The replica_lag workload: how far behind its primary a replica is under a sustained
// pipelined follow load (docs/benchmarks.md, "Replication").
//
// Thread-safety: one call at a time; it runs the load on a thread of its own.
#pragma once

#include "net/client/client.h"
#include "tools/bench/workloads.h"

namespace relgraph::bench {

// For `seconds`, one connection pipelines follows of fresh pairs to the primary (`pipeline`
// deep) while another, every 5 ms, sends one marker follow to the primary and, once it is
// acknowledged, asks the replica for that relation until it shows: the delay from the
// primary's acknowledgement to the replica answering with it (p50/p99 in µs). The row's ops
// and seconds are the load's.
Result<WorkloadResult> ReplicaLag(const net::ClientOptions& primary,
                                  const net::ClientOptions& replica, uint32_t pipeline,
                                  double seconds);

}  // namespace relgraph::bench
