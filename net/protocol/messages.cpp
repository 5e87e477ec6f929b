#include "net/protocol/messages.h"

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

}  // namespace relgraph::net
