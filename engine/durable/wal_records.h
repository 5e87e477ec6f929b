// The engine's WAL record types and payloads (docs/wal-format.md, "Record types"), as
// written since WAL version 2:
//   1 follow       follower:u64 followee:u64 ts_ms:i64 flags:u8   (bit 0: became friends; bit 1:
//                                                      first fan here of another shard's user)
//   2 unfollow     follower:u64 followee:u64 ts_ms:i64
//   3 remove_user  user:u64 ts_ms:i64
//   4 publish      author:u64 post:u64 ts_ms:i64 kind:u8 evicted:u64
//   5 delete_post  author:u64 post:u64 ts_ms:i64
//   6 mute         user:u64 other:u64 ts_ms:i64       7 unmute  (the same)
//   8 hide         author:u64 from:u64 ts_ms:i64      9 unhide  (the same)
//  10 cursor       lsn:u64 ts_ms:i64 name:u8[1..64]    (an ACK; lsn 0 removes the cursor)
//  11 epoch        epoch:u64 id:u64 ts_ms:i64          (a promotion: the epoch starts here)
//  12 block        blocker:u64 blocked:u64 ts_ms:i64 flags:u8   (kBlock* bits: what it removed)
//  13 unblock      blocker:u64 blocked:u64 ts_ms:i64
//  14 set_private  user:u64 ts_ms:i64 private:u8       (0: public again; pending requests
//                                                      are approved at ts_ms)
//  15 request      requester:u64 target:u64 ts_ms:i64  (a follow of a private account)
//  16 approve      target:u64 requester:u64 ts_ms:i64 flags:u8   (the edge's time; bit 0:
//                                                      became friends)
//  17 reject       target:u64 requester:u64 ts_ms:i64
//  18 withdraw     requester:u64 target:u64 ts_ms:i64
//  19 remote       origin:u32 origin_lsn:u64 type:u8 payload   (a change another cluster shard
//                                                      decided as its LSN origin_lsn: the
//                                                      inner record, applied here by its
//                                                      ensure form; docs/cluster.md)
//  20 posts        author:u64 count:u32 (post:u64 ts_ms:i64 kind:u8){count}   (only inside a
//                                                      remote record: the author's retained
//                                                      posts, sent back on a first fan)
//  22 moved        shard:u32 type:u8 payload      (a bucket move's state record: the inner record,
//                                                      of a type IsMovable allows, brought here
//                                                      from `shard` or dropped here for it,
//                                                      applied by its ensure form; never an
//                                                      event, never sent; docs/cluster.md)
//  23 cursor_start ts_ms:i64 name:u8[1..64]            (an ACK of LSN 0: the cursor stands
//                                                      before LSN 1, where it resumes)
// Types 12 to 18 (blocks, private accounts, requests) came with WAL version 2's third
// revision and have one length each; a build that does not know them stops at them.
// Version 1 wrote the same fields without the trailing ts_ms and flags (publish unchanged);
// every type's two lengths differ, so the decoder tells them apart by length, and a
// version-1 record decodes with ts 0 (unknown) and no flags. Replay uses none of the added
// fields: they are for the change stream (engine/stream/).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/feed/feed_types.h"
#include "engine/graph/graph.h"
#include "storage/status.h"
#include "storage/wal/record_table.h"

