// Deterministic follow-graph generator shaped like production statistics:
//   40% of users follow someone (7.9 followees on average, log-normal, capped);
//   35% have fans (9.2 on average); about 26% do both;
//   followee choice is Zipf-skewed (exponent 0.9) over the users with fans, after one
//   guaranteed fan each, so the top account collects a few percent of all edges
//   (~300k fans at 10M edges, ~2.5M at 100M).
// With the default GraphShape (graph_shape.h), 22% of the edges are mutual (follow-backs) and
// follow times are bursty (sessions, popular moments); edges arrive in time order. With
// GraphShape::Even(), the earlier shape: a random arrival order, times evenly spaced. Either
// way, each time is strictly greater than the one before.
// Also loads a real edge list into the same shape (see LoadDatasetEdges).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/types.h"
#include "storage/status.h"
#include "tools/bench/graph_shape.h"

namespace relgraph::bench {

struct BenchEdge {
  UserId follower;
  UserId followee;
  TimestampMs ts;
};

struct GeneratedGraph {
  std::vector<BenchEdge> edges;  // arrival order
  uint64_t users = 0;            // user ids drawn (some may end up isolated)
  std::string description;       // one line for the report
};

GeneratedGraph GenerateGraph(uint64_t edges, uint64_t seed, uint32_t max_following,
                             const GraphShape& shape = {});

// Reads a SNAP edge list (plain or .gz). Self-loops are dropped here and counted in the
// description; follow times come from the file's third column or, without one, are spread
// in file order. Over-cap and duplicate edges are left for the graph to refuse (and count).
Result<GeneratedGraph> LoadDatasetEdges(const std::string& path, uint64_t id_offset);

}  // namespace relgraph::bench
