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

inline constexpr uint16_t kProtocolVersion = 1;
inline constexpr uint32_t kFrameHeaderBytes = 10;       // length + request_id + opcode + flags
inline constexpr uint32_t kMinFrameLength = 6;          // the `length` field of an empty body
inline constexpr uint32_t kDefaultMaxFrame = 1u << 20;  // whole frame, header included
inline constexpr uint32_t kMinMaxFrame = 4096;
inline constexpr uint16_t kDefaultPort = 7707;

enum class Opcode : uint8_t {
  kNotice = 0x00,  // server -> client only, request_id 0: why the server is closing
  kHello = 0x01,
  kPing = 0x02,
  kInfo = 0x03,
  kSnapshot = 0x04,
  kFollow = 0x10,
  kUnfollow = 0x11,
  kRelation = 0x12,
  kRelations = 0x13,
  kFollowing = 0x14,
  kFans = 0x15,
  kFriends = 0x16,
  kCounts = 0x17,
  kKnownFollowers = 0x18,
  kRemoveUser = 0x19,
  kPublish = 0x20,
  kDeletePost = 0x21,
  kTimeline = 0x22,
  kUserPosts = 0x23,
  kMute = 0x24,
  kUnmute = 0x25,
  kHide = 0x26,
  kUnhide = 0x27,
  kMutes = 0x28,
  kHides = 0x29,
};

// "follow", "known_followers", ...; "unknown" for an opcode the protocol does not define.
std::string_view OpcodeName(uint8_t opcode);
// The opcode named `name` (as OpcodeName spells it); false when there is none.
bool OpcodeFromName(std::string_view name, Opcode* out);

}  // namespace relgraph::net
