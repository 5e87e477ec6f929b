#include "engine/stream/change_event.h"

namespace relgraph {
namespace {

// The kinds' names are their record types' (storage/wal/record_table.h); empty for types that
// are never events.
constexpr std::string_view NameOf(uint8_t k) {
  return RecordHas(k, kRecordEvent) ? kRecordTable[k].name : std::string_view();
}

std::string KnownKinds() {
  std::string all;
  for (uint8_t k = 1; k <= kMaxChangeKind; ++k) {
    if (NameOf(k).empty()) continue;
    if (!all.empty()) all += ", ";
    all += NameOf(k);
  }
  return all;
}

}  // namespace

std::string_view ChangeKindName(ChangeKind kind) {
  const auto k = static_cast<uint8_t>(kind);
  return k >= 1 && k <= kMaxChangeKind && !NameOf(k).empty() ? NameOf(k)
                                                             : std::string_view("unknown");
}

Result<ChangeKindMask> ParseChangeKinds(std::string_view list) {
  if (list.empty() || list == "all") return kAllChangeKinds;
  ChangeKindMask mask = 0;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view name = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    uint8_t found = 0;
    for (uint8_t k = 1; k <= kMaxChangeKind; ++k) {
      if (!NameOf(k).empty() && NameOf(k) == name) found = k;
    }
    if (found == 0) {
      return Status::InvalidArgument("unknown event kind '" + std::string(name) +
                                     "' (known: " + KnownKinds() + ", or all)");
    }
    mask |= MaskOf(static_cast<ChangeKind>(found));
  }
  return mask;
}

Status ValidateChangeKindMask(ChangeKindMask mask) {
  if (mask == 0) return Status::InvalidArgument("the event kind mask selects no kind");
  if ((mask & ~kAllChangeKinds) != 0) {
    return Status::InvalidArgument("the event kind mask has bits outside 1..9 and 12..18 (mask " +
                                   std::to_string(mask) + ")");
  }
  return Status::OK();
}

}  // namespace relgraph