namespace relgraph {

// An encoded payload, held inline: logging a follow or a publish allocates nothing.
struct WalPayload {
  char bytes[16 + 64];
  uint8_t size = 0;
  std::string_view view() const { return {bytes, size}; }
};

inline constexpr uint8_t kFollowBecameFriends = 1;  // follow and approve flags bit 0
// follow flags bit 1: the followee is a user of another cluster shard and this follow made
// it its first fan here. The copies of its posts held here start over (they are cleared),
// and its shard, applying the follow, sends them back whole (docs/cluster.md, "Feeds").
inline constexpr uint8_t kFollowFirstRemoteFan = 2;
// follow flags bit 2, with bit 1: the followee's posts here are its own, not copies (its
// bucket is being handed over from this shard and may not be exported yet), so nothing is
// cleared; the back-fill replaces them all the same.
inline constexpr uint8_t kFollowOwnPostsKept = 4;
// approve flags bit 1: the requester's shard approved (a cluster shard applying its target's
// switch to public); without it the target approved (docs/cluster.md, "Blocks, private
// accounts and requests").
inline constexpr uint8_t kApproveByRequester = 2;
// block flags: what the block removed.
inline constexpr uint8_t kBlockUnfollowed = 1;      // blocker -> blocked
inline constexpr uint8_t kBlockLostFollower = 2;    // blocked -> blocker
inline constexpr uint8_t kBlockDroppedRequest = 4;  // a pending request either way
// The block record's flags for what a block removed (the wire's BLOCK reply and block event
// use the same bits).
inline uint8_t BlockRecordFlags(const BlockOutcome& o) {
  return (o.unfollowed ? kBlockUnfollowed : 0) | (o.lost_follower ? kBlockLostFollower : 0) |
         (o.requests_removed ? kBlockDroppedRequest : 0);
}

WalPayload EncodeFollowRecord(UserId follower, UserId followee, TimestampMs ts, uint8_t flags);
WalPayload EncodeRemoveUserRecord(UserId user, TimestampMs ts);
WalPayload EncodePostsWantedRecord(UserId author, TimestampMs ts);
WalPayload EncodePublishRecord(UserId author, PostId post, TimestampMs ts, uint8_t kind,
                               PostId evicted);
// unfollow, delete_post, mute, unmute, hide, unhide: two ids and the time of the change.
WalPayload EncodePairRecord(uint64_t a, uint64_t b, TimestampMs ts);
// REQUIRES: CursorTable::ValidateName(name) is OK. An ACK of lsn >= 1, or the removal of the
// cursor (lsn 0), as a type 10 record.
WalPayload EncodeCursorRecord(std::string_view name, uint64_t lsn, TimestampMs ts);
// REQUIRES: CursorTable::ValidateName(name) is OK. An ACK of LSN 0, as a type 23 record.
WalPayload EncodeCursorStartRecord(std::string_view name, TimestampMs ts);
WalPayload EncodeEpochRecord(uint64_t epoch, uint64_t id, TimestampMs ts);
// block and approve: two ids, the time, flags (the follow record's layout).
WalPayload EncodeBlockRecord(UserId blocker, UserId blocked, TimestampMs ts, uint8_t flags);
WalPayload EncodeSetPrivateRecord(UserId user, TimestampMs ts, bool on);
// A change shard `origin` logged as `origin_lsn` with `type` and `payload`, as this shard
// applies it. REQUIRES: IsRemoteApplicable(type), payload.size() <= MaxRemotePayload(type).
inline constexpr size_t kRemoteHeaderBytes = 4 + 8 + 1;
inline constexpr size_t kMaxRemoteInnerPayload = sizeof(WalPayload::bytes) - kRemoteHeaderBytes;
std::string EncodeRemoteRecord(uint32_t origin, uint64_t origin_lsn, WalRecordType type,
                               std::string_view payload);
// A posts record (type 20) carries at most this many posts: one WAL record is at most 1 MiB.
// A cluster's posts_per_author may not exceed it (relgraphd checks).
inline constexpr size_t kPostsRecordEntryBytes = 8 + 8 + 1;
inline constexpr uint32_t kMaxPostsPerRecord = 60'000;
// `posts` oldest first.
std::string EncodePostsRecord(UserId author, std::span<const FeedEntry> posts);
// The largest inner payload of `type` a remote record carries.
size_t MaxRemotePayload(WalRecordType type);
// Blocks, private marks and requests (types 12-18): graph state, applied in order.
inline bool IsAccessRecord(WalRecordType type) {
  return RowOf(type).is(kRecordAccess);
}
// The record types one shard sends another (docs/cluster.md, "What crosses shards").
inline bool IsRemoteApplicable(WalRecordType type) {
  return RowOf(type).is(kRecordRemote);
}
// The record types a moved record carries: the state a bucket move brings (follow, block,
// request, set_private, posts, mute, hide) and what it drops (unfollow, unblock, withdraw,
// unmute, unhide, and posts with none).
inline bool IsMovable(WalRecordType type) {
  return RowOf(type).is(kRecordMovable);
}
// A moved record (type 22): `type`'s record with `payload`, as shard `shard` held it (on
// the importing shard) or as this shard drops it for `shard` (on the exporting one).
// REQUIRES: IsMovable(type); payload.size() <= MaxRemotePayload(type).
inline constexpr size_t kMovedHeaderBytes = 4 + 1;
std::string EncodeMovedRecord(uint32_t shard, WalRecordType type, std::string_view payload);

// A decoded record: the fields its type uses (docs/wal-format.md), the rest zero.
struct WalOp {
  WalRecordType type;
  uint64_t a = 0, b = 0;  // the two ids (user/author/follower, then the other one or post)
  TimestampMs ts = 0;     // the change's time (0 in a version-1 record that has none)
  uint8_t flags = 0;      // follow, approve: kFollowBecameFriends; block: kBlock*; set_private: 1
                          // when the account became private
  uint8_t kind = 0;
  PostId evicted = 0;
  std::string_view name;  // cursor, cursor_start: the name (a = its LSN, 0 for cursor_start);
                          // points into the decoded payload
  // posts (type 20): a = the author, b = the count; the entries, as encoded, point into the
  // decoded payload (PostsOf decodes them).
  std::string_view posts;
  std::vector<FeedEntry> PostsOf() const;
  // epoch: a = the epoch's number, b = its id
  // remote (type 19): every field above is the inner record's (type included); these say
  // where it came from. origin_lsn is never 0 for a remote record.
  uint32_t origin = 0;
  uint64_t origin_lsn = 0;
  bool moved = false;  // inside a moved record (type 22): origin is the other shard
  bool is_remote() const { return origin_lsn != 0; }
  // Applied by its ensure form, whatever this shard holds: a remote or a moved record's.
  bool by_ensure_form() const { return is_remote() || moved; }
  bool is_graph_op() const { return RowOf(type).is(kRecordGraphEdges); }
  bool is_feed_op() const { return RowOf(type).is(kRecordFeed); }  // remove_user: both
  // A record of this shard's that restarts the copies of a remote author's posts here: a
  // follow with kFollowFirstRemoteFan and without kFollowOwnPostsKept (the followee's), or a
  // posts-wanted record (a's). The feed clears them, in order with the feed's records.
  bool clears_posts() const {
    if (by_ensure_form()) return false;
    return type == WalRecordType::kPostsWanted ||
           (type == WalRecordType::kFollow && (flags & kFollowFirstRemoteFan) != 0 &&
            (flags & kFollowOwnPostsKept) == 0);
  }
  UserId cleared_author() const { return type == WalRecordType::kFollow ? b : a; }
  bool is_cursor_op() const {
    return type == WalRecordType::kCursor || type == WalRecordType::kCursorStart;
  }
  // A type 10 record of LSN 0 removes its cursor; every other cursor op sets it to a.
  bool removes_cursor() const { return type == WalRecordType::kCursor && a == 0; }
  bool is_epoch_op() const { return type == WalRecordType::kEpoch; }
  bool is_access_op() const { return IsAccessRecord(type); }
  // REQUIRES: is_graph_op(). A remote or moved op replays by its ensure form
  // (by_ensure_form()): it was applied so, whatever this shard held.
  Graph::ReplayOp graph_op() const;
};

// A record as a node logged it: its LSN there, its type and payload (a primary's, applied by a
// replica; another shard's, applied by ApplyRemote).
struct LoggedRecord {
  uint64_t lsn = 0;
  uint8_t type = 0;
  std::string_view payload;
};

// kCorruption for an unknown type or a payload of neither version's size.
Result<WalOp> DecodeWalRecord(uint8_t type, std::string_view payload);

// Whose shards must apply a record a cluster shard logged (docs/cluster.md): every other
// shard (remove_user, set_private); the shards holding fans of `users[0]`, the author
// (publish, delete_post); or the shards of `users[0..count)` (a pair's other user, a
// posts-wanted record's author). The sender leaves itself out. REQUIRES:
// IsRemoteApplicable(op.type).
struct RemoteRecipients {
  enum Kind : uint8_t { kEveryShard, kFansOf, kUsers } kind = kUsers;
  UserId users[2] = {0, 0};
  uint8_t count = 0;
};
RemoteRecipients RecipientsOf(const WalOp& op);

// "follow 42 -> 7 at 1700000000000 (friends)", for wal-dump; never fails (says what is wrong
// instead).
std::string DescribeWalRecord(uint8_t type, std::string_view payload);

}  // namespace relgraph
