#include "storage/wal/wal_writer.h"

#include <algorithm>
#include <cstdio>

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
      first_lsn_(next_lsn),
      synced_atomic_(next_lsn - 1) {}

Result<std::unique_ptr<WalWriter>> WalWriter::Open(Env* env, const std::string& dir,
                                                   const WalWriterOptions& options,
                                                   uint64_t segment_no, uint64_t next_lsn) {
  if (next_lsn == 0) return Status::InvalidArgument("LSNs start at 1");
  std::unique_ptr<WalWriter> w(new WalWriter(env, dir, options, next_lsn));
  RELGRAPH_RETURN_IF_ERROR(w->OpenSegment(segment_no, next_lsn, /*replace_empty=*/false));
  w->stats_.segment_no = segment_no;
  w->background_ = std::thread([p = w.get()] { p->BackgroundLoop(); });
  return w;
}

WalWriter::~WalWriter() {
  Close().IgnoreError();
}

std::string WalWriter::SegmentPath() const {
  return JoinPath(dir_, WalSegmentName(segment_no_));
}

Status WalWriter::OpenSegment(uint64_t segment_no, uint64_t first_lsn, bool replace_empty) {
  const std::string path = JoinPath(dir_, WalSegmentName(segment_no));
  if (env_->Exists(path)) {
    // Only a rollover that failed leaves a file of the next number, and it holds no record.
    auto size = env_->FileSize(path);
    if (!replace_empty || !size.ok() || *size > kWalHeaderBytes)
      return Status::IOError("WAL segment " + path + " exists already");
  }
  auto f = env_->OpenWritable(path, /*truncate=*/true);
  if (!f.ok()) return f.status();
  std::string header;
  EncodeWalHeader({segment_no, first_lsn}, &header);
  RELGRAPH_RETURN_IF_ERROR((*f)->Append(header));
  RELGRAPH_RETURN_IF_ERROR((*f)->Sync());
  RELGRAPH_RETURN_IF_ERROR(env_->SyncDir(dir_));  // the new file's name is durable
  // The old segment was fsynced before the rollover: its close can lose nothing.
  if (file_) file_->Close().IgnoreError();
  file_ = std::move(*f);
  segment_no_ = segment_no;
  synced_bytes_ = written_bytes_ = file_->Size();
  unsynced_.clear();
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
  if (closed_) return Status(Code::kUnavailable, "WAL is closed");
  const size_t before = buffer_.size();
  for (const Record& r : records) EncodeWalRecord(next_lsn_++, r.type, r.payload, &buffer_);
  stats_.appended_bytes += buffer_.size() - before;
  const uint64_t lsn = next_lsn_ - 1;
  if (options_.mode != DurabilityMode::kAlways && buffer_.size() >= options_.buffer_bytes &&
      stall_.ok()) {
    if (buffer_.size() >= kBackpressureFactor * options_.buffer_bytes) {
      // The disk is not keeping up: write inline so the buffer cannot grow without bound. A
      // failure stalls the WAL with the records kept for the retry: they are buffered all
      // the same, so this Append succeeds.
      FlushLocked(lock, /*sync=*/false).IgnoreError();
    } else {
      cv_.notify_all();  // the background thread writes it
    }
  }
  return lsn;
}

