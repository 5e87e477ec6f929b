// Wire protocol constants: frame header layout, opcodes, limits (docs/protocol.md is the spec).
//
//   frame   := length:u32 request_id:u32 opcode:u8 (flags | status):u8 body
//   length  := byte count after the length field = 6 + |body|
//
// Requests carry `flags` (reserved, 0); replies carry `status` (a storage/status.h Code; 0 = ok).
// An error reply's body is `detail:i64 message:string`. All integers are little-endian.
//
// Thread-safety: constants and pure functions.
#pragma once

#include <cstdint>
#include <string_view>

namespace relgraph::net {

// The newest protocol version, which clients send in HELLO, and the oldest a server still
// accepts (docs/protocol.md, "Handshake"): version 2 adds server_version to HELLO's reply.
inline constexpr uint16_t kProtocolVersion = 2;
inline constexpr uint16_t kMinProtocolVersion = 1;
inline constexpr uint32_t kFrameHeaderBytes = 10;       // length + request_id + opcode + flags
inline constexpr uint32_t kMinFrameLength = 6;          // the `length` field of an empty body
inline constexpr uint32_t kDefaultMaxFrame = 1u << 20;  // whole frame, header included
inline constexpr uint32_t kMinMaxFrame = 4096;
inline constexpr uint16_t kDefaultPort = 7707;
// The server's batch limits (docs/protocol.md, "Limits"): the most entries a page or a
// KNOWN_FOLLOWERS reply asks for, and the most ids one RELATIONS request holds. More is
// `invalid_argument`. The engine enforces them; net/roles/service checks at compile time that its
// limits are these, so a client that splits by them (net/cluster) and the server agree.
inline constexpr uint32_t kMaxPageLimit = 1000;
inline constexpr uint32_t kMaxRelationsIds = 1000;

// Every opcode, written once: its enumerator, its value and its name (the name OpcodeName,
// the command table and error messages use). Adding a command starts with one line here (see
// the README, "Anatomy of a command").
#define RELGRAPH_OPCODES(X)                                                                  \
  X(kNotice, 0x00, "notice") /* server -> client only, request_id 0: why it is closing */    \
  X(kHello, 0x01, "hello")                                                                   \
  X(kPing, 0x02, "ping")                                                                     \
  X(kInfo, 0x03, "info")                                                                     \
  X(kSnapshot, 0x04, "snapshot")                                                             \
  X(kFollow, 0x10, "follow")                                                                 \
  X(kUnfollow, 0x11, "unfollow")                                                             \
  X(kRelation, 0x12, "relation")                                                             \
  X(kRelations, 0x13, "relations")                                                           \
  X(kFollowing, 0x14, "following")                                                           \
  X(kFans, 0x15, "fans")                                                                     \
  X(kFriends, 0x16, "friends")                                                               \
  X(kCounts, 0x17, "counts")                                                                 \
  X(kKnownFollowers, 0x18, "known_followers")                                                \
  X(kRemoveUser, 0x19, "remove_user")                                                        \
  X(kPublish, 0x20, "publish")                                                               \
  X(kDeletePost, 0x21, "delete_post")                                                        \
  X(kTimeline, 0x22, "timeline")                                                             \
  X(kUserPosts, 0x23, "user_posts")                                                          \
  X(kMute, 0x24, "mute")                                                                     \
  X(kUnmute, 0x25, "unmute")                                                                 \
  X(kHide, 0x26, "hide")                                                                     \
  X(kUnhide, 0x27, "unhide")                                                                 \
  X(kMutes, 0x28, "mutes")                                                                   \
  X(kHides, 0x29, "hides")                                                                   \
  X(kSubscribe, 0x30, "subscribe")                                                           \
  X(kEvents, 0x31, "events") /* server -> client only: a subscription's events */            \
  X(kFetchSnapshot, 0x32, "fetch_snapshot")                                                  \
  X(kSnapshotData, 0x33, "snapshot_data") /* server -> client only: FETCH_SNAPSHOT's file */ \
  X(kAck, 0x34, "ack")                                                                       \
  X(kCursors, 0x35, "cursors")                                                               \
  X(kDeleteCursor, 0x36, "delete_cursor")                                                    \
  X(kReplicate, 0x37, "replicate")                                                           \
  X(kRecords, 0x38, "records") /* server -> client only: a replication's WAL records */      \
  X(kReplicaAck, 0x39, "replica_ack")                                                        \
  X(kPromote, 0x3a, "promote")                                                               \
  X(kReplication, 0x3b, "replication")                                                       \
  X(kReplicaOf, 0x3c, "replica_of")                                                          \
  X(kPosition, 0x3d, "position")                                                             \
  X(kShardMap, 0x3e, "shard_map")                                                            \
  X(kSlowlog, 0x3f, "slowlog")                                                               \
  X(kBlock, 0x40, "block")                                                                   \
  X(kUnblock, 0x41, "unblock")                                                               \
  X(kBlocks, 0x42, "blocks")                                                                 \
  X(kSetPrivate, 0x43, "set_private")                                                        \
  X(kIsPrivate, 0x44, "is_private")                                                          \
  X(kRequests, 0x45, "requests")                                                             \
  X(kApprove, 0x46, "approve")                                                               \
  X(kReject, 0x47, "reject")                                                                 \
  X(kWithdraw, 0x48, "withdraw")

enum class Opcode : uint8_t {
#define RELGRAPH_OPCODE_ENUMERATOR(id, value, name) id = value,
  RELGRAPH_OPCODES(RELGRAPH_OPCODE_ENUMERATOR)
#undef RELGRAPH_OPCODE_ENUMERATOR
};

// "follow", "known_followers", ...; "unknown" for an opcode the protocol does not define.
constexpr std::string_view OpcodeName(uint8_t opcode) {
  switch (opcode) {
#define RELGRAPH_OPCODE_CASE(id, value, name) \
  case value:                                 \
    return name;
    RELGRAPH_OPCODES(RELGRAPH_OPCODE_CASE)
#undef RELGRAPH_OPCODE_CASE
  }
  return "unknown";
}
constexpr std::string_view OpcodeName(Opcode opcode) {
  return OpcodeName(static_cast<uint8_t>(opcode));
}
// The opcode named `name` (as OpcodeName spells it); false when there is none.
bool OpcodeFromName(std::string_view name, Opcode* out);

}  // namespace relgraph::net
