// relgraph-bench's flags: the usage text (--help) and what the command line asks for.
//
// Thread-safety: plain data and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/status.h"
#include "tools/bench/graph_shape.h"
#include "tools/bench/server_workloads.h"

namespace relgraph::bench {

extern const char* const kUsage;

struct Flags {
  std::string target = "embedded";
  uint64_t feed_readers = 1000000, feed_posts = 1000000;
  uint64_t edges = 10'000'000;
  uint64_t seed = 1;
  std::string dataset;
  uint64_t id_offset = 0;
  uint32_t max_following = 1000;
  uint32_t time_resolution_ms = 1;  // --follow-time-resolution
  GraphShape shape;  // the generated graph's reciprocity and times
  std::vector<std::string> workloads;
  double propagation_seconds = 5;  // --target=cluster: cluster_propagation's length
  uint64_t load_rate = 100'000;    // --target=cluster: follows/s beside cluster_propagation
  uint64_t ops = 2'000'000;
  bool csv = false;
  uint64_t wal_ops = 1'000'000;
  uint64_t writers = 256;
  std::string data_dir;
  bool no_load = false;
  ServerFlags server;
  std::vector<std::string> group_nodes;  // --target=group: the members (--group-nodes=A,B,C)
  uint64_t seconds = 60;                 // --target=group: how long the writers run
};

// Reads argv[1..] into *f; kInvalidArgument names an unknown flag or a bad value.
Status ParseFlags(int argc, char** argv, Flags* f);

}  // namespace relgraph::bench
