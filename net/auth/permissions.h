// The permissions a client may hold, and which one each command needs (docs/security.md).
//
// Why this design: the command table already says what every command is; the permission it
// needs is one more fact about it, written in one switch that names every opcode. A new
// command that is not placed here fails to compile (kCheckedEveryCommand below), so no command
// can slip in unguarded.
//
// Thread-safety: constants and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "net/protocol/command_table.h"
#include "storage/status.h"

namespace relgraph::net {

// A set of permissions, as bits.
using Permissions = uint8_t;
inline constexpr Permissions kPermRead = 1;          // queries and pages
inline constexpr Permissions kPermWrite = 2;         // graph, feed and access changes
inline constexpr Permissions kPermStream = 4;        // subscribe, cursors, snapshot transfer
inline constexpr Permissions kPermAdmin = 8;         // snapshot, promote, cursor deletion, ...
inline constexpr Permissions kPermReplication = 16;  // a replica's link to its primary
inline constexpr Permissions kPermAll = 31;
inline constexpr Permissions kPermNone = 0;

// What `opcode` needs: a client holding any one of these bits may run it. kPermNone: every
// authenticated client may (HELLO, PING). A push opcode or one the protocol does not define
// needs kPermAll (nobody sends them).
constexpr Permissions RequiredPermissions(Opcode op) {
  switch (op) {
    case Opcode::kHello:
    case Opcode::kPing:
      return kPermNone;
    case Opcode::kInfo:
    case Opcode::kShardMap:  // a cluster client routes by it
    case Opcode::kRelation:
    case Opcode::kRelations:
    case Opcode::kFollowing:
    case Opcode::kFans:
    case Opcode::kFriends:
    case Opcode::kCounts:
    case Opcode::kKnownFollowers:
    case Opcode::kTimeline:
    case Opcode::kUserPosts:
    case Opcode::kMutes:
    case Opcode::kHides:
    case Opcode::kBlocks:
    case Opcode::kIsPrivate:
    case Opcode::kRequests:
      return kPermRead;
    case Opcode::kReplication:  // who is primary: a group client and a replica's link ask
    case Opcode::kPosition:
      return kPermRead | kPermReplication;
    case Opcode::kFollow:
    case Opcode::kUnfollow:
    case Opcode::kRemoveUser:
    case Opcode::kPublish:
    case Opcode::kDeletePost:
    case Opcode::kMute:
    case Opcode::kUnmute:
    case Opcode::kHide:
    case Opcode::kUnhide:
    case Opcode::kBlock:
    case Opcode::kUnblock:
    case Opcode::kSetPrivate:
    case Opcode::kApprove:
    case Opcode::kReject:
    case Opcode::kWithdraw:
      return kPermWrite;
    case Opcode::kSubscribe:
    case Opcode::kAck:
    case Opcode::kCursors:
      return kPermStream;
    case Opcode::kFetchSnapshot:  // a stream consumer's start, and a replica's
      return kPermStream | kPermReplication;
    case Opcode::kReplicate:
    case Opcode::kReplicaAck:
      return kPermReplication;
    case Opcode::kSnapshot:
    case Opcode::kSlowlog:  // holds request text: user ids
    case Opcode::kDeleteCursor:
    case Opcode::kPromote:
    case Opcode::kReplicaOf:
      return kPermAdmin;
    case Opcode::kNotice:
    case Opcode::kEvents:
    case Opcode::kSnapshotData:
    case Opcode::kRecords:
      return kPermAll;
  }
  return kPermAll;
}

namespace permissions_internal {
// True when every request row of the command table is placed in the switch above by name
// (a row left out would fall to the final return: that is what this catches).
constexpr bool EveryRequestPlaced() {
  for (const CommandInfo& c : kCommands) {
    if (c.direction != Direction::kRequest) continue;
    if (RequiredPermissions(c.opcode) == kPermAll) return false;
  }
  return true;
}
}  // namespace permissions_internal
static_assert(permissions_internal::EveryRequestPlaced(),
              "a request opcode has no permission: place it in RequiredPermissions");

// "read,write", "all" or "none", in the bit order above.
std::string PermissionsText(Permissions p);
// The one permission named (read, write, stream, admin, replication) or "all"; a list
// "read,write". kInvalidArgument naming the unknown word.
Result<Permissions> ParsePermissions(std::string_view text);

// The refusal of `op` for `client` holding `held`: kPermissionDenied naming the command, the
// client and what it lacks.
Status PermissionDenied(Opcode op, std::string_view client, Permissions held);

}  // namespace relgraph::net
