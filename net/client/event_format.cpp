#include "net/client/event_format.h"

namespace relgraph::net {
namespace {

// The names of a and b for each kind, as the commands that make it call them.
constexpr const char* kFields[][2] = {
    {"a", "b"},         {"follower", "followee"}, {"follower", "followee"}, {"user", ""},
    {"author", "post"}, {"author", "post"},       {"user", "other"},        {"user", "other"},
    {"author", "from"}, {"author", "from"}};

}  // namespace

std::string EventJson(const WireEvent& e, bool newline) {
  const auto k = static_cast<uint8_t>(e.kind);
  const auto& names = kFields[k <= 9 ? k : 0];
  std::string out = "{\"lsn\":" + std::to_string(e.lsn) + ",\"kind\":\"" +
                    std::string(EventKindName(e.kind)) + "\",\"" + names[0] +
                    "\":" + std::to_string(e.a);
  if (names[1][0] != '\0') out += ",\"" + std::string(names[1]) + "\":" + std::to_string(e.b);
  out += ",\"ts\":" + std::to_string(e.ts);
  if (e.kind == EventKind::kFollow)
    out += std::string(",\"friends\":") + (e.friends ? "true" : "false");
  if (e.kind == EventKind::kPublish) {
    out += ",\"post_kind\":" + std::to_string(e.post_kind) +
           ",\"evicted\":" + std::to_string(e.evicted);
  }
  out += "}";
  if (newline) out += "\n";
  return out;
}

Result<uint32_t> ParseEventKinds(std::string_view list) {
  uint32_t mask = 0;
  size_t start = 0;
  for (;;) {
    const size_t comma = list.find(',', start);
    const std::string_view name = list.substr(start, comma - start);
    bool found = false;
    for (uint8_t k = 1; k <= 9; ++k) {
      if (EventKindName(static_cast<EventKind>(k)) == name) {
        mask |= 1u << k;
        found = true;
      }
    }
    if (!found) {
      return Status::InvalidArgument(
          "unknown event kind '" + std::string(name) +
          "' (follow, unfollow, remove_user, publish, delete_post, mute, unmute, hide, unhide)");
    }
    if (comma == std::string_view::npos) return mask;
    start = comma + 1;
  }
}

std::string EventText(const WireEvent& e) {
  std::string line =
      std::to_string(e.lsn) + " " + std::string(EventKindName(e.kind)) + " " + std::to_string(e.a);
  switch (e.kind) {
    case EventKind::kFollow:
    case EventKind::kUnfollow:
      line += " -> " + std::to_string(e.b);
      break;
    case EventKind::kRemoveUser:
      break;
    case EventKind::kPublish:
    case EventKind::kDeletePost:
      line += " post " + std::to_string(e.b);
      break;
    default:
      line += " " + std::to_string(e.b);
  }
  if (e.kind == EventKind::kPublish) line += " kind " + std::to_string(e.post_kind);
  line += " at " + std::to_string(e.ts);
  if (e.friends) line += " (friends)";
  if (e.evicted != 0) line += " evicting " + std::to_string(e.evicted);
  return line + "\n";
}

}  // namespace relgraph::net
