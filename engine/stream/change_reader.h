// ChangeReader: reads the change stream (ChangeEvents, in LSN order) from a live data
// directory while the engine writes to it. Db::OpenChanges makes one.
//
// Why this design: the WAL is the stream. A reader is a WalTail (storage/wal/wal_tail.h) plus
// a question it asks the writer's side before each read: which LSN may be returned (the
// visible LSN)? Db answers with the newest fsynced LSN under `always` and the newest LSN written
// to the file under `everysec` and `none`, so a reader never returns a change that a crash
// covered by the mode's promise could still take back, nor one whose write was refused. Each
// record is decoded once and filtered by the reader's kind mask; records of other kinds still
// move the reader on. Nothing is copied or kept per reader but one segment's read buffer.
//
// Thread-safety: one thread at a time per reader; any number of readers per Db. The
// visible-LSN function must be safe to call from the reader's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/stream/change_event.h"
#include "storage/env/env.h"
#include "storage/wal/wal_tail.h"

namespace relgraph {

class ChangeReader {
 public:
  // Returns the newest LSN a reader may return now. `want` is the LSN the reader waits for:
  // when it is appended but not yet visible, the function may make it visible sooner (Db
  // writes its WAL buffer out, at most once a millisecond).
  using VisibleLsnFn = std::function<uint64_t(uint64_t want)>;

  // A reader whose first record is `from_lsn` (>= 1). Errors: WalTail::Open's (kLsnExpired
  // naming the oldest kept LSN, kNotFound without WAL) and kInvalidArgument for a bad mask.
  static Result<std::unique_ptr<ChangeReader>> Open(Env* env, const std::string& dir,
                                                    uint64_t from_lsn, ChangeKindMask kinds,
                                                    VisibleLsnFn visible,
                                                    uint64_t* oldest_lsn = nullptr);

  // Reads at most `max_records` records (visible ones only) and calls fn for each that is of
  // a wanted kind. Returns the number of records read, so 0 means "caught up": nothing
  // visible is left. Errors: kCorruption (damage, naming file, offset and LSN), kLsnExpired
  // (the next segment was removed before the reader got to it). A reader that failed stays
  // failed.
  Result<size_t> Read(size_t max_records, const std::function<void(const ChangeEvent&)>& fn);

  // The same visible records raw, every type included (cursor and epoch records too): what
  // a replica copies into its own WAL. A non-OK status from fn stops the read, and a reader
  // that failed stays failed.
  Result<size_t> ReadRecords(size_t max_records,
                             const std::function<Status(const WalRecordView&)>& fn);

  // The LSN of the next record this reader will read (events of other kinds included).
  uint64_t next_lsn() const { return tail_->next_lsn(); }
  ChangeKindMask kinds() const { return kinds_; }

 private:
  ChangeReader(std::unique_ptr<WalTail> tail, ChangeKindMask kinds, VisibleLsnFn visible)
      : tail_(std::move(tail)), kinds_(kinds), visible_(std::move(visible)) {}

  std::unique_ptr<WalTail> tail_;
  const ChangeKindMask kinds_;
  VisibleLsnFn visible_;
  Status failed_;
};

// The event a WAL record holds; kCorruption for a record no engine writes.
Result<ChangeEvent> DecodeChangeEvent(uint64_t lsn, uint8_t type, std::string_view payload);

}  // namespace relgraph
