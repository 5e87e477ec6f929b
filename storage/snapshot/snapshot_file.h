// Snapshot files, as specified in docs/snapshot-format.md (keep the two in step):
//
//   file   := header graph_block* feed_block* footer
//   header := magic:u8[8]="RGSNAP\0\1" version:u32 lsn:u64 created_ms:i64 header_sum:u64   (36 B)
//   block  := raw_len:u32 stored_len:u32 sum:u64 data:u8[stored_len]    (data = LZ4(raw))
//             sum = XXH3_64bits(raw_len .. data), raw_len <= 4 MiB
//   version 2 graph blocks are edge lists, parsed here:
//     raw := (follower:u64 count:u32 (followee:u64 ts_ms:i64){count})*
//   version 3 to 5 graph blocks are the engine's image records, opaque here (4 differs from 3
//   only in the feed records it may hold, 5 from 4 in how the image packs its lists)
//   feed raw := feed records, opaque here (the engine's, docs/snapshot-format.md)
//   footer := magic:u8[8]="RGSNEND" version:u8 blocks:u64 entries:u64 edges:u64 feed_blocks:u64
//             footer_sum:u64                                                              (48 B)
// Version 1 files (no feed blocks, footer "RGSNEND\1" without feed_blocks, 40 B) still load.
// For versions 3 to 5, `entries` counts users and `edges` edges, as the engine reported them; only
// the engine's loader can check them.
//
// SnapshotWriter writes `snapshot-<lsn>.rgs.tmp`, and Finish() fsyncs, renames it to
// `snapshot-<lsn>.rgs` and fsyncs the directory, so a finished name is always a complete file.
// ReadSnapshot verifies every checksum and count before it reports success; the callback may
// have been called for earlier entries of a file that then fails, so callers load into scratch
// state and keep it only on success.
//
// Thread-safety: a writer is used by one thread, except AppendEdgeBlocks (see there); reads
// are independent.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "storage/env/env.h"
#include "storage/snapshot/block_write_behind.h"

namespace relgraph {

struct SnapshotEdge {
  uint64_t followee;
  int64_t ts_ms;
};

struct SnapshotInfo {
  uint64_t lsn = 0;
  int64_t created_ms = 0;
  uint64_t blocks = 0;
  uint64_t entries = 0;
  uint64_t edges = 0;
  uint64_t file_bytes = 0;
  uint64_t raw_bytes = 0;    // uncompressed block contents
  uint64_t feed_blocks = 0;  // of `blocks`, those holding feed records (after the edge blocks)
  uint32_t version = 2;
};

inline constexpr uint32_t kSnapshotMaxBlockRaw = 4u << 20;
inline constexpr size_t kSnapshotMaxRecord = 1u << 20;  // image and feed records

// What a snapshot's graph blocks hold.
enum class SnapshotLayout : uint8_t {
  kEdgeList,    // version 2: each follower's list by external ids (imports write these)
  kGraphImage,  // version 5 (4 before packed lists, 3 before blocks and requests): the engine's own
                // layout, opaque to storage (fast to load)
};

// Where a writer compresses and appends its blocks.
enum class SnapshotCompression : uint8_t {
  kInline,      // in the caller's thread (online snapshots: a second busy thread would
                // lengthen the engine's pauses on a two-core machine, 3-4 ms -> up to 8.7 ms)
  kBackground,  // on a second thread, overlapping the next block (offline writes, imports)
};

class SnapshotWriter;

// Version-2 edge blocks encoded and compressed apart from the writer, so that several threads
// can each fill their own and hand finished blocks to one SnapshotWriter (AppendEdgeBlocks).
// An import fills one on each core this way. A list split across blocks is finished in the
// same Add call, so between calls the finished blocks never end inside a list, and a
// follower's entries stay one run in the file, as the format requires.
// Thread-safety: used by one thread at a time.
class SnapshotEdgeBlocks {
 public:
  // As SnapshotWriter::Add.
  Status Add(uint64_t follower, std::span<const SnapshotEdge> edges);
  // Compresses the block being filled, so AppendEdgeBlocks takes everything.
  Status Finish() { return FlushBlock(); }
  bool has_finished_blocks() const { return !framed_.empty(); }

