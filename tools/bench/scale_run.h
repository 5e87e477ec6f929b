// The billion-edge run's two halves, which tools/scale-run.sh drives with relgraphd between
// them: a graph of any size built in this process and written as a snapshot, then the same
// graph queried over TCP once relgraphd has restarted from that snapshot.
//
// Why this design: at a billion edges neither an edge list (24 GB of text or 24 B per edge in
// memory) nor GenerateGraph's copy fits beside the graph, so the build streams ScaleGenerator's
// windows straight into Graph::Import, and the query half draws its users from the generator
// again (a follower's list is a pure function of its index) instead of from a kept copy.
// Writing the snapshot offline and restarting relgraphd from it is also the fastest way to a
// served graph: a billion pipelined FOLLOWs would take about twenty minutes more.
//
// Thread-safety: each function runs alone; ScaleQueries opens its own connection.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/bench/bench_report.h"
#include "tools/bench/graph_shape.h"
#include "tools/bench/server_workloads.h"

namespace relgraph::bench {

struct ScaleRunFlags {
  uint64_t edges = 1'000'000'000;
  uint64_t seed = 1;
  uint32_t max_following = 1000;
  uint32_t time_resolution_ms = 1;  // the build's graph; relgraphd needs the same flag
  GraphShape shape;                 // the generated graph's reciprocity and times
  std::string data_dir;  // build: where the snapshot goes (created when missing)
  ServerFlags server;    // queries: the relgraphd that restarted from it
};

struct ScaleBuildResult {
  std::vector<WorkloadResult> rows;  // scale_import, scale_snapshot_write
  MemoryRow memory;                  // after the import
  uint64_t peak_rss_bytes = 0;       // the process's high-water mark (VmHWM)
};

// Streams the graph into an embedded Graph, measures it, and writes snapshot-0.rgs into
// data_dir. Errors: an import or snapshot failure, naming it.
Result<ScaleBuildResult> ScaleBuild(const ScaleRunFlags& flags);

// Unpipelined rows with p50/p99 against the server, latency_ops each: relation, counts,
// following_page (with a viewer), fans_page_deep (a cursor at a random time in the top
// account's fans), follow and unfollow (new pairs, removed again by the unfollow row).
Result<std::vector<WorkloadResult>> ScaleQueries(const ScaleRunFlags& flags);

// The process's resident high-water mark (VmHWM of /proc/self/status) in bytes; 0 if unknown.
uint64_t PeakResidentBytes();

}  // namespace relgraph::bench
