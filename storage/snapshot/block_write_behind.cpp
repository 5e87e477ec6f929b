#include "storage/snapshot/block_write_behind.h"

#include <lz4.h>

#include <cstring>

#include "storage/snapshot/block_read_ahead.h"
#include "storage/coding.h"

namespace relgraph {
namespace {

constexpr size_t kBlockHeaderBytes = 16;

}  // namespace

Status FrameSnapshotBlock(const std::string& raw, std::string* block) {
  const int bound = LZ4_compressBound(static_cast<int>(raw.size()));
  block->assign(kBlockHeaderBytes + static_cast<size_t>(bound), '\0');
  const int stored = LZ4_compress_default(raw.data(), block->data() + kBlockHeaderBytes,
                                          static_cast<int>(raw.size()), bound);
  if (stored <= 0) return Status(Code::kInternal, "lz4 compression failed");
  block->resize(kBlockHeaderBytes + static_cast<size_t>(stored));
  char* head = block->data();
  EncodeFixed32(head, static_cast<uint32_t>(raw.size()));
  EncodeFixed32(head + 4, static_cast<uint32_t>(stored));
  EncodeFixed64(head + 8,
                SnapshotBlockSum(head, head + kBlockHeaderBytes, static_cast<size_t>(stored)));
  return Status::OK();
}

BlockWriteBehind::BlockWriteBehind(WritableFile* file) : file_(file) {
  worker_ = std::thread([this] { Run(); });
}

BlockWriteBehind::~BlockWriteBehind() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    queue_.clear();
  }
  changed_.notify_all();
  worker_.join();
}

Status BlockWriteBehind::Write(std::string raw) {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return !error_.ok() || queue_.size() < kQueued; });
  if (!error_.ok()) return error_;
  queue_.push_back(std::move(raw));
  lock.unlock();
  changed_.notify_all();
  return Status::OK();
}

Status BlockWriteBehind::Drain() {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return !error_.ok() || (queue_.empty() && !busy_); });
  return error_;
}

void BlockWriteBehind::Run() {
  std::string block;
  for (;;) {
    std::string raw;
    {
      std::unique_lock lock(mu_);
      changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      raw = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    Status s = FrameSnapshotBlock(raw, &block);
    if (s.ok()) s = file_->Append(block);
    {
      std::lock_guard lock(mu_);
      busy_ = false;
      if (!s.ok() && error_.ok()) {
        error_ = s;
        queue_.clear();
      }
    }
    changed_.notify_all();
  }
}

}  // namespace relgraph
