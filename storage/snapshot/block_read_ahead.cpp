#include "storage/snapshot/block_read_ahead.h"

#include <lz4.h>
#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include "storage/coding.h"
#include "storage/snapshot/snapshot_file.h"

namespace relgraph {
namespace {

constexpr size_t kBlockHeaderBytes = 16;

}  // namespace

uint64_t SnapshotBlockSum(const char* lengths, const char* data, size_t n) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, lengths, 8);
  XXH3_64bits_update(&state, data, n);
  return XXH3_64bits_digest(&state);
}

BlockReadAhead::BlockReadAhead(const RandomAccessFile* file, std::string path, uint64_t begin,
                               uint64_t end)
    : file_(file), path_(std::move(path)), begin_(begin), end_(end) {
  producer_ = std::thread([this] { Produce(); });
}

BlockReadAhead::~BlockReadAhead() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  producer_.join();
}

Status BlockReadAhead::ReadOne(uint64_t pos, Block* out, std::string* stored) const {
  auto bad = [&](const std::string& what) {
    return Status::Corruption("snapshot " + path_ + " at offset " + std::to_string(pos) + ": " +
                              what);
  };
  if (end_ - pos < kBlockHeaderBytes) return bad("block header cut short");
  char head[kBlockHeaderBytes];
  RELGRAPH_RETURN_IF_ERROR(file_->ReadAt(pos, kBlockHeaderBytes, head));
  const uint32_t raw_len = DecodeFixed32(head);
  const uint32_t stored_len = DecodeFixed32(head + 4);
  const uint64_t sum = DecodeFixed64(head + 8);
  if (raw_len > kSnapshotMaxBlockRaw || stored_len > end_ - pos - kBlockHeaderBytes ||
      stored_len > static_cast<uint32_t>(LZ4_compressBound(static_cast<int>(raw_len)))) {
    return bad("block length out of range");
  }
  stored->resize(stored_len);
  RELGRAPH_RETURN_IF_ERROR(file_->ReadAt(pos + kBlockHeaderBytes, stored_len, stored->data()));
  if (SnapshotBlockSum(head, stored->data(), stored_len) != sum) {
    return bad("block checksum mismatch");
  }
  out->raw.resize(raw_len);
  const int got = LZ4_decompress_safe(stored->data(), out->raw.data(), static_cast<int>(stored_len),
                                      static_cast<int>(raw_len));
  if (got != static_cast<int>(raw_len)) return bad("block does not decompress to its length");
  out->offset = pos;
  out->stored_bytes = kBlockHeaderBytes + stored_len;
  return Status::OK();
}

void BlockReadAhead::Produce() {
  std::string stored;
  for (uint64_t pos = begin_; pos < end_;) {
    Item item;
    {
      std::unique_lock lock(mu_);
      changed_.wait(lock, [&] { return stop_ || ready_.size() < kAhead; });
      if (stop_) break;
      if (!spare_.empty()) {
        item.block.raw = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    item.status = ReadOne(pos, &item.block, &stored);
    const bool failed = !item.status.ok();
    pos += item.block.stored_bytes;
    {
      std::lock_guard lock(mu_);
      ready_.push_back(std::move(item));
    }
    changed_.notify_all();
    if (failed) break;
  }
  {
    std::lock_guard lock(mu_);
    finished_ = true;
  }
  changed_.notify_all();
}

Status BlockReadAhead::Next(Block* block, bool* done) {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return finished_ || !ready_.empty(); });
  if (ready_.empty()) {
    *done = true;
    return Status::OK();
  }
  *done = false;
  Item item = std::move(ready_.front());
  ready_.pop_front();
  if (block->raw.capacity() > 0) spare_.push_back(std::move(block->raw));  // reuse it
  *block = std::move(item.block);
  lock.unlock();
  changed_.notify_all();
  return item.status;
}

}  // namespace relgraph
