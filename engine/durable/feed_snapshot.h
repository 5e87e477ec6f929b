// The feed's records inside a snapshot's feed blocks (docs/snapshot-format.md, "Feed blocks"):
//   record := tag:u8 owner:u64 count:u32 item{count}
//   tag 1 posts  item := post:u64 ts_ms:i64 kind:u8     (the author's retained posts, oldest first)
//   tag 2 mutes  item := user:u64                       (users the owner mutes)
//   tag 3 hides  item := user:u64                       (users the owner hides its posts from)
//   tag 4 cursors (owner 0) item := acked_lsn:u64 acked_ms:i64 name_len:u8 name:u8[name_len]
//   tag 5 epochs (owner 0)  item := number:u64 id:u64 first_lsn:u64 started_ms:i64
//   tag 6 private (owner 0) item := user:u64             (private accounts)     [version 4]
//   tag 7 blocks            item := blocked:u64 ts_ms:i64  (whom the owner blocks) [version 4]
//   tag 8 requests          item := requester:u64 ts_ms:i64 (pending requests to the owner)
//   tag 9 inbound (owner 0) item := origin:u64 lsn:u64   (a cluster shard's InboundPositions)
// Thread-safety: pure functions over the arguments.
#pragma once

#include <string>
#include <string_view>

#include "engine/durable/cursor_table.h"
#include "engine/durable/epoch_history.h"
#include "engine/durable/inbound_positions.h"
#include "engine/feed/feed.h"
#include "storage/snapshot/snapshot_file.h"

namespace relgraph {

// Appends the records of `users` to the snapshot.
Status AddFeedUsersToSnapshot(const std::vector<Feed::UserState>& users, SnapshotWriter* writer);

// Appends the private marks, blocks and requests (each owner's items in records of at most
// kAccessItemsPerRecord, so that none passes the 1 MiB record limit).
inline constexpr uint32_t kAccessItemsPerRecord = 32768;
Status AddAccessToSnapshot(const Graph::AccessImage& access, SnapshotWriter* writer);

// Appends the named cursors (one record) to the snapshot, when there are any.
Status AddCursorsToSnapshot(const CursorTable& cursors, SnapshotWriter* writer);

// Appends the replication history (one record) when it holds more than epoch 1.
Status AddEpochsToSnapshot(const EpochHistory& epochs, SnapshotWriter* writer);

// Appends a cluster shard's inbound positions (one record) when there are any.
Status AddInboundToSnapshot(const InboundPositions& inbound, SnapshotWriter* writer);

// Applies the records of one feed block to `feed`, `cursors`, `epochs`, `inbound` and the
// graph's access state (ensure forms; positions only go up).
// kCorruption for a record that breaks the layout or holds values no writer could have written.
Status ApplyFeedBlock(std::string_view block, Graph& g, Feed& feed, CursorTable& cursors,
                      EpochHistory& epochs, InboundPositions& inbound);

}  // namespace relgraph
