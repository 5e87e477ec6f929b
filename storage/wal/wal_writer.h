// WalWriter: appends records to the newest WAL segment with one of three durability promises
// (docs/wal-format.md, "Durability modes").
//
// Why this design: Append only encodes into an in-memory buffer under a mutex (cheap, so the
// engine can call it while holding its own lock, keeping WAL order = apply order). Durability
// is a separate step, Commit(lsn), taken after the engine lock is released. In `always` mode
// the first committer becomes the leader: it takes the whole buffer, writes and fsyncs it
// outside the mutex, and wakes everyone whose record it covered. Writers arriving meanwhile
// queue up behind it and are covered by the next leader's single fsync (group commit). In
// `none` and `everysec` a background thread writes the buffer when it fills (Append only wakes
// it; it writes inline only when the buffer reaches 64x its size, as backpressure), and in
// `everysec` also fsyncs once a second. The first failed write or fsync is sticky: every later
// Append and Commit fails with kUnavailable naming the original error.
//
// Thread-safety: all methods are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>

#include "storage/env/env.h"

namespace relgraph {

enum class DurabilityMode { kAlways, kEverySec, kNone };
const char* DurabilityModeName(DurabilityMode mode);  // "always", "everysec", "none"
Result<DurabilityMode> ParseDurabilityMode(std::string_view name);

struct WalWriterOptions {
  DurabilityMode mode = DurabilityMode::kEverySec;
  uint64_t segment_bytes = uint64_t{64} << 20;  // start a new segment past this size
  size_t buffer_bytes = size_t{1} << 20;  // none/everysec: written in the background past this
  std::chrono::milliseconds sync_interval{1000};  // everysec
};

class WalWriter {
 public:
  // Creates segment `segment_no` (which must not exist) whose first record will be next_lsn.
  static Result<std::unique_ptr<WalWriter>> Open(Env* env, const std::string& dir,
                                                 const WalWriterOptions& options,
                                                 uint64_t segment_no, uint64_t next_lsn);
  ~WalWriter();  // Close(), ignoring its status (call Close() to see it)

  // Buffers a record and returns its LSN. Does not wait for I/O except in none/everysec when
  // the buffer is full. kUnavailable after a failure; kInvalidArgument for a payload > 1 MiB.
  Result<uint64_t> Append(uint8_t type, std::string_view payload);
  // One record of AppendBatch.
  struct Record {
    uint8_t type = 0;
    std::string_view payload;
  };
  // Buffers `records` as consecutive LSNs under one acquisition of the mutex (a pipelined run
  // of writes) and returns the last one's LSN (last_lsn() when `records` is empty). All or
  // none: a payload over 1 MiB refuses the whole batch before anything is buffered.
  Result<uint64_t> AppendBatch(std::span<const Record> records);
  // Returns once `lsn` is as durable as the mode promises: in `always`, written and fsynced;
  // otherwise at once (unless the WAL has failed).
  Status Commit(uint64_t lsn);
  // Writes everything appended so far, and fsyncs it with sync = true.
  Status Flush(bool sync);
  // Flushes with fsync, stops the background thread, closes the file. Idempotent.
  Status Close();

  uint64_t last_lsn() const;     // the newest LSN handed out
  uint64_t durable_lsn() const;  // the newest LSN written and fsynced
  uint64_t written_lsn() const;  // the newest LSN written to the file (in the OS, maybe not synced)
  Status health() const;         // OK, or the sticky failure

 private:
  WalWriter(Env* env, std::string dir, const WalWriterOptions& options, uint64_t next_lsn);
  Status OpenSegment(uint64_t segment_no, uint64_t first_lsn);  // only the flush leader
  // REQUIRES: lock held. Becomes the flush leader (waiting for a running one), writes the
  // buffer, optionally fsyncs. Returns with the lock held.
  Status FlushLocked(std::unique_lock<std::mutex>& lock, bool sync);
  void SyncLoop();

  Env* const env_;
  const std::string dir_;
  const WalWriterOptions options_;
  std::unique_ptr<WritableFile> file_;  // touched only by the flush leader
  uint64_t segment_no_ = 0;             // likewise

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string buffer_;
  std::string spare_;          // the other buffer: flushes alternate the two, so capacity is reused
  uint64_t next_lsn_;          // LSN of the next Append
  uint64_t buffer_first_lsn_;  // LSN of the first record in buffer_
  uint64_t written_lsn_;       // newest LSN in the file
  uint64_t synced_lsn_;        // newest LSN fsynced
  bool flushing_ = false;      // a leader is writing
  bool closed_ = false;
  bool stop_ = false;
  Status failed_;
  std::thread syncer_;
  // Mirrors of synced_lsn_ and "a flush finished" that committers read without the mutex:
  // a committer whose record a flush covered wakes once and returns, instead of queueing on mu_.
  std::atomic<uint64_t> synced_atomic_{0};
  std::atomic<uint64_t> flush_generation_{0};
  std::atomic<bool> failed_flag_{false};  // set once with failed_; read without the mutex
};

}  // namespace relgraph
