// The process's resident memory, as the kernel counts it: what the engine's own accounting
// (Graph::Memory, FeedStats) is checked against, and what INFO's rss_bytes reports.
// Thread-safety: thread-safe.
#pragma once

#include <cstdint>

namespace relgraph {

// Resident set size of this process in bytes, from /proc/self/statm; 0 where it cannot be read.
uint64_t ResidentBytes();

}  // namespace relgraph
