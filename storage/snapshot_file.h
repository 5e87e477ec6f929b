// Snapshot files, as specified in docs/snapshot-format.md (keep the two in step):
//
//   file   := header edge_block* feed_block* footer
//   header := magic:u8[8]="RGSNAP\0\1" version:u32=2 lsn:u64 created_ms:i64 header_sum:u64   (36 B)
//   block  := raw_len:u32 stored_len:u32 sum:u64 data:u8[stored_len]    (data = LZ4(raw))
//             sum = XXH3_64bits(raw_len .. data), raw_len <= 4 MiB
//   edge raw := (follower:u64 count:u32 (followee:u64 ts_ms:i64){count})*
//   feed raw := feed records, opaque here (the engine's, docs/snapshot-format.md)
//   footer := magic:u8[8]="RGSNEND\2" blocks:u64 entries:u64 edges:u64 feed_blocks:u64
//             footer_sum:u64                                                              (48 B)
// Version 1 files (no feed blocks, footer "RGSNEND\1" without feed_blocks, 40 B) still load.
//
// SnapshotWriter writes `snapshot-<lsn>.rgs.tmp`, and Finish() fsyncs, renames it to
// `snapshot-<lsn>.rgs` and fsyncs the directory, so a finished name is always a complete file.
// ReadSnapshot verifies every checksum and count before it reports success; the callback may
// have been called for earlier entries of a file that then fails, so callers load into scratch
// state and keep it only on success.
//
// Thread-safety: a writer is used by one thread; reads are independent.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "storage/env.h"

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

class SnapshotWriter {
 public:
  static Result<std::unique_ptr<SnapshotWriter>> Create(Env* env, const std::string& dir,
                                                        uint64_t lsn, int64_t created_ms);
  ~SnapshotWriter();  // an unfinished snapshot's temp file is removed

  // Adds a follower's edges (oldest first). Long lists are split across blocks.
  Status Add(uint64_t follower, std::span<const SnapshotEdge> edges);
  // Adds one feed record (at most 1 MiB; never split). REQUIRES: every Add came before.
  Status AddFeedRecord(std::string_view record);
  // Writes the last block and the footer, fsyncs, renames, fsyncs the directory.
  Result<SnapshotInfo> Finish();
  const std::string& final_path() const { return final_path_; }

 private:
  SnapshotWriter(Env* env, std::string dir, std::string temp, std::string final_path);
  Status FlushBlock();

  Env* env_;
  std::string dir_, temp_path_, final_path_;
  std::unique_ptr<WritableFile> file_;
  std::string raw_;       // the block being filled
  bool in_feed_ = false;  // raw_ holds feed records
  SnapshotInfo info_;
  bool finished_ = false;
};

// Reads and verifies `path`; calls fn(follower, edges) for each entry when fn is set, and
// feed_fn(raw) with the contents of each feed block when it is set. When on_counts is set, it
// is called first with the footer's counts (blocks, entries, edges), so a loader can size its
// buffers.
Result<SnapshotInfo> ReadSnapshot(
    Env* env, const std::string& path,
    const std::function<Status(uint64_t follower, std::span<const SnapshotEdge> edges)>& fn,
    const std::function<void(const SnapshotInfo& counts)>& on_counts = nullptr,
    const std::function<Status(std::string_view feed_block)>& feed_fn = nullptr);

}  // namespace relgraph
