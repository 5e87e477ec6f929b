// The engine's WAL record types and payloads (docs/wal-format.md, "Record types"):
//   1 follow       follower:u64 followee:u64 ts_ms:i64
//   2 unfollow     follower:u64 followee:u64
//   3 remove_user  user:u64
//   4 publish      author:u64 post:u64 ts_ms:i64 kind:u8 evicted:u64
//   5 delete_post  author:u64 post:u64
//   6 mute         user:u64 other:u64          7 unmute  user:u64 other:u64
//   8 hide         author:u64 from:u64         9 unhide  author:u64 from:u64
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/feed/feed_types.h"
#include "engine/graph/graph.h"
#include "storage/status.h"

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
};

// An encoded payload, held inline: logging a follow or a publish allocates nothing.
struct WalPayload {
  char bytes[40];
  uint8_t size = 0;
  std::string_view view() const { return {bytes, size}; }
};

WalPayload EncodeFollowRecord(UserId follower, UserId followee, TimestampMs ts);
WalPayload EncodeUnfollowRecord(UserId follower, UserId followee);
WalPayload EncodeRemoveUserRecord(UserId user);
WalPayload EncodePublishRecord(UserId author, PostId post, TimestampMs ts, uint8_t kind,
                               PostId evicted);
// delete_post, mute, unmute, hide, unhide: two ids.
WalPayload EncodePairRecord(uint64_t a, uint64_t b);

// A decoded record: the fields its type uses (docs/wal-format.md), the rest zero.
struct WalOp {
  WalRecordType type;
  uint64_t a = 0, b = 0;  // the two ids (user/author/follower, then the other one or post)
  TimestampMs ts = 0;
  uint8_t kind = 0;
  PostId evicted = 0;
  bool is_graph_op() const { return static_cast<uint8_t>(type) <= 3; }
  bool is_feed_op() const { return static_cast<uint8_t>(type) >= 3; }  // remove_user: both
  Graph::ReplayOp graph_op() const;                                    // REQUIRES: is_graph_op()
};

// kCorruption for an unknown type or a payload of the wrong size.
Result<WalOp> DecodeWalRecord(uint8_t type, std::string_view payload);

// "follow 42 -> 7 at 1700000000000", for wal-dump; never fails (says what is wrong instead).
std::string DescribeWalRecord(uint8_t type, std::string_view payload);

}  // namespace relgraph
