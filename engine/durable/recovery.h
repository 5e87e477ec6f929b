// Rebuilding a data directory's state: the newest snapshot that passes every check (damaged
// ones are reported and skipped), then the WAL after its LSN. Db::Open uses it (repairing a
// torn tail); relgraph-admin's verify, inspect and export use it read-only.
//
// Thread-safety: one call at a time per directory; no shared state.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/durable/cursor_table.h"
#include "engine/durable/epoch_history.h"
#include "engine/durable/inbound_positions.h"
#include "engine/durable/wal_records.h"
#include "engine/feed/feed.h"
#include "engine/graph/graph.h"
#include "storage/env/env.h"
#include "storage/snapshot/snapshot_file.h"

namespace relgraph {

struct RecoveryInfo {
  uint64_t snapshot_lsn = 0;  // LSN of the snapshot loaded
  std::string snapshot_file;  // empty: none was loaded
  uint64_t snapshot_edges = 0;
  uint32_t snapshot_version = 0;               // its format version (3: a point-in-time image)
  std::vector<std::string> skipped_snapshots;  // "file: why", newest first
  uint64_t replayed_records = 0;
  uint64_t last_lsn = 0;         // the newest LSN recovered
  uint64_t last_segment_no = 0;  // 0: no WAL segment
  uint64_t torn_bytes = 0;       // torn tail of the newest segment
  std::string torn_file;
  double seconds = 0;
};

// The durable state: the follow graph, the feed over it, the change stream's named cursors
// and the replication history.
struct RecoveredState {
  std::unique_ptr<Graph> graph;
  std::unique_ptr<Feed> feed;
  CursorTable cursors;
  EpochHistory epochs;
  InboundPositions inbound;  // a cluster shard's (docs/cluster.md)
};

// Loads one snapshot file into a new graph and feed with every check (checksums, counts, list
// order), through GraphBuilder; recovery and relgraph-admin use this one loader. Sets *info on
// success.
Result<RecoveredState> LoadSnapshotState(Env* env, const std::string& path,
                                         const GraphOptions& options,
                                         const FeedOptions& feed_options, SnapshotInfo* info);
// The graph alone (the feed blocks are still verified).
Result<std::unique_ptr<Graph>> LoadSnapshotGraph(Env* env, const std::string& path,
                                                 const GraphOptions& options, SnapshotInfo* info);

// Rebuilds the graph and feed of `dir`. With repair_torn_tail the newest segment's torn tail is
// cut off (otherwise nothing in `dir` is modified). Errors: the WAL reader's kCorruption (file,
// offset, repair command), or a WAL that does not reach back to the snapshot loaded (or to
// LSN 1).
Result<RecoveredState> RecoverState(Env* env, const std::string& dir, const GraphOptions& options,
                                    const FeedOptions& feed_options, bool repair_torn_tail,
                                    RecoveryInfo* info);
// The graph alone.
Result<std::unique_ptr<Graph>> RecoverGraph(Env* env, const std::string& dir,
                                            const GraphOptions& options, bool repair_torn_tail,
                                            RecoveryInfo* info);

}  // namespace relgraph
