#include "storage/wal/wal_writer.h"

#include "storage/env/file_names.h"
#include "storage/wal/wal_format.h"

namespace relgraph {
namespace {

// In none/everysec a full buffer is written by the background thread; past this many times
// the buffer size, Append writes inline (backpressure when the disk cannot keep up).
constexpr size_t kBackpressureFactor = 64;

}  // namespace

const char* DurabilityModeName(DurabilityMode mode) {
  switch (mode) {
    case DurabilityMode::kAlways:
      return "always";
    case DurabilityMode::kEverySec:
      return "everysec";
    case DurabilityMode::kNone:
      return "none";
  }
  return "unknown";
}

Result<DurabilityMode> ParseDurabilityMode(std::string_view name) {
  if (name == "always") return DurabilityMode::kAlways;
  if (name == "everysec") return DurabilityMode::kEverySec;
  if (name == "none") return DurabilityMode::kNone;
  return Status::InvalidArgument("durability mode must be always, everysec or none, got '" +
                                 std::string(name) + "'");
}

WalWriter::WalWriter(Env* env, std::string dir, const WalWriterOptions& options, uint64_t next_lsn)
    : env_(env),
      dir_(std::move(dir)),
      options_(options),
      next_lsn_(next_lsn),
      buffer_first_lsn_(next_lsn),
      written_lsn_(next_lsn - 1),
      synced_lsn_(next_lsn - 1),
      synced_atomic_(next_lsn - 1) {}

Result<std::unique_ptr<WalWriter>> WalWriter::Open(Env* env, const std::string& dir,
                                                   const WalWriterOptions& options,
                                                   uint64_t segment_no, uint64_t next_lsn) {
  if (next_lsn == 0) return Status::InvalidArgument("LSNs start at 1");
  std::unique_ptr<WalWriter> w(new WalWriter(env, dir, options, next_lsn));
  RELGRAPH_RETURN_IF_ERROR(w->OpenSegment(segment_no, next_lsn));
  if (options.mode != DurabilityMode::kAlways)
    w->syncer_ = std::thread([p = w.get()] { p->SyncLoop(); });
  return w;
}

WalWriter::~WalWriter() {
  Close().IgnoreError();
}

Status WalWriter::OpenSegment(uint64_t segment_no, uint64_t first_lsn) {
  const std::string path = JoinPath(dir_, WalSegmentName(segment_no));
  if (env_->Exists(path)) return Status::IOError("WAL segment " + path + " exists already");
  auto f = env_->OpenWritable(path, /*truncate=*/true);
  if (!f.ok()) return f.status();
  std::string header;
  EncodeWalHeader({segment_no, first_lsn}, &header);
  RELGRAPH_RETURN_IF_ERROR((*f)->Append(header));
  RELGRAPH_RETURN_IF_ERROR((*f)->Sync());
  RELGRAPH_RETURN_IF_ERROR(env_->SyncDir(dir_));  // the new file's name is durable
  if (file_) RELGRAPH_RETURN_IF_ERROR(file_->Close());
  file_ = std::move(*f);
  segment_no_ = segment_no;
  return Status::OK();
}

Result<uint64_t> WalWriter::Append(uint8_t type, std::string_view payload) {
  const Record record{type, payload};
  return AppendBatch(std::span<const Record>(&record, 1));
}

Result<uint64_t> WalWriter::AppendBatch(std::span<const Record> records) {
  for (const Record& r : records) {
    if (r.payload.size() > kMaxRecordPayload) {
      return Status::InvalidArgument("WAL record payload of " + std::to_string(r.payload.size()) +
                                     " bytes is over the 1 MiB limit");
    }
  }
  std::unique_lock lock(mu_);
  if (!failed_.ok())
    return Status(Code::kUnavailable, "WAL failed earlier, writes refused: " + failed_.message());
  if (closed_) return Status(Code::kUnavailable, "WAL is closed");
  for (const Record& r : records) EncodeWalRecord(next_lsn_++, r.type, r.payload, &buffer_);
  const uint64_t lsn = next_lsn_ - 1;
  if (options_.mode != DurabilityMode::kAlways && buffer_.size() >= options_.buffer_bytes) {
    if (buffer_.size() >= kBackpressureFactor * options_.buffer_bytes) {
      // The disk is not keeping up: write inline so the buffer cannot grow without bound.
      RELGRAPH_RETURN_IF_ERROR(FlushLocked(lock, /*sync=*/false));
    } else {
      cv_.notify_all();  // the background thread writes it
    }
  }
  return lsn;
}

Status WalWriter::Commit(uint64_t lsn) {
  if (options_.mode != DurabilityMode::kAlways) {
    if (!failed_flag_.load(std::memory_order_acquire)) return Status::OK();
    return Status(Code::kUnavailable, "WAL failed: " + health().message());
  }
  for (;;) {
    if (synced_atomic_.load(std::memory_order_acquire) >= lsn) return Status::OK();
    const uint64_t generation = flush_generation_.load(std::memory_order_acquire);
    {
      std::unique_lock relock(mu_);
      if (synced_lsn_ >= lsn) return Status::OK();
      if (!failed_.ok()) return Status(Code::kUnavailable, "WAL failed: " + failed_.message());
      if (!flushing_) {
        // Lead: one write + fsync covers everyone who appended before it.
        RELGRAPH_RETURN_IF_ERROR(FlushLocked(relock, /*sync=*/true));
        continue;
      }
    }
    flush_generation_.wait(generation, std::memory_order_acquire);  // the running flush ends
  }
}

Status WalWriter::Flush(bool sync) {
  std::unique_lock lock(mu_);
  return FlushLocked(lock, sync);
}

Status WalWriter::FlushLocked(std::unique_lock<std::mutex>& lock, bool sync) {
  while (flushing_) cv_.wait(lock);
  if (!failed_.ok()) return Status(Code::kUnavailable, "WAL failed: " + failed_.message());
  if (file_ == nullptr) return Status(Code::kUnavailable, "WAL is closed");
  flushing_ = true;
  std::string batch;
  batch.swap(buffer_);
  buffer_.swap(spare_);  // keeps appending into the other buffer's capacity
  const uint64_t batch_first = buffer_first_lsn_;
  const uint64_t batch_last = next_lsn_ - 1;
  buffer_first_lsn_ = next_lsn_;
  const bool need_sync = sync && (!batch.empty() || synced_lsn_ < written_lsn_);
  lock.unlock();

  // Only the leader touches the file, so this runs without the mutex.
  Status s;
  if (!batch.empty() && file_->Size() >= options_.segment_bytes) {
    s = file_->Sync();
    if (s.ok()) s = OpenSegment(segment_no_ + 1, batch_first);
  }
  if (s.ok() && !batch.empty()) s = file_->Append(batch);
  if (s.ok() && need_sync) s = file_->Sync();

  lock.lock();
  flushing_ = false;
  batch.clear();
  spare_.swap(batch);
  if (s.ok()) {
    written_lsn_ = batch_last;
    if (need_sync) {
      synced_lsn_ = batch_last;
      synced_atomic_.store(batch_last, std::memory_order_release);
    }
  } else {
    failed_ = Status(s.code(), "WAL segment " + std::to_string(segment_no_) + ": " + s.message());
    failed_flag_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
  flush_generation_.fetch_add(1, std::memory_order_release);
  flush_generation_.notify_all();
  return s.ok() ? s : Status(Code::kUnavailable, "WAL failed: " + failed_.message());
}

void WalWriter::SyncLoop() {
  // none and everysec: write the buffer when it fills; in everysec also fsync once per interval.
  // Errors become the sticky failure, which the next Append or Commit reports.
  std::unique_lock lock(mu_);
  auto next_sync = std::chrono::steady_clock::now() + options_.sync_interval;
  while (!stop_) {
    cv_.wait_until(lock, next_sync, [&] {
      return stop_ || (!flushing_ && buffer_.size() >= options_.buffer_bytes);
    });
    if (stop_ || !failed_.ok()) continue;
    const bool sync_due =
        options_.mode == DurabilityMode::kEverySec && std::chrono::steady_clock::now() >= next_sync;
    if (sync_due) {
      if (synced_lsn_ < next_lsn_ - 1) FlushLocked(lock, /*sync=*/true).IgnoreError();
      next_sync = std::chrono::steady_clock::now() + options_.sync_interval;
    } else if (buffer_.size() >= options_.buffer_bytes) {
      FlushLocked(lock, /*sync=*/false).IgnoreError();
    } else if (options_.mode == DurabilityMode::kNone) {
      next_sync = std::chrono::steady_clock::now() + options_.sync_interval;
    }
  }
}

Status WalWriter::Close() {
  {
    std::unique_lock lock(mu_);
    if (closed_) return failed_;
    stop_ = true;
    cv_.notify_all();
  }
  if (syncer_.joinable()) syncer_.join();
  std::unique_lock lock(mu_);
  Status s = failed_.ok() ? FlushLocked(lock, /*sync=*/true) : failed_;
  closed_ = true;
  while (flushing_) cv_.wait(lock);
  if (file_) {
    const Status c = file_->Close();
    if (s.ok()) s = c;
    file_.reset();
  }
  return s;
}

uint64_t WalWriter::last_lsn() const {
  std::lock_guard lock(mu_);
  return next_lsn_ - 1;
}
uint64_t WalWriter::durable_lsn() const {
  std::lock_guard lock(mu_);
  return synced_lsn_;
}
uint64_t WalWriter::written_lsn() const {
  std::lock_guard lock(mu_);
  return written_lsn_;
}
Status WalWriter::health() const {
  if (!failed_flag_.load(std::memory_order_acquire)) return Status::OK();
  std::lock_guard lock(mu_);
  return failed_;
}

}  // namespace relgraph
