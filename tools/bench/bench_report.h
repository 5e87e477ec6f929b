// Output of relgraph-bench: a readable table (text) or CSV with one row per workload,
// `workload,ops,seconds,ops_per_sec,p50_us,p99_us,note`, then
// `memory,users,edges,bytes,bytes_per_edge,note`. A note is quoted as CSV quotes text, so a
// script keeps every fact the text report has (error replies, how memory was counted).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "engine/mem/resident.h"  // ResidentBytes, for the memory row
#include "tools/bench/workloads.h"

namespace relgraph::bench {

struct MemoryRow {
  uint64_t users = 0;
  uint64_t edges = 0;
  uint64_t rss_bytes = 0;     // resident memory the loaded graph added to the process, or
                              // with `source` set, the bytes a server's own accounting gives
  uint64_t engine_bytes = 0;  // the graph's own accounting (MemoryUsage::total)
  std::string breakdown;
  std::string source;  // empty: resident memory of this process; else whose count rss_bytes is
  double bytes_per_edge() const { return edges ? static_cast<double>(rss_bytes) / edges : 0; }
};

void PrintHeader(std::ostream& out, bool csv, const std::string& description);
void PrintWorkload(std::ostream& out, bool csv, const WorkloadResult& r);
void PrintMemory(std::ostream& out, bool csv, const MemoryRow& m);

// The memory row of a loaded graph: the resident bytes it added since `rss_before` (taken
// before it was built) and the engine's own accounting, with its breakdown.
MemoryRow MeasureGraphMemory(const Graph& graph, uint64_t rss_before);

}  // namespace relgraph::bench
