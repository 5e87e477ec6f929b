// BlockWriteBehind: compresses, frames and appends snapshot blocks on a background thread,
// while the caller fills the next one (docs/snapshot-format.md, "block").
//
// Why: LZ4 compression and the write are a sixth of an import and of a snapshot; on two
// cores they overlap with producing the blocks. Blocks are appended in the order queued.
//
// Errors: the first failed compression or append is kept; every later Write and Drain
// returns it, and blocks queued after it are dropped (the snapshot is abandoned anyway).
// Thread-safety: one producer thread calls Write and Drain; the destructor stops the worker,
// dropping what is still queued. The file must outlive this object and must not be written
// by anyone else until Drain has returned.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "storage/env/env.h"
#include "storage/status.h"

namespace relgraph {

class BlockWriteBehind {
 public:
  explicit BlockWriteBehind(WritableFile* file);
  ~BlockWriteBehind();
  BlockWriteBehind(const BlockWriteBehind&) = delete;
  BlockWriteBehind& operator=(const BlockWriteBehind&) = delete;

  // Queues a block's raw contents, waiting while two are queued already.
  Status Write(std::string raw);
  // Waits until every queued block is appended.
  Status Drain();

 private:
  void Run();

  static constexpr size_t kQueued = 2;
  WritableFile* const file_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::string> queue_;  // guarded by mu_
  bool busy_ = false;              // the worker holds a block; guarded by mu_
  bool stop_ = false;              // guarded by mu_
  Status error_;                   // the first failure; guarded by mu_
  std::thread worker_;
};

// A block as stored: raw_len, stored_len, checksum, LZ4 data.
Status FrameSnapshotBlock(const std::string& raw, std::string* block);

}  // namespace relgraph
