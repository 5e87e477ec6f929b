// The WAL's record types, one row each (docs/wal-format.md, "Record types"): code, name,
// payload lengths, event fields, and what each room may do with it (flags, recipients).
//
// Why one table: a record is written by the engine's write path and applied in four places
// (recovery, a replica, another cluster shard, a bucket move), read back as a change-stream
// event, and formatted by the client. Each of those asks the same questions of a type (is it
// an event, which shards must apply it, may a move carry it); answering them from one row
// means a new type is declared once. What each place *does* with a type is a handler method
// (engine/durable/record_handler.h), which the compiler makes every handler write.
//
// Header-only constexpr data with no dependencies, so the protocol and the client (which know
// no engine type) read event names and fields from it too.
// Thread-safety: constants.
#pragma once

#include <cstdint>
#include <string_view>

namespace relgraph {

enum class WalRecordType : uint8_t {
  kFollow = 1,
  kUnfollow = 2,
  kRemoveUser = 3,
  kPublish = 4,
  kDeletePost = 5,
  kMute = 6,
  kUnmute = 7,
  kHide = 8,
  kUnhide = 9,
  kCursor = 10,  // an ACK (a named cursor's position)
  kEpoch = 11,   // a promotion: the replication history (engine/durable/epoch_history.h)
  kBlock = 12,
  kUnblock = 13,
  kSetPrivate = 14,
  kRequest = 15,
  kApprove = 16,
  kReject = 17,
  kWithdraw = 18,
  kRemote = 19,  // another shard's change applied here: a wrapper of its inner record
  kPosts = 20,   // only inside a remote or moved record: an author's retained posts
  // A cluster shard's first fan of a user of another shard, made by an approval: the copies
  // of its posts here start over, and its shard sends them back whole.
  kPostsWanted = 21,
  kMoved = 22,  // a bucket move's state record: a wrapper of its inner record
  // An ACK of LSN 0 (a cursor held from LSN 1), which type 10 cannot say: its LSN 0 removes.
  kCursorStart = 23,
};
inline constexpr uint8_t kMaxWalRecordType = 23;

// What a type is (RecordRow::flags).
enum RecordFlag : uint16_t {
  kRecordEvent = 1 << 0,       // a change-stream event; its kind on the wire is its code
  kRecordGraphEdges = 1 << 1,  // replayed by Graph::ApplyBatch (follow, unfollow, remove_user)
  kRecordFeed = 1 << 2,        // changes the feed's state
  kRecordAccess = 1 << 3,      // blocks, private marks, requests: graph state, in order
  kRecordRemote = 1 << 4,      // shards exchange it (docs/cluster.md, "What crosses shards")
  kRecordMovable = 1 << 5,     // a bucket move carries it (docs/cluster.md, "Moving a bucket")
  // Decided by the user in its first field (the follower, blocker, requester, hiding author):
  // a bucket move does not import it over what that user's own shard decided.
  kRecordDecidedByFirst = 1 << 6,
  kRecordWrapper = 1 << 7,     // carries another record (remote, moved); decoded as that one
  kRecordInnerOnly = 1 << 8,   // only inside a wrapper (posts)
  kRecordVariable = 1 << 9,    // no fixed payload length: checked by its own decoder
};

// Which shards must apply a record a cluster shard logged (docs/cluster.md): every other
// shard; the shards holding fans of the first field's user; or the shards of the users named.
enum class RecordRecipients : uint8_t {
  kNone,        // never sent
  kEveryShard,  // remove_user, set_private
  kFansOfFirst, // publish, delete_post: the author's fans' shards
  kFirst,       // posts_wanted: the author's shard, which answers with a back-fill
  kSecond,      // follow, unfollow: the followee's; hide, unhide: the reader's; posts
  kBoth,        // blocks and requests: the other user's shard, whichever decided
};

struct RecordRow {
  WalRecordType type;
  std::string_view name;  // as wal-dump, docs/wal-format.md and the opcodes spell it
  uint8_t v1_bytes = 0;   // the payload's length in a version-1 segment (0: none there)
  uint8_t v2_bytes = 0;   // and since version 2 (0: variable)
  uint16_t flags = 0;
  RecordRecipients recipients = RecordRecipients::kNone;
  // An event's JSON names for its two ids (docs/change-stream.md); "" for none.
  std::string_view event_a, event_b;

