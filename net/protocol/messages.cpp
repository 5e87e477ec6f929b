#include "net/protocol/messages.h"

#include <array>
#include <chrono>
#include <iterator>
#include <string>

namespace relgraph::net {

std::string_view RelationCodeName(RelationCode r) {
  static const std::array<std::string, kRelationCodeBits + 1> kNames = [] {
    constexpr const char* kBits[] = {"following",    "followed_by", "requested",
                                     "requested_by", "blocking",    "blocked_by"};
    std::array<std::string, kRelationCodeBits + 1> names;
    for (unsigned v = 0; v <= kRelationCodeBits; ++v) {
      std::string& n = names[v];
      unsigned rest = v;
      if ((v & 3) == 3) {
        n = "mutual";
        rest &= ~3u;
      }
      for (unsigned bit = 0; bit < 6; ++bit) {
        if ((rest & (1u << bit)) != 0) n += (n.empty() ? "" : "+") + std::string(kBits[bit]);
      }
      if (n.empty()) n = "none";
    }
    return names;
  }();
  const auto v = static_cast<uint8_t>(r);
  return v <= kRelationCodeBits ? std::string_view(kNames[v]) : std::string_view("invalid");
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
  // The record table's name: each kind is named as the command that makes it ("request" for a
  // follow of a private account).
  const auto k = static_cast<uint8_t>(kind);
  return RecordHas(k, kRecordEvent) ? kRecordTable[k].name : std::string_view("unknown");
}

}  // namespace relgraph::net
