#include "net/protocol/messages.h"

#include <chrono>
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

void EncodeRecordsHeader(char* p, uint64_t first_lsn, uint64_t newest_lsn, int64_t sent_us,
                         size_t count) {
  const uint64_t fields[3] = {first_lsn, newest_lsn, static_cast<uint64_t>(sent_us)};
  for (int f = 0; f < 3; ++f) {
    for (int i = 0; i < 8; ++i) *p++ = static_cast<char>(fields[f] >> (8 * i));
  }
  p[0] = static_cast<char>(count & 0xff);
  p[1] = static_cast<char>(count >> 8);
}

int64_t RecordsClockUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
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
