// Reading the WAL: every segment of a directory, in order, record by record.
//
// A record cut off at the end of the newest segment is a clean end (the writer died while
// appending): the scan reports it and, when asked, truncates the segment there. Any other
// damage (checksum, length, header, LSN sequence, a torn record in an older segment) stops the
// scan with kCorruption naming the file, the offset, the LSN and `relgraph-admin repair`.
// Nothing is skipped silently.
//
// Thread-safety: a scan may run concurrently with other scans, not with a writer of the same
// directory.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/env/env.h"
#include "storage/wal/wal_format.h"

namespace relgraph {

struct WalRecordView {
  uint64_t lsn = 0;
  uint8_t type = 0;
  std::string_view payload;  // valid during the callback only
};

// Where a scan found damage (filled when the scan fails with kCorruption).
struct WalDamage {
  std::string file;
  uint64_t segment_no = 0;
  uint64_t offset = 0;  // the last good record ends here: a repair truncates at this offset
  uint64_t lsn = 0;     // the LSN expected at that offset
  std::string what;
};

struct WalScanOptions {
  uint64_t from_lsn = 1;            // deliver records with lsn >= from_lsn (older are checked)
  bool truncate_torn_tail = false;  // cut a torn tail off the newest segment, in place
  WalDamage* damage = nullptr;      // optional: where the damage is, on kCorruption
};

struct WalScanResult {
  uint64_t first_lsn = 0;        // first LSN the oldest segment holds (0: no segment)
  uint64_t last_lsn = 0;         // LSN of the last good record (first_lsn - 1 when none)
  uint64_t last_segment_no = 0;  // 0: no segment
  uint64_t segments = 0;
  uint64_t records = 0;     // records delivered to the callback
  uint64_t torn_bytes = 0;  // bytes of a torn tail (dropped when truncate_torn_tail)
  std::string torn_file;    // the segment that had it
};

// The segment numbers in `dir`, ascending.
Result<std::vector<uint64_t>> ListWalSegments(Env* env, const std::string& dir);

// The header of segment `segment_no` in `dir` (kCorruption when it is not a valid header).
Result<WalSegmentHeader> ReadWalSegmentHeader(Env* env, const std::string& dir,
                                              uint64_t segment_no);

// Scans the WAL in `dir`, calling fn for each record with lsn >= options.from_lsn; a non-OK
// status from fn stops the scan and is returned.
Result<WalScanResult> ScanWal(Env* env, const std::string& dir, const WalScanOptions& options,
                              const std::function<Status(const WalRecordView&)>& fn);

}  // namespace relgraph
