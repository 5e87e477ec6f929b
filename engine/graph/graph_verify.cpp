// Graph::CheckInvariants: a full structural audit, used by tests after every batch and by
// `relgraph-admin verify`. It recomputes everything from one side and compares with the other,
// so it shares no bookkeeping with the mutation code it audits.
#include <optional>
#include <string>
#include <vector>

#include "engine/graph/graph.h"

namespace relgraph {

Status Graph::CheckInvariants() const {
  const EntryOrder ord = order();
  auto fail = [&](InternalId u, const std::string& what) {
    return Status::Corruption("user " + std::to_string(ids_.External(u)) + ": " + what);
  };
  uint64_t following_total = 0, fans_total = 0;
  size_t fan_index_bytes = 0;
  std::vector<EdgeEntry> entries;
  for (InternalId a = 0; a < users_.size(); ++a) {
    const UserRecord& ua = users_[a];
    uint32_t mutual = 0;
    if (const std::string bad = ua.following.CheckLayout(); !bad.empty()) {
      return fail(a, "following list's times: " + bad);
    }
    entries.resize(ua.following.size());
    ua.following.Decode(entries.data());
    for (uint32_t i = 0; i < entries.size(); ++i) {
      const EdgeEntry e = entries[i];
      const InternalId b = e.peer;
      if (b >= users_.size() || b == a) return fail(a, "following entry with a bad peer");
      if (i > 0 && !ord.Less(entries[i - 1], ord.KeyOf(e))) {
        return fail(a, "following list out of order at position " + std::to_string(i));
      }
      const bool back = users_[b].following.FindPeer(a) < users_[b].following.size();
      if (EntryMutual(e) != back) return fail(a, "mutual bit wrong on following entry");
      mutual += EntryMutual(e) ? 1 : 0;
      const std::optional<EdgeEntry> fan = users_[b].fans.Get({EntryTs(e), ids_.External(a)}, ord);
      if (!fan) return fail(a, "following entry without its fan entry");
      if (fan->peer != a || EntryMutual(*fan) != EntryMutual(e)) {
        return fail(a, "fan entry disagrees with its following entry");
      }
    }
    if (mutual != ua.friends) return fail(a, "friends counter differs from a recount");
    following_total += ua.following.size();

    uint32_t seen = 0;
    std::optional<EdgeEntry> prev;
    Status status;
    ua.fans.ForEach([&](const EdgeEntry& fan) {
      if (!status.ok()) return;
      if (prev && !ord.Less(*prev, ord.KeyOf(fan))) {
        status = fail(a, "fan list out of order");
      } else if (fan.peer >= users_.size() ||
                 users_[fan.peer].following.FindPeer(a) == users_[fan.peer].following.size()) {
        status = fail(a, "fan entry without its following entry");
      }
      prev = fan;
      ++seen;
    });
    RELGRAPH_RETURN_IF_ERROR(status);
    if (seen != ua.fans.size()) return fail(a, "fans counter differs from a recount");
    fans_total += seen;
    fan_index_bytes += ua.fans.MemoryBytes();
  }
  if (fan_index_bytes != fan_index_bytes_) {
    return Status::Corruption("fan index bytes " + std::to_string(fan_index_bytes_) +
                              " differ from a recount's " + std::to_string(fan_index_bytes));
  }
  if (following_total != edge_count_ || fans_total != edge_count_) {
    return Status::Corruption("edge count " + std::to_string(edge_count_) + " differs from " +
                              std::to_string(following_total) + " following entries and " +
                              std::to_string(fans_total) + " fan entries");
  }
  return CheckAccessInvariants();
}

}  // namespace relgraph