  constexpr bool is(RecordFlag f) const { return (flags & f) != 0; }
};

namespace record_table_detail {
constexpr uint16_t Ev = kRecordEvent, Edges = kRecordGraphEdges, Feed = kRecordFeed,
                   Access = kRecordAccess, Remote = kRecordRemote, Move = kRecordMovable,
                   First = kRecordDecidedByFirst, Wrapper = kRecordWrapper,
                   InnerOnly = kRecordInnerOnly, Variable = kRecordVariable;
using T = WalRecordType;
using P = RecordRecipients;
// clang-format off
inline constexpr RecordRow kTable[kMaxWalRecordType + 1] = {
  {T{0}, ""},  // no type
  // type            name           v1  v2  flags                                   recipients     event fields
  {T::kFollow,      "follow",       24, 25, Ev | Edges | Remote | Move | First,     P::kSecond,     "follower", "followee"},
  {T::kUnfollow,    "unfollow",     16, 24, Ev | Edges | Remote | Move,             P::kSecond,     "follower", "followee"},
  {T::kRemoveUser,  "remove_user",   8, 16, Ev | Edges | Feed | Remote,             P::kEveryShard, "user",     ""},
  {T::kPublish,     "publish",      33, 33, Ev | Feed | Remote,                     P::kFansOfFirst,"author",   "post"},
  {T::kDeletePost,  "delete_post",  16, 24, Ev | Feed | Remote,                     P::kFansOfFirst,"author",   "post"},
  {T::kMute,        "mute",         16, 24, Ev | Feed | Move,                       P::kNone,       "user",     "other"},
  {T::kUnmute,      "unmute",       16, 24, Ev | Feed | Move,                       P::kNone,       "user",     "other"},
  {T::kHide,        "hide",         16, 24, Ev | Feed | Remote | Move | First,      P::kSecond,     "author",   "from"},
  {T::kUnhide,      "unhide",       16, 24, Ev | Feed | Remote | Move,              P::kSecond,     "author",   "from"},
  {T::kCursor,      "cursor",        0,  0, Variable,                               P::kNone,       "",         ""},
  {T::kEpoch,       "epoch",        24, 24, 0,                                      P::kNone,       "",         ""},
  {T::kBlock,       "block",        25, 25, Ev | Access | Remote | Move | First,    P::kBoth,       "user",     "blocked"},
  {T::kUnblock,     "unblock",      24, 24, Ev | Access | Remote | Move,            P::kBoth,       "user",     "blocked"},
  {T::kSetPrivate,  "set_private",  17, 17, Ev | Access | Remote | Move,            P::kEveryShard, "user",     ""},
  {T::kRequest,     "request",      24, 24, Ev | Access | Remote | Move | First,    P::kBoth,       "user",     "target"},
  {T::kApprove,     "approve",      25, 25, Ev | Access | Remote,                   P::kBoth,       "user",     "requester"},
  {T::kReject,      "reject",       24, 24, Ev | Access | Remote,                   P::kBoth,       "user",     "requester"},
  {T::kWithdraw,    "withdraw",     24, 24, Ev | Access | Remote | Move,            P::kBoth,       "user",     "target"},
  {T::kRemote,      "remote",        0,  0, Wrapper | Variable,                     P::kNone,       "",         ""},
  {T::kPosts,       "posts",         0,  0, Feed | Remote | Move | InnerOnly | Variable, P::kSecond, "",        ""},
  {T::kPostsWanted, "posts_wanted", 16, 16, Remote,                                 P::kFirst,      "",         ""},
  {T::kMoved,       "moved",         0,  0, Wrapper | Variable,                     P::kNone,       "",         ""},
  {T::kCursorStart, "cursor_start",  0,  0, Variable,                               P::kNone,       "",         ""},
};
// clang-format on
}  // namespace record_table_detail

// Indexed by code; row 0 is no type.
inline constexpr const auto& kRecordTable = record_table_detail::kTable;

constexpr bool IsWalRecordType(uint8_t code) { return code >= 1 && code <= kMaxWalRecordType; }
// REQUIRES: IsWalRecordType(static_cast<uint8_t>(type)).
constexpr const RecordRow& RowOf(WalRecordType type) {
  return kRecordTable[static_cast<uint8_t>(type)];
}
// Whether `code` is a type with flag `f` (false for an unknown code).
constexpr bool RecordHas(uint8_t code, RecordFlag f) {
  return IsWalRecordType(code) && kRecordTable[code].is(f);
}

// Every row sits at its own code, and the flags agree with each other.
constexpr bool RecordTableIsConsistent() {
  for (uint8_t k = 1; k <= kMaxWalRecordType; ++k) {
    const RecordRow& r = kRecordTable[k];
    if (static_cast<uint8_t>(r.type) != k || r.name.empty()) return false;
    if (r.is(kRecordVariable) != (r.v2_bytes == 0)) return false;
    if (r.is(kRecordEvent) && r.event_a.empty()) return false;
    if (r.is(kRecordRemote) != (r.recipients != RecordRecipients::kNone)) return false;
    if (r.is(kRecordWrapper) && (r.is(kRecordRemote) || r.is(kRecordMovable))) return false;
  }
  return true;
}
static_assert(RecordTableIsConsistent(), "kRecordTable: a row out of place or inconsistent");

// The change stream's kinds: bit k set for each event type k.
constexpr uint32_t EventKindMask() {
  uint32_t mask = 0;
  for (uint8_t k = 1; k <= kMaxWalRecordType; ++k) {
    if (kRecordTable[k].is(kRecordEvent)) mask |= uint32_t{1} << k;
  }
  return mask;
}

}  // namespace relgraph
