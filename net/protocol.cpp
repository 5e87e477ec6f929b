#include "net/protocol.h"

#include <array>
#include <utility>

namespace relgraph::net {
namespace {

constexpr std::array<std::pair<Opcode, std::string_view>, 25> kNames = {{
    {Opcode::kNotice, "notice"},
    {Opcode::kHello, "hello"},
    {Opcode::kPing, "ping"},
    {Opcode::kInfo, "info"},
    {Opcode::kSnapshot, "snapshot"},
    {Opcode::kFollow, "follow"},
    {Opcode::kUnfollow, "unfollow"},
    {Opcode::kRelation, "relation"},
    {Opcode::kRelations, "relations"},
    {Opcode::kFollowing, "following"},
    {Opcode::kFans, "fans"},
    {Opcode::kFriends, "friends"},
    {Opcode::kCounts, "counts"},
    {Opcode::kKnownFollowers, "known_followers"},
    {Opcode::kRemoveUser, "remove_user"},
    {Opcode::kPublish, "publish"},
    {Opcode::kDeletePost, "delete_post"},
    {Opcode::kTimeline, "timeline"},
    {Opcode::kUserPosts, "user_posts"},
    {Opcode::kMute, "mute"},
    {Opcode::kUnmute, "unmute"},
    {Opcode::kHide, "hide"},
    {Opcode::kUnhide, "unhide"},
    {Opcode::kMutes, "mutes"},
    {Opcode::kHides, "hides"},
}};

}  // namespace

std::string_view OpcodeName(uint8_t opcode) {
  for (const auto& [op, name] : kNames) {
    if (static_cast<uint8_t>(op) == opcode) return name;
  }
  return "unknown";
}

bool OpcodeFromName(std::string_view name, Opcode* out) {
  for (const auto& [op, n] : kNames) {
    if (n == name) {
      *out = op;
      return true;
    }
  }
  return false;
}

}  // namespace relgraph::net
