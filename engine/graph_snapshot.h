// Writing a Graph into a snapshot file (docs/snapshot-format.md). Db::Snapshot copies slices
// under its lock and appends them with AddSliceToSnapshot; offline tools (relgraph-admin import)
// write a whole graph they own with WriteGraphSnapshot.
//
// Thread-safety: the graph must not change during WriteGraphSnapshot.
#pragma once

#include <string>

#include "engine/graph.h"
#include "storage/env.h"
#include "storage/snapshot_file.h"

namespace relgraph {

Status AddSliceToSnapshot(const Graph::FollowingSlice& slice, SnapshotWriter* writer);

// Writes snapshot-<lsn>.rgs of `graph` into `dir` (atomically: temp, fsync, rename, dir fsync).
Result<SnapshotInfo> WriteGraphSnapshot(Env* env, const std::string& dir, const Graph& graph,
                                        uint64_t lsn);

}  // namespace relgraph
