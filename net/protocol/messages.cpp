#include "net/protocol/messages.h"

#include <iterator>

namespace relgraph::net {

std::string_view RelationCodeName(RelationCode r) {
  switch (r) {
    case RelationCode::kNone:
      return "none";
    case RelationCode::kFollowing:
      return "following";
    case RelationCode::kFollowedBy:
      return "followed_by";
    case RelationCode::kMutual:
      return "mutual";
  }
  return "invalid";
}

std::optional<uint64_t> InfoReply::Get(std::string_view name) const {
  for (const InfoField& f : fields) {
    if (f.name == name) return f.value;
  }
  return std::nullopt;
}

std::string_view DurabilityCodeName(uint64_t code) {
  switch (static_cast<DurabilityCode>(code)) {
    case DurabilityCode::kAlways:
      return "always";
    case DurabilityCode::kEverySec:
      return "everysec";
    case DurabilityCode::kNone:
      return "none";
  }
  return "unknown";
}

std::string_view EventKindName(EventKind kind) {
  // Each kind is named as the command that makes it.
  constexpr Opcode kMadeBy[] = {Opcode::kFollow,  Opcode::kUnfollow,   Opcode::kRemoveUser,
                                Opcode::kPublish, Opcode::kDeletePost, Opcode::kMute,
                                Opcode::kUnmute,  Opcode::kHide,       Opcode::kUnhide};
  const auto k = static_cast<uint8_t>(kind);
  return k >= 1 && k <= std::size(kMadeBy) ? OpcodeName(kMadeBy[k - 1]) : "unknown";
}

}  // namespace relgraph::net
