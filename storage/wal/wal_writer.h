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
// `everysec` also fsyncs once a second.
//
// A failed write or fsync (a full disk, an I/O error) stalls the writer instead of ending it:
// health() reports the failure, and a background thread retries with backoff (10 ms doubling
// to 1 s). A retry first repairs the segment's tail: it cuts the file back to the last byte
// fsynced, so no torn or unfsynced record remains, writes again what had been written since
// (kept in memory, except in `none`, which trusts what the OS took), fsyncs, and then writes
// and fsyncs every record still buffered, the failed batch first, with their LSNs. Nothing is
// dropped: Append goes on buffering while stalled (the engine refuses new writes before
// applying them, by health(), so only writes already under way arrive), `always` committers
// wait until a retry covers their record, and the other modes acknowledge at Append as they
// always do. Close while stalled tries once more; if that fails it cuts the tail back and
// refuses the records still waiting (see Close).
//
// Thread-safety: all methods are thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
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

// What WalWriterOptions::on_event is told: the WAL became unwritable, writable again, or was
// closed while unwritable. `message` is one line for an operator's log.
struct WalEvent {
  enum class Kind { kStalled, kResumed, kClosedStalled };
  Kind kind = Kind::kStalled;
  std::string message;
};

// The fsync latency buckets' upper bounds, in nanoseconds: 10 µs to 10 s.
inline constexpr std::array<uint64_t, 19> kFsyncBoundsNs = {
    10'000,      25'000,      50'000,        100'000,       250'000,       500'000,     1'000'000,
    2'500'000,   5'000'000,   10'000'000,    25'000'000,    50'000'000,    100'000'000, 250'000'000,
    500'000'000, 1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000};

// What a WalWriter did since it was opened (WalWriter::stats(); /metrics, docs/http.md).
struct WalStats {
  uint64_t appends = 0;         // records appended
  uint64_t appended_bytes = 0;  // their encoded bytes
  uint64_t fsyncs = 0;          // fsyncs of segment files that succeeded
  uint64_t fsync_ns = 0;        // their total time
  std::array<uint64_t, kFsyncBoundsNs.size() + 1> fsync_buckets{};  // per bucket, not cumulative
  uint64_t segment_no = 0;      // the segment being written
};

struct WalWriterOptions {
  DurabilityMode mode = DurabilityMode::kEverySec;
  uint64_t segment_bytes = uint64_t{64} << 20;  // start a new segment past this size
  size_t buffer_bytes = size_t{1} << 20;  // none/everysec: written in the background past this
  std::chrono::milliseconds sync_interval{1000};  // everysec
  // After a failed write or fsync, the first retry waits retry_min; each failed one doubles
  // the wait, up to retry_max.
  std::chrono::milliseconds retry_min{10};
  std::chrono::milliseconds retry_max{1000};
  // Called when the WAL stalls, resumes, or is closed stalled; with the writer's mutex held,
  // so it must not call the writer. May be empty.
  std::function<void(const WalEvent&)> on_event;
};

class WalWriter {
 public:
  // Creates segment `segment_no` (which must not exist) whose first record will be next_lsn.
  static Result<std::unique_ptr<WalWriter>> Open(Env* env, const std::string& dir,
                                                 const WalWriterOptions& options,
                                                 uint64_t segment_no, uint64_t next_lsn);
  ~WalWriter();  // Close(), ignoring its status (call Close() to see it)

  // Buffers a record and returns its LSN. Does not wait for I/O except in none/everysec when
  // the buffer is full. Buffers while stalled too (the record is written by the retry that
  // repairs the WAL). kUnavailable once closed; kInvalidArgument for a payload > 1 MiB.
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
  // Returns once `lsn` is as durable as the mode promises: in `always`, written and fsynced
  // (while stalled, that is when a retry has repaired the WAL, however long it takes);
  // otherwise at once. kUnavailable when the WAL was closed before `lsn` was durable.
  Status Commit(uint64_t lsn);
  // Writes everything appended so far, and fsyncs it with sync = true. kUnavailable while
  // stalled (nothing is tried: the retries own the file) or closed.
  Status Flush(bool sync);
  // Tries the repair now, in the calling thread (the background thread tries it with backoff
  // anyway): OK when the WAL is writable again, or was not stalled.
  Status TryRepair();
  // Flushes with fsync, stops the background thread, closes the file. While stalled it tries
  // one repair; if that fails, it cuts the segment back so that no record past the last
  // acknowledged one stays in the file, refuses every Commit still waiting (kUnavailable), and
  // returns OK in `always` (every record it dropped was unacknowledged, since a record is
  // acknowledged there only once fsynced) or kUnavailable naming the LSNs that may be lost in
  // the other modes (which acknowledge at Append). Idempotent: a second call returns the
  // first one's status.
  Status Close();

