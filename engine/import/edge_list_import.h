// ImportEdgeListToSnapshot: an edge list straight to snapshot-0 of a new data directory, with
// exactly the state LoadEdgeList would build into an empty graph (self-loops skipped; per
// follower, in file order, a repeated followee is a duplicate and followees past the cap are
// skipped), but without building the graph: the edges are grouped by follower with one stable
// scatter by a hash of the follower (then a small sort per bucket), each follower's kept list
// is put in list order and streamed into the snapshot (format version 2, an edge list).
// This is relgraph-admin import's path; its cost is a parse, a sort and sequential writes.
//
// Thread-safety: independent calls may run concurrently on different directories.
#pragma once

#include <string>

#include "engine/import/edge_list.h"
#include "storage/env/env.h"
#include "storage/snapshot/snapshot_file.h"

namespace relgraph {

struct EdgeListImportOptions {
  uint32_t max_following = 1000;  // kMaxFollowingLimit for no cap
  uint64_t id_offset = 0;
};

struct EdgeListImportResult {
  EdgeListLoadStats stats;
  SnapshotInfo snapshot;
  uint64_t users = 0;  // users named by a kept edge
};

// REQUIRES: `dir` exists and holds no relgraph data (the caller checks and locks it).
Result<EdgeListImportResult> ImportEdgeListToSnapshot(Env* env, const std::string& edge_list,
                                                      const std::string& dir,
                                                      const EdgeListImportOptions& options);

}  // namespace relgraph
