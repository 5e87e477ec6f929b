#include "net/client/event_format.h"

#include <iterator>

#include "storage/wal/record_table.h"

namespace relgraph::net {

std::string EventJson(const WireEvent& e, bool newline) {
  // The JSON names of a and b are the record table's (storage/wal/record_table.h).
  const auto k = static_cast<uint8_t>(e.kind);
  const bool known = RecordHas(k, kRecordEvent);
  const std::string_view name_a = known ? kRecordTable[k].event_a : "a";
  const std::string_view name_b = known ? kRecordTable[k].event_b : "b";
  std::string out = "{\"lsn\":" + std::to_string(e.lsn) + ",\"kind\":\"" +
                    std::string(EventKindName(e.kind)) + "\",\"" + std::string(name_a) +
                    "\":" + std::to_string(e.a);
  if (!name_b.empty()) out += ",\"" + std::string(name_b) + "\":" + std::to_string(e.b);
  out += ",\"ts\":" + std::to_string(e.ts);
  if (e.kind == EventKind::kFollow || e.kind == EventKind::kApprove)
    out += std::string(",\"friends\":") + (e.friends ? "true" : "false");
  if (e.kind == EventKind::kPublish) {
    out +=
        ",\"post_kind\":" + std::to_string(e.detail) + ",\"evicted\":" + std::to_string(e.evicted);
  }
  if (e.kind == EventKind::kBlock) {
    out += std::string(",\"unfollowed\":") + ((e.detail & 1) ? "true" : "false") +
           ",\"lost_follower\":" + ((e.detail & 2) ? "true" : "false") +
           ",\"dropped_request\":" + ((e.detail & 4) ? "true" : "false");
  }
  if (e.kind == EventKind::kSetPrivate)
    out += std::string(",\"private\":") + (e.detail != 0 ? "true" : "false");
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
    for (uint8_t k = 1; k <= 18; ++k) {
      if (((kAllEventKinds >> k) & 1) != 0 && EventKindName(static_cast<EventKind>(k)) == name) {
        mask |= 1u << k;
        found = true;
      }
    }
    if (!found) {
      return Status::InvalidArgument(
          "unknown event kind '" + std::string(name) +
          "' (follow, unfollow, remove_user, publish, delete_post, mute, unmute, hide, unhide, "
          "block, unblock, set_private, request, approve, reject, withdraw)");
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
    case EventKind::kRequest:
    case EventKind::kWithdraw:
    case EventKind::kBlock:
    case EventKind::kUnblock:
      line += " -> " + std::to_string(e.b);
      break;
    case EventKind::kApprove:
    case EventKind::kReject:
      line += " <- " + std::to_string(e.b);
      break;
    case EventKind::kRemoveUser:
      break;
    case EventKind::kSetPrivate:
      line += e.detail != 0 ? " private" : " public";
      break;
    case EventKind::kPublish:
    case EventKind::kDeletePost:
      line += " post " + std::to_string(e.b);
      break;
    default:
      line += " " + std::to_string(e.b);
  }
  if (e.kind == EventKind::kPublish) line += " kind " + std::to_string(e.detail);
  line += " at " + std::to_string(e.ts);
  if (e.friends) line += " (friends)";
  if (e.evicted != 0) line += " evicting " + std::to_string(e.evicted);
  return line + "\n";
}

}  // namespace relgraph::net
