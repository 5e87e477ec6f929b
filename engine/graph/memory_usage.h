// MemoryUsage: the bytes a Graph holds, by part (Graph::memory_usage()).
// Thread-safety: a value.
#pragma once

#include <cstddef>

namespace relgraph {

struct MemoryUsage {
  size_t id_map = 0;  // external ids and the hash index
  size_t user_records = 0;
  size_t edge_blocks = 0;       // slab memory of following and fan arrays, free blocks included
  size_t edge_blocks_live = 0;  // of which handed out to lists (part of edge_blocks)
  size_t fan_index = 0;         // chunk directories of long fan lists
  size_t rate_limiter = 0;
  size_t access = 0;  // block and request maps (their list entries are in edge_blocks)
  size_t total() const {
    return id_map + user_records + edge_blocks + fan_index + rate_limiter + access;
  }
};

}  // namespace relgraph