  uint64_t last_lsn() const;     // the newest LSN handed out
  uint64_t durable_lsn() const;  // the newest LSN written and fsynced
  uint64_t written_lsn() const;  // the newest LSN written to the file (in the OS, maybe not synced)
  // OK, or why the WAL cannot be written now (kIOError naming the segment and the failing
  // call; detail() = errno when known, see IsNoSpace): writes should be refused until OK.
  Status health() const;
  WalStats stats() const;

 private:
  WalWriter(Env* env, std::string dir, const WalWriterOptions& options, uint64_t next_lsn);
  // Only the flush leader. `replace_empty`: a file of that number holding no record (left by
  // a rollover that failed) is started over; otherwise an existing file is an error.
  Status OpenSegment(uint64_t segment_no, uint64_t first_lsn, bool replace_empty);
  // REQUIRES: lock held. Becomes the flush leader (waiting for a running one), writes the
  // buffer, optionally fsyncs. Returns with the lock held. Refused while stalled unless
  // `repairing` (the retry's own flush, after RepairTail). A failure stalls the writer and puts
  // the batch back in front of the buffer.
  Status FlushLocked(std::unique_lock<std::mutex>& lock, bool sync, bool repairing = false);
  // REQUIRES: lock held. One retry: RepairTail, then flush and fsync the buffer. Schedules the
  // next retry when it fails. Returns with the lock held.
  Status RepairLocked(std::unique_lock<std::mutex>& lock);
  // Only the flush leader: cuts the segment back to what is trusted (fsynced; in `none`,
  // written), writes unsynced_ again and fsyncs.
  Status RepairTail();
  // REQUIRES: lock held, stalled, no flush running, the background thread stopped. Close's
  // end when the last repair failed: cuts the tail back and says what was not made durable.
  Status GiveUpLocked();
  // REQUIRES: lock held. Records a failed write or fsync: stalls (telling on_event the first
  // time) or, while stalled, keeps the newest reason.
  void StallLocked(const Status& s);
  Status RefusedLocked() const;  // kUnavailable naming the stall. REQUIRES: lock held
  std::string SegmentPath() const;
  void BackgroundLoop();

  Env* const env_;
  const std::string dir_;
  const WalWriterOptions options_;
  // Touched only by the flush leader (flushing_ set), or by Close once no flush can start.
  std::unique_ptr<WritableFile> file_;
  uint64_t segment_no_ = 0;
  uint64_t synced_bytes_ = 0;   // of file_, fsynced
  uint64_t written_bytes_ = 0;  // of file_, written whole (the rest is a torn write, if any)
  // The bytes between synced_bytes_ and written_bytes_, kept (except in `none`) so a repair
  // can write them again: after a failed fsync the OS may have dropped them.
  std::string unsynced_;

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
  Status close_status_;  // Close's result, returned again by later calls
  // Why the WAL cannot be written (OK: it can), and the retry schedule while it cannot.
  Status stall_;
  std::chrono::steady_clock::time_point stalled_since_;
  std::chrono::steady_clock::time_point retry_at_;
  std::chrono::milliseconds retry_delay_{0};
  uint64_t repair_attempts_ = 0;
  WalStats stats_;  // guarded by mu_; appends computed from next_lsn_ and first_lsn_
  const uint64_t first_lsn_;
  std::thread background_;
  // Mirrors of synced_lsn_ and "a flush finished" that committers read without the mutex:
  // a committer whose record a flush covered wakes once and returns, instead of queueing on mu_.
  std::atomic<uint64_t> synced_atomic_{0};
  std::atomic<uint64_t> flush_generation_{0};
  std::atomic<bool> stalled_flag_{false};  // set with stall_; read without the mutex
};

}  // namespace relgraph