Status WalWriter::Commit(uint64_t lsn) {
  if (options_.mode != DurabilityMode::kAlways) return Status::OK();
  for (;;) {
    if (synced_atomic_.load(std::memory_order_acquire) >= lsn) return Status::OK();
    const uint64_t generation = flush_generation_.load(std::memory_order_acquire);
    {
      std::unique_lock relock(mu_);
      if (synced_lsn_ >= lsn) return Status::OK();
      if (closed_) {
        return Status(Code::kUnavailable,
                      "WAL closed before LSN " + std::to_string(lsn) + " was durable" +
                          (stall_.ok() ? std::string() : ": " + stall_.message()));
      }
      if (!stall_.ok()) {
        cv_.wait(relock);  // a retry that repairs the WAL covers this record, or Close refuses it
        continue;
      }
      if (!flushing_) {
        // Lead: one write + fsync covers everyone who appended before it. A failure stalls the
        // WAL with this record kept: the loop then waits for the retry.
        FlushLocked(relock, /*sync=*/true).IgnoreError();
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

Status WalWriter::RefusedLocked() const {
  return Status(Code::kUnavailable, "WAL cannot be written (retrying): " + stall_.message());
}

void WalWriter::StallLocked(const Status& s) {
  const Status reason(s.code(), "WAL segment " + std::to_string(segment_no_) + ": " + s.message(),
                      s.detail());
  if (stall_.ok()) {
    stalled_since_ = std::chrono::steady_clock::now();
    repair_attempts_ = 0;
    retry_delay_ = options_.retry_min;
    retry_at_ = stalled_since_ + retry_delay_;
    if (options_.on_event) {
      options_.on_event({WalEvent::Kind::kStalled,
                         reason.message() + "; new writes refused and records after LSN " +
                             std::to_string(synced_lsn_) +
                             " held until it can be written again (retrying with backoff)"});
    }
  }
  stall_ = reason;
  stalled_flag_.store(true, std::memory_order_release);
}

Status WalWriter::FlushLocked(std::unique_lock<std::mutex>& lock, bool sync, bool repairing) {
  while (flushing_) cv_.wait(lock);
  if (!stall_.ok() && !repairing) return RefusedLocked();
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
  bool rolled = false;  // the old segment was fsynced whole and a new one started
  // The fsyncs of this flush and their time, counted once the mutex is held again.
  uint64_t fsyncs = 0, fsync_ns[2] = {0, 0};
  auto sync_file = [&] {
    const auto began = std::chrono::steady_clock::now();
    Status r = file_->Sync();
    if (r.ok()) {
      fsync_ns[fsyncs++] = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                     std::chrono::steady_clock::now() - began)
                                                     .count());
    }
    return r;
  };
  if (!batch.empty() && written_bytes_ >= options_.segment_bytes) {
    s = sync_file();
    if (s.ok()) {
      synced_bytes_ = written_bytes_;
      unsynced_.clear();
      rolled = true;
      s = OpenSegment(segment_no_ + 1, batch_first, /*replace_empty=*/true);
    }
  }
  if (s.ok() && !batch.empty()) s = file_->Append(batch);
  if (s.ok() && need_sync) s = sync_file();
  if (s.ok()) {
    written_bytes_ += batch.size();
    if (need_sync) {
      synced_bytes_ = written_bytes_;
      unsynced_.clear();
    } else if (options_.mode != DurabilityMode::kNone) {
      unsynced_.append(batch);
    }
  }

  lock.lock();
  flushing_ = false;
  for (uint64_t i = 0; i < fsyncs; ++i) {
    size_t b = 0;
    while (b < kFsyncBoundsNs.size() && fsync_ns[i] > kFsyncBoundsNs[b]) ++b;
    ++stats_.fsync_buckets[b];
    ++stats_.fsyncs;
    stats_.fsync_ns += fsync_ns[i];
  }
  stats_.segment_no = segment_no_;
  if (rolled && synced_lsn_ < written_lsn_) {
    synced_lsn_ = written_lsn_;
    synced_atomic_.store(written_lsn_, std::memory_order_release);
  }
  if (s.ok()) {
    written_lsn_ = batch_last;
    if (need_sync) {
      synced_lsn_ = batch_last;
      synced_atomic_.store(batch_last, std::memory_order_release);
    }
  } else {
    // Nothing of the batch counts as written: it goes back in front of what was appended
    // meanwhile, for the retry (which first cuts off whatever part of it reached the file).
    batch.append(buffer_);
    buffer_.swap(batch);
    buffer_first_lsn_ = batch_first;
    StallLocked(s);
  }
  batch.clear();
  spare_.swap(batch);
  cv_.notify_all();
  flush_generation_.fetch_add(1, std::memory_order_release);
  flush_generation_.notify_all();
  return s.ok() ? s : RefusedLocked();
}

Status WalWriter::RepairTail() {
  const std::string path = SegmentPath();
  // `none` keeps no copy of what it wrote without fsync: it trusts the OS with it.
  const uint64_t keep = options_.mode == DurabilityMode::kNone ? written_bytes_ : synced_bytes_;
  if (file_) {
    file_->Close().IgnoreError();  // reopened below at the cut; nothing in it is trusted past it
    file_.reset();
  }
  RELGRAPH_RETURN_IF_ERROR(env_->Truncate(path, keep));
  auto f = env_->OpenWritable(path, /*truncate=*/false);
  if (!f.ok()) return f.status();
  if ((*f)->Size() != keep) {
    return Status::IOError(path + " is " + std::to_string((*f)->Size()) +
                           " bytes after cutting it to " + std::to_string(keep));
  }
  file_ = std::move(*f);
  if (options_.mode != DurabilityMode::kNone && !unsynced_.empty())
    RELGRAPH_RETURN_IF_ERROR(file_->Append(unsynced_));
  RELGRAPH_RETURN_IF_ERROR(file_->Sync());
  synced_bytes_ = written_bytes_ = file_->Size();
  unsynced_.clear();
  return Status::OK();
}

Status WalWriter::RepairLocked(std::unique_lock<std::mutex>& lock) {
  while (flushing_) cv_.wait(lock);
  if (stall_.ok()) return Status::OK();
  ++repair_attempts_;
  flushing_ = true;
  lock.unlock();
  Status s = RepairTail();
  lock.lock();
  flushing_ = false;
  const uint64_t cut_to = synced_bytes_;
  if (s.ok()) {
    if (synced_lsn_ < written_lsn_) {
      synced_lsn_ = written_lsn_;
      synced_atomic_.store(written_lsn_, std::memory_order_release);
    }
    const uint64_t first = synced_lsn_ + 1, last = next_lsn_ - 1;
    s = FlushLocked(lock, /*sync=*/true, /*repairing=*/true);
    if (s.ok()) {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - stalled_since_).count();
      if (options_.on_event) {
        char line[160];
        std::snprintf(line, sizeof line,
                      "WAL writable again after %.1f s (%llu attempts): ", seconds,
                      static_cast<unsigned long long>(repair_attempts_));
        options_.on_event({WalEvent::Kind::kResumed,
                           line + std::string("segment ") + SegmentPath() + " cut back to byte " +
                               std::to_string(cut_to) +
                               (first <= last ? ", records " + std::to_string(first) + ".." +
                                                    std::to_string(last) + " written and fsynced"
                                              : std::string()) +
                               "; writes resume"});
      }
      stall_ = Status::OK();
      stalled_flag_.store(false, std::memory_order_release);
      cv_.notify_all();
      return Status::OK();
    }
  } else {
    StallLocked(s);
  }
  retry_delay_ = std::min(retry_delay_ * 2, options_.retry_max);
  retry_at_ = std::chrono::steady_clock::now() + retry_delay_;
  cv_.notify_all();
  return RefusedLocked();
}

Status WalWriter::TryRepair() {
  std::unique_lock lock(mu_);
  if (closed_) return stall_.ok() ? Status::OK() : RefusedLocked();
  return RepairLocked(lock);
}

void WalWriter::BackgroundLoop() {
  // Every mode: retries a stalled WAL with backoff. none and everysec: write the buffer when it
  // fills; in everysec also fsync once per interval. Errors stall the WAL (StallLocked).
  std::unique_lock lock(mu_);
  auto next_sync = std::chrono::steady_clock::now() + options_.sync_interval;
  while (!stop_) {
    if (!stall_.ok()) {
      if (!cv_.wait_until(lock, retry_at_, [&] { return stop_ || stall_.ok(); }))
        RepairLocked(lock).IgnoreError();  // schedules the next try when it fails
      continue;
    }
    if (options_.mode == DurabilityMode::kAlways) {
      cv_.wait(lock, [&] { return stop_ || !stall_.ok(); });
      continue;
    }
    cv_.wait_until(lock, next_sync, [&] {
      return stop_ || !stall_.ok() || (!flushing_ && buffer_.size() >= options_.buffer_bytes);
    });
    if (stop_ || !stall_.ok()) continue;
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

Status WalWriter::GiveUpLocked() {
  const uint64_t acked = options_.mode == DurabilityMode::kAlways ? synced_lsn_ : next_lsn_ - 1;
  // What stays: in `always`, only what was fsynced (every acknowledged record); otherwise also
  // what was written whole, best effort. A torn write past it goes either way.
  const uint64_t keep = options_.mode == DurabilityMode::kAlways ? synced_bytes_ : written_bytes_;
  const std::string path = SegmentPath();
  if (file_) {
    file_->Close().IgnoreError();  // nothing written through it is trusted past `keep`
    file_.reset();
  }
  Status cut = env_->Truncate(path, keep);
  // A rollover that failed may have left the next segment, holding no record: it goes too.
  const std::string next = JoinPath(dir_, WalSegmentName(segment_no_ + 1));
  if (cut.ok() && env_->Exists(next)) {
    auto size = env_->FileSize(next);
    if (size.ok() && *size <= kWalHeaderBytes) cut = env_->RemoveFile(next);
  }
  const uint64_t first = synced_lsn_ + 1, last = next_lsn_ - 1;
  std::string what = "WAL closed while it could not be written (" + stall_.message() + "): ";
  Status s;
  if (!cut.ok()) {
    s = Status(Code::kUnavailable, what + "cutting " + path + " back to byte " +
                                       std::to_string(keep) + " failed: " + cut.message());
  } else if (first > last) {
    what += "every record was fsynced";
  } else if (acked < first) {
    what += "records " + std::to_string(first) + ".." + std::to_string(last) +
            " were never fsynced and are dropped (their writers are told unavailable); nothing "
            "acknowledged is lost";
  } else {
    s = Status(Code::kUnavailable, what + "acknowledged records " + std::to_string(first) + ".." +
                                       std::to_string(last) + " may be lost");
  }
  if (options_.on_event)
    options_.on_event({WalEvent::Kind::kClosedStalled, s.ok() ? what : s.message()});
  return s;
}

Status WalWriter::Close() {
  {
    std::unique_lock lock(mu_);
    if (closed_) return close_status_;
    stop_ = true;
    cv_.notify_all();
  }
  if (background_.joinable()) background_.join();
  std::unique_lock lock(mu_);
  // A stalled WAL gets one more try; so does one whose final flush fails now.
  Status s = stall_.ok() ? FlushLocked(lock, /*sync=*/true) : RepairLocked(lock);
  if (!s.ok() && !stall_.ok()) s = RepairLocked(lock);
  while (flushing_) cv_.wait(lock);
  if (!stall_.ok()) s = GiveUpLocked();
  closed_ = true;
  if (file_) {
    const Status c = file_->Close();
    if (s.ok()) s = c;
    file_.reset();
  }
  close_status_ = s;
  cv_.notify_all();  // committers still waiting are refused
  flush_generation_.fetch_add(1, std::memory_order_release);
  flush_generation_.notify_all();
  return s;
}

WalStats WalWriter::stats() const {
  std::lock_guard lock(mu_);
  WalStats s = stats_;
  s.appends = next_lsn_ - first_lsn_;
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
  if (!stalled_flag_.load(std::memory_order_acquire)) return Status::OK();
  std::lock_guard lock(mu_);
  return stall_;
}

}  // namespace relgraph
