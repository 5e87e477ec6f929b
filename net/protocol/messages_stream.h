// The change stream's messages (docs/change-stream.md, docs/protocol.md 0x30-0x36):
// SUBSCRIBE and its EVENTS, named cursors, the snapshot transfer. Field order is wire order.
//
// Thread-safety: plain data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "net/protocol/messages_common.h"
#include "storage/wal/record_table.h"

namespace relgraph::net {

// Where a subscription starts.
enum class SubscribeFrom : uint8_t {
  kLsn = 0,     // at `lsn` (>= 1)
  kNow = 1,     // at the first change after the SUBSCRIBE (lsn must be 0)
  kCursor = 2,  // after the named cursor's acknowledged LSN (name required, lsn must be 0)
};
struct SubscribeReply {
  uint64_t first_lsn = 0;   // the LSN the stream starts at
  uint64_t newest_lsn = 0;  // the newest LSN logged when it started
  RELGRAPH_WIRE_FIELDS(first_lsn, newest_lsn)
};
struct SubscribeRequest {
  static constexpr Opcode kOpcode = Opcode::kSubscribe;
  using Reply = SubscribeReply;
  SubscribeFrom from = SubscribeFrom::kNow;
  uint64_t lsn = 0;
  uint32_t kinds = 0;  // bit k: event kind k (1..9, 12..18); 0: every kind
  std::string name;    // a named cursor, or empty
  RELGRAPH_WIRE_FIELDS(from, lsn, kinds, name)
};

// Event kinds on the wire: the WAL record types (docs/wal-format.md); the values never change.
enum class EventKind : uint8_t {
  kFollow = static_cast<uint8_t>(WalRecordType::kFollow),
  kUnfollow = static_cast<uint8_t>(WalRecordType::kUnfollow),
  kRemoveUser = static_cast<uint8_t>(WalRecordType::kRemoveUser),
  kPublish = static_cast<uint8_t>(WalRecordType::kPublish),
  kDeletePost = static_cast<uint8_t>(WalRecordType::kDeletePost),
  kMute = static_cast<uint8_t>(WalRecordType::kMute),
  kUnmute = static_cast<uint8_t>(WalRecordType::kUnmute),
  kHide = static_cast<uint8_t>(WalRecordType::kHide),
  kUnhide = static_cast<uint8_t>(WalRecordType::kUnhide),
  kBlock = static_cast<uint8_t>(WalRecordType::kBlock),
  kUnblock = static_cast<uint8_t>(WalRecordType::kUnblock),
  kSetPrivate = static_cast<uint8_t>(WalRecordType::kSetPrivate),
  kRequest = static_cast<uint8_t>(WalRecordType::kRequest),  // a follow of a private account
  kApprove = static_cast<uint8_t>(WalRecordType::kApprove),
  kReject = static_cast<uint8_t>(WalRecordType::kReject),
  kWithdraw = static_cast<uint8_t>(WalRecordType::kWithdraw),
};
constexpr bool EventKindsMatchRecords() {
  for (EventKind k : {EventKind::kFollow, EventKind::kUnfollow, EventKind::kRemoveUser,
                      EventKind::kPublish, EventKind::kDeletePost, EventKind::kMute,
                      EventKind::kUnmute, EventKind::kHide, EventKind::kUnhide, EventKind::kBlock,
                      EventKind::kUnblock, EventKind::kSetPrivate, EventKind::kRequest,
                      EventKind::kApprove, EventKind::kReject, EventKind::kWithdraw}) {
    if (!RecordHas(static_cast<uint8_t>(k), kRecordEvent)) return false;
  }
  return true;
}
static_assert(EventKindsMatchRecords(), "an EventKind that is no event record type");
// The record table's event types (storage/wal/record_table.h) are the kinds, by code.
inline constexpr uint32_t kAllEventKinds = EventKindMask();
static_assert(kAllEventKinds == 0x7f3fe, "the event kinds on the wire never change");
// "follow", ... as the opcodes spell them ("request" for kRequest); "unknown" else.
std::string_view EventKindName(EventKind kind);

struct WireEvent {
  uint64_t lsn = 0;
  EventKind kind = EventKind::kFollow;
  int64_t ts = 0;
  uint64_t a = 0;        // follower, user, author, blocker, requester (request, withdraw) or
                         // target (approve, reject)
  uint64_t b = 0;        // followee, other, post, from, blocked, target or requester (0 for
                         // remove_user and set_private)
  bool friends = false;  // follow, approve: it made the two friends
  // publish: the post's kind; block: what it removed (bit 0: a -> b, bit 1: b -> a, bit 2: a
  // request); set_private: 1 private, 0 public (pending requests were approved at ts).
  uint8_t detail = 0;
  uint64_t evicted = 0;  // publish: the post it pushed out of the author's newest K, or 0
  RELGRAPH_WIRE_FIELDS(lsn, kind, ts, a, b, friends, detail, evicted)
};
inline constexpr size_t kWireEventBytes = 43;
// An EVENTS frame's body: events in LSN order, and the LSN the stream goes on from.
struct EventsBody {
  uint64_t next_lsn = 0;
  std::vector<WireEvent> events;
  RELGRAPH_WIRE_FIELDS(next_lsn, events)
};

// Named cursors (docs/change-stream.md, "Named cursors").
struct AckRequest {
  static constexpr Opcode kOpcode = Opcode::kAck;
  using Reply = Empty;
  std::string name;
  uint64_t lsn = 0;  // every change up to here is handled; the cursor resumes at lsn + 1
  RELGRAPH_WIRE_FIELDS(name, lsn)
};
struct CursorEntry {
  std::string name;
  uint64_t acked_lsn = 0;
  int64_t acked_ms = 0;
  bool expired = false;  // the WAL no longer holds acked_lsn + 1
  RELGRAPH_WIRE_FIELDS(name, acked_lsn, acked_ms, expired)
};
struct CursorsReply {
  std::vector<CursorEntry> cursors;  // name order
  RELGRAPH_WIRE_FIELDS(cursors)
};
struct CursorsRequest : Empty {
  static constexpr Opcode kOpcode = Opcode::kCursors;
  using Reply = CursorsReply;
};
struct DeleteCursorRequest {
  static constexpr Opcode kOpcode = Opcode::kDeleteCursor;
  using Reply = Empty;
  std::string name;
  RELGRAPH_WIRE_FIELDS(name)
};

// FETCH_SNAPSHOT: the newest snapshot file, pushed in SNAPSHOT_DATA frames after the reply.
struct FetchSnapshotReply {
  uint64_t lsn = 0;         // the state it holds is the state at this LSN
  uint64_t file_bytes = 0;  // the whole file; the SNAPSHOT_DATA frames add up to it
  RELGRAPH_WIRE_FIELDS(lsn, file_bytes)
};
struct FetchSnapshotRequest : Empty {
  static constexpr Opcode kOpcode = Opcode::kFetchSnapshot;
  using Reply = FetchSnapshotReply;
};
// A SNAPSHOT_DATA body is `offset:u64` followed by the file's bytes from there to the end of
// the frame (not a length-prefixed field: a chunk may be close to max_frame).
inline constexpr size_t kSnapshotDataHeaderBytes = 8;

}  // namespace relgraph::net
