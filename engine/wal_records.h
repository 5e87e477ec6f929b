// The engine's WAL record types and payloads (docs/wal-format.md, "Record types"):
//   1 follow       follower:u64 followee:u64 ts_ms:i64
//   2 unfollow     follower:u64 followee:u64
//   3 remove_user  user:u64
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/graph.h"
#include "storage/status.h"

namespace relgraph {

enum class WalRecordType : uint8_t { kFollow = 1, kUnfollow = 2, kRemoveUser = 3 };

// An encoded payload, held inline: logging a follow allocates nothing.
struct WalPayload {
  char bytes[24];
  uint8_t size = 0;
  std::string_view view() const { return {bytes, size}; }
};

WalPayload EncodeFollowRecord(UserId follower, UserId followee, TimestampMs ts);
WalPayload EncodeUnfollowRecord(UserId follower, UserId followee);
WalPayload EncodeRemoveUserRecord(UserId user);

// Decodes a record into a replay op for Graph::ApplyBatch. kCorruption for an unknown type or
// a payload of the wrong size.
Result<Graph::ReplayOp> DecodeWalRecord(uint8_t type, std::string_view payload);

// "follow 42 -> 7 at 1700000000000", for wal-dump; never fails (says what is wrong instead).
std::string DescribeWalRecord(uint8_t type, std::string_view payload);

}  // namespace relgraph
