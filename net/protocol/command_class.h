// The class of every opcode: who may send the command and whether it only reads. Both the
// permission a command needs (RequiredPermissions, net/auth/permissions.h) and whether a
// replica answers it (ReadsOnly, command_table.h) are read from ClassOf, and from nothing else.
//
// Why this design: the permission list and the read-only list named the same read commands
// twice, and the two had to agree. Now a command is placed once, in ClassOf's switch, which
// names every opcode: a new opcode left out of it is a -Wswitch warning, and a request row of
// the command table left out fails a static_assert (command_table.h).
//
// Thread-safety: constants and pure functions.
#pragma once

#include <cstdint>

#include "net/protocol/protocol.h"

namespace relgraph::net {

enum class CommandClass : uint8_t {
  kServerOnly,         // a push (EVENTS, ...) or a value the protocol does not define
  kOpen,               // HELLO: any client; it opens the connection, it is not a read
  kProbe,              // PING: any client; a read a replica answers
  kRead,               // a query or page; INFO, SHARD_MAP
  kReadReplication,    // a read that a replica's link asks too (who is primary, how far)
  kWrite,              // a graph, feed or access change
  kStream,             // a change-stream consumer's: starts or moves a cursor
  kStreamRead,         // a change-stream consumer's read (the cursors)
  kStreamReplication,  // a change-stream consumer's start that a replica's link makes too
  kReplicaLink,        // a replica's link to its primary only
  kAdmin,              // the node: snapshot, its slow log, promotion, cursor deletion, ...
};

constexpr CommandClass ClassOf(Opcode op) {
  using enum CommandClass;
  switch (op) {
    case Opcode::kNotice:
    case Opcode::kEvents:
    case Opcode::kSnapshotData:
    case Opcode::kRecords:
      return kServerOnly;
    case Opcode::kHello:
      return kOpen;
    case Opcode::kPing:
      return kProbe;
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
      return kRead;
    case Opcode::kReplication:  // who is primary: a group client and a replica's link ask
    case Opcode::kPosition:
      return kReadReplication;
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
      return kWrite;
    case Opcode::kSubscribe:
    case Opcode::kAck:
      return kStream;
    case Opcode::kCursors:
      return kStreamRead;
    case Opcode::kFetchSnapshot:  // a stream consumer's start, and a replica's
      return kStreamReplication;
    case Opcode::kReplicate:
    case Opcode::kReplicaAck:
      return kReplicaLink;
    case Opcode::kSnapshot:
    case Opcode::kSlowlog:  // holds request text: user ids; it may empty the node's log
    case Opcode::kDeleteCursor:
    case Opcode::kPromote:
    case Opcode::kReplicaOf:
      return kAdmin;
  }
  return kServerOnly;
}

}  // namespace relgraph::net
