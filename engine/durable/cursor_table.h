// CursorTable: named consumers' acknowledged positions in the change stream (ACK name lsn),
// kept durable like the rest of the state: each ACK is a WAL record (type 10, cursor; type 23,
// cursor_start, for an ACK of LSN 0), and snapshots hold the table (feed-block tag 4).
// docs/change-stream.md, "Named cursors".
//
// Why here: the table is replayed by recovery and written by snapshots beside the feed, so it
// lives with them in engine/durable; the stream reads positions through Db.
//
// Thread-safety: not thread-safe; Db guards it with its lock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "engine/durable/wal_records.h"
#include "engine/types.h"
#include "storage/status.h"

namespace relgraph {

inline constexpr size_t kMaxCursorName = 64;
inline constexpr size_t kMaxCursors = 10'000;

struct CursorState {
  uint64_t acked_lsn = 0;  // every change up to here was handled by the consumer
  TimestampMs acked_ms = 0;
};

class CursorTable {
 public:
  // OK for 1..64 bytes of [A-Za-z0-9._-]; else kInvalidArgument naming the rule.
  static Status ValidateName(std::string_view name);

  // Sets the cursor to `lsn` (an ACK), creating it when new. lsn 0 is a position too: the
  // cursor resumes at LSN 1.
  void Set(std::string_view name, uint64_t lsn, TimestampMs ts);
  void Remove(std::string_view name);
  // A cursor WAL record (type 10 or 23, docs/wal-format.md) applied by recovery or
  // a replica. REQUIRES: op.is_cursor_op().
  void Apply(const WalOp& op);
  const CursorState* Find(std::string_view name) const;
  size_t size() const { return cursors_.size(); }
  // Name order.
  void ForEach(const std::function<void(const std::string&, const CursorState&)>& fn) const;
  // The smallest resume LSN (acked + 1) among cursors acked at or after `since_ms` (0: none).
  uint64_t OldestResumeLsnSince(TimestampMs since_ms) const;

 private:
  std::map<std::string, CursorState, std::less<>> cursors_;
};

}  // namespace relgraph
