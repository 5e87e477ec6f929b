// ChangeEvent: one acknowledged mutation as the change stream delivers it (docs/change-stream.md).
//
// An event is the WAL record of the change, decoded: the record already holds the decided
// outcome (a follow's time and whether it made friends, a publish's time and the post it
// evicted), so the stream needs no second copy of anything. Only changes are logged, so the
// stream has no no-ops: a repeated follow, an unfollow of a missing edge, a publish older than
// the author's newest K posts and a mute already in place are absent.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/durable/wal_records.h"
#include "engine/feed/feed_types.h"
#include "engine/types.h"
#include "storage/status.h"

namespace relgraph {

// The kinds are the WAL's record types (docs/wal-format.md): an event is its record.
// Kinds 1..9 and 12..18; 10 and 11 (cursor, epoch) are records but never events.
using ChangeKind = WalRecordType;
inline constexpr uint8_t kMaxChangeKind = 18;

// A set of kinds: bit k is kind k. Bits 0, 10, 11 and 19..31 are never set (19, a remote
// record, is another shard's change: never an event here).
using ChangeKindMask = uint32_t;
inline constexpr ChangeKindMask kAllChangeKinds = EventKindMask();  // the table's events
static_assert(kAllChangeKinds == 0x7f3fe, "the event kinds on the wire never change");
constexpr ChangeKindMask MaskOf(ChangeKind k) {
  return ChangeKindMask{1} << static_cast<uint8_t>(k);
}

struct ChangeEvent {
  uint64_t lsn = 0;
  ChangeKind kind = ChangeKind::kFollow;
  // When the change happened: the follow time, the post's time, else the engine clock's time
  // of the change. 0 for changes logged by a version-1 WAL, which did not record it.
  TimestampMs ts = 0;
  // follow, unfollow: follower, followee.   remove_user: user, 0.   publish, delete_post:
  // author, post.   mute, unmute: user, other.   hide, unhide: author, from.   block,
  // unblock: blocker, blocked.   set_private: user, 0.   request, withdraw: requester,
  // target.   approve, reject: target, requester.
  uint64_t a = 0, b = 0;
  // follow: the followee already followed the follower; approve: the target already followed
  // the requester (the approval made them friends).
  bool became_friends = false;
  uint8_t post_kind = 0;  // publish: the post's kind
  // block: what it removed (kBlockUnfollowed, kBlockLostFollower, kBlockDroppedRequest);
  // set_private: 1 when the account became private, 0 when public (every request pending
  // then was approved at ts, as the approved edges' time).
  uint8_t flags = 0;
  PostId evicted = 0;  // publish: the post it pushed out of the author's newest K (0: none)
};

// "follow", "unfollow", "remove_user", "publish", "delete_post", "mute", "unmute", "hide",
// "unhide", "block", "unblock", "set_private", "request", "approve", "reject", "withdraw"
// (as the protocol's opcodes spell them).
std::string_view ChangeKindName(ChangeKind kind);
// "follow,publish" -> a mask; "all" or "" -> kAllChangeKinds. kInvalidArgument names an
// unknown kind and lists the known ones.
Result<ChangeKindMask> ParseChangeKinds(std::string_view list);
// kInvalidArgument when the mask has a bit outside kAllChangeKinds, or none set.
Status ValidateChangeKindMask(ChangeKindMask mask);

}  // namespace relgraph
