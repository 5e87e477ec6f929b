// WalTail: reads a live WAL directory forward from an LSN, record by record, while a writer
// appends to it and snapshots' retention deletes old segments. The change stream and
// replicas read through it.
//
// Why this design: the WAL already holds every change, numbered, checksummed and in order;
// reading it back is cheaper and safer than keeping a second copy of the changes. A tail
// keeps one segment open and a read position in it. It reads only what the caller says is
// visible (an LSN the writer has written, or fsynced, depending on what the caller promises),
// so a record still being appended is never returned; reaching the end of what is on disk
// just returns fewer records, and the next Read goes on from there. It moves to the next
// segment once that one exists and starts at the expected LSN. A segment deleted while open
// stays readable (POSIX keeps an open file), so retention never cuts a read short; a tail
// that starts before the oldest segment gets kLsnExpired naming the oldest LSN it could give.
//
// Damage (checksum, length, LSN sequence) stops the tail with kCorruption naming the file,
// the offset and the LSN, as the scan in wal_reader.h does.
//
// Thread-safety: one thread at a time per WalTail; any number of tails may read one
// directory while its single writer appends.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "storage/env/env.h"
#include "storage/wal/wal_reader.h"

namespace relgraph {

// kLsnExpired for a position the WAL no longer holds: "LSN <lsn> is no longer in the WAL<how>;
// the oldest kept is <oldest>", with detail() = oldest (what the protocol sends as `detail`).
Status LsnExpired(uint64_t lsn, uint64_t oldest, std::string_view how = "");

class WalTail {
 public:
  // A tail whose first record will be `from_lsn` (>= 1). kLsnExpired when from_lsn is older
  // than the oldest segment's first LSN (the message and the status's detail() name that LSN,
  // and *oldest_lsn gets it when given); kInvalidArgument when records before from_lsn are not
  // written yet (flush first); kNotFound when the directory has no segment.
  static Result<std::unique_ptr<WalTail>> Open(Env* env, const std::string& dir, uint64_t from_lsn,
                                               uint64_t* oldest_lsn = nullptr);
  ~WalTail();

  // Calls fn for each next record with lsn <= up_to, at most max_records of them; returns how
  // many it delivered (0: nothing visible on disk yet). A non-OK status from fn stops the read
  // and is returned; the record fn refused is delivered again by the next Read.
  Result<size_t> Read(uint64_t up_to, size_t max_records,
                      const std::function<Status(const WalRecordView&)>& fn);

  uint64_t next_lsn() const { return next_lsn_; }

 private:
  WalTail(Env* env, std::string dir, uint64_t from_lsn);
  Status OpenSegment(uint64_t segment_no);
  // Makes at least `n` bytes from pos_ available in buf_ when the file has them; false when
  // it does not (yet).
  Result<bool> Fill(size_t n);
  // At the end of the current segment: moves to the next one when it exists and starts at
  // next_lsn_; false when it does not exist yet.
  Result<bool> NextSegment();
  Status Damage(const std::string& what) const;

  Env* const env_;
  const std::string dir_;
  uint64_t next_lsn_;
  uint64_t segment_no_ = 0;
  std::string path_;
  std::unique_ptr<RandomAccessFile> file_;
  uint64_t pos_ = 0;  // file offset of the next record
  std::string buf_;   // storage; its first buf_len_ bytes are the file's from buf_offset_
  size_t buf_len_ = 0;
  uint64_t buf_offset_ = 0;  // file offset of buf_[0]
};

}  // namespace relgraph