 private:
  friend class SnapshotWriter;
  Status FlushBlock();

  std::string raw_;                  // the block being filled
  std::vector<std::string> framed_;  // finished blocks, as stored
  uint64_t entries_ = 0, edges_ = 0, raw_bytes_ = 0;
};

class SnapshotWriter {
 public:
  static Result<std::unique_ptr<SnapshotWriter>> Create(
      Env* env, const std::string& dir, uint64_t lsn, int64_t created_ms,
      SnapshotLayout layout = SnapshotLayout::kEdgeList,
      SnapshotCompression compression = SnapshotCompression::kInline);
  ~SnapshotWriter();  // an unfinished snapshot's temp file is removed

  // Adds a follower's edges (oldest first). Long lists are split across blocks.
  // REQUIRES: layout kEdgeList.
  Status Add(uint64_t follower, std::span<const SnapshotEdge> edges);
  // Appends the finished blocks of `blocks` (and empties it), after everything added so far.
  // Several threads may call this concurrently, each with its own `blocks`, when no other
  // method runs. REQUIRES: layout kEdgeList.
  Status AppendEdgeBlocks(SnapshotEdgeBlocks& blocks);
  // Adds one image record (at most kSnapshotMaxRecord; never split across blocks), and counts
  // what the footer reports. REQUIRES: layout kGraphImage; before any feed record.
  Status AddImageRecord(std::string_view record);
  void SetImageCounts(uint64_t users, uint64_t edges) {
    info_.entries = users;
    info_.edges = edges;
  }
  // Adds one feed record (at most 1 MiB; never split). REQUIRES: every Add came before.
  Status AddFeedRecord(std::string_view record);
  // Writes the last block and the footer, fsyncs, renames, fsyncs the directory.
  Result<SnapshotInfo> Finish();
  const std::string& final_path() const { return final_path_; }

 private:
  SnapshotWriter(Env* env, std::string dir, std::string temp, std::string final_path);
  Status FlushBlock();
  Status AddRecord(std::string_view record);  // never split across blocks

  Env* env_;
  std::string dir_, temp_path_, final_path_;
  std::unique_ptr<WritableFile> file_;
  // kBackground: appends blocks until Finish drains it; null when compressing inline.
  std::unique_ptr<BlockWriteBehind> write_behind_;
  std::mutex append_mu_;  // serializes AppendEdgeBlocks
  std::string raw_;       // the block being filled
  SnapshotLayout layout_ = SnapshotLayout::kEdgeList;
  bool in_feed_ = false;  // raw_ holds feed records
  SnapshotInfo info_;
  bool finished_ = false;
};

// What ReadSnapshot hands a loader; every callback is optional. A non-OK Status from one stops
// the read and is returned.
struct SnapshotVisitor {
  // First, with the header's fields and the footer's counts (blocks, entries, edges), so a
  // loader can size its buffers before any block arrives.
  std::function<Status(const SnapshotInfo& counts)> counts;
  // Versions 1 and 2: each entry of an edge block.
  std::function<Status(uint64_t follower, std::span<const SnapshotEdge> edges)> edges;
  // Version 3: the contents of each graph (image) block, in file order.
  std::function<Status(std::string_view raw)> image_block;
  // The contents of each feed block, in file order.
  std::function<Status(std::string_view raw)> feed_block;
};

// Reads and verifies `path` (every checksum, and the footer's counts where storage can count
// them), calling the visitor's callbacks as it goes.
Result<SnapshotInfo> ReadSnapshot(Env* env, const std::string& path,
                                  const SnapshotVisitor& visitor = {});

}  // namespace relgraph
