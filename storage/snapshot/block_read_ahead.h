// BlockReadAhead: reads, checks and decompresses the blocks of a snapshot file on a background
// thread, a few blocks ahead of the caller (docs/snapshot-format.md, "block").
//
// Why: loading a snapshot is a pipeline of two halves of similar cost. Reading a block (a
// copy out of the page cache), checking its xxh3 sum and decompressing it take about a third
// of a load; the engine's parsing the rest. On two cores they overlap.
//
// Thread-safety: one consumer thread calls Next; the object owns its producer thread, which
// the destructor stops and joins (also when the consumer gives up early).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "storage/env/env.h"
#include "storage/status.h"

namespace relgraph {

// A block's checksum: XXH3_64bits of its raw_len and stored_len (8 bytes) and its data, which
// the checksum field itself separates in the file.
uint64_t SnapshotBlockSum(const char* lengths, const char* data, size_t n);

class BlockReadAhead {
 public:
  // Reads the blocks that tile [begin, end) of `file` (which must outlive this object).
  // Corruption errors read "snapshot <path> at offset <n>: <what>".
  BlockReadAhead(const RandomAccessFile* file, std::string path, uint64_t begin, uint64_t end);
  ~BlockReadAhead();
  BlockReadAhead(const BlockReadAhead&) = delete;
  BlockReadAhead& operator=(const BlockReadAhead&) = delete;

  struct Block {
    uint64_t offset = 0;        // of the block's header in the file
    uint64_t stored_bytes = 0;  // header and compressed data
    std::string raw;            // decompressed contents
  };
  // The next block into *block (its old buffer is recycled); *done = true after the last one.
  // The first error (a failed read, a bad length or checksum) is returned once, in order.
  Status Next(Block* block, bool* done);

 private:
  void Produce();
  Status ReadOne(uint64_t pos, Block* out, std::string* stored) const;

  static constexpr size_t kAhead = 3;
  const RandomAccessFile* file_;
  const std::string path_;
  const uint64_t begin_, end_;

  std::mutex mu_;
  std::condition_variable changed_;
  struct Item {
    Block block;
    Status status;
  };
  std::deque<Item> ready_;          // guarded by mu_
  std::vector<std::string> spare_;  // recycled buffers; guarded by mu_
  bool finished_ = false;           // the producer has pushed its last item; guarded by mu_
  bool stop_ = false;               // guarded by mu_
  std::thread producer_;
};

}  // namespace relgraph
