// Writing a whole Graph into a snapshot file (docs/snapshot-format.md, a version-3 graph
// image), for offline tools (relgraph-admin snapshot) and benchmarks. Db::Snapshot writes its
// own, online, through Graph::BeginImage.
//
// Thread-safety: the graph must not change during WriteGraphSnapshot.
#pragma once

#include <string>

#include "engine/graph/graph.h"
#include "storage/env/env.h"
#include "storage/snapshot/snapshot_file.h"

namespace relgraph {

// Writes snapshot-<lsn>.rgs of `graph` into `dir` (atomically: temp, fsync, rename, dir fsync).
Result<SnapshotInfo> WriteGraphSnapshot(Env* env, const std::string& dir, const Graph& graph,
                                        uint64_t lsn);

}  // namespace relgraph
