// The bridge_delay workload: the end-to-end delay from a follow's acknowledgement by relgraphd
// to its message arriving from NATS, through a running relgraph-bridge (docs/benchmarks.md,
// "Change stream").
//
// Thread-safety: one call at a time; it runs a NATS subscription on the client's own thread.
#pragma once

#include <string>

#include "net/client/client.h"
#include "tools/bench/workloads.h"

namespace relgraph::bench {

// Sends `ops` follows of new pairs, one at a time at `rate` per second, to the server in
// `client`, while subscribed to "<prefix>.follow" on `nats_url`; reports each follow's delay
// from the moment its reply arrived to the moment its message did (p50/p99 in µs).
Result<WorkloadResult> BridgeDelay(const net::ClientOptions& client, const std::string& nats_url,
                                   const std::string& prefix, uint64_t ops, uint64_t rate);

}  // namespace relgraph::bench
