#include "engine/graph/pair_lists.h"

#include <string>

namespace relgraph {

std::optional<TimestampMs> PairLists::Find(InternalId owner, InternalId peer) const {
  auto it = pairs_.find(Key(owner, peer));
  if (it == pairs_.end()) return std::nullopt;
  return it->second;
}

void PairLists::Add(InternalId owner, InternalId peer, TimestampMs ts, const FanContext& ctx) {
  pairs_.emplace(Key(owner, peer), ts);
  lists_[owner].Insert(MakeEntry(peer, ts, false), ctx);
  owners_naming_[peer].insert(owner);
}

bool PairLists::Remove(InternalId owner, InternalId peer, const FanContext& ctx) {
  auto it = pairs_.find(Key(owner, peer));
  if (it == pairs_.end()) return false;
  const TimestampMs ts = it->second;
  pairs_.erase(it);
  auto list = lists_.find(owner);
  list->second.Erase({ts, ctx.order.External(peer)}, ctx);
  if (list->second.size() == 0) {
    list->second.Clear(ctx.slab);
    lists_.erase(list);
  }
  auto owners = owners_naming_.find(peer);
  owners->second.erase(owner);
  if (owners->second.empty()) owners_naming_.erase(owners);
  return true;
}

const FanList* PairLists::ListOf(InternalId owner) const {
  auto it = lists_.find(owner);
  return it == lists_.end() ? nullptr : &it->second;
}

uint32_t PairLists::CountOwnedBy(InternalId owner) const {
  const FanList* list = ListOf(owner);
  return list == nullptr ? 0 : list->size();
}

uint32_t PairLists::CountNaming(InternalId peer) const {
  auto it = owners_naming_.find(peer);
  return it == owners_naming_.end() ? 0 : static_cast<uint32_t>(it->second.size());
}

std::vector<InternalId> PairLists::PeersOf(InternalId owner) const {
  std::vector<InternalId> out;
  if (const FanList* list = ListOf(owner)) {
    out.reserve(list->size());
    list->ForEach(
        [&](const EdgeEntry& e) { out.push_back(InternalId{e.peer}); });  // a copy: packed
  }
  return out;
}

std::vector<InternalId> PairLists::OwnersNaming(InternalId peer) const {
  auto it = owners_naming_.find(peer);
  if (it == owners_naming_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

void PairLists::Clear(SlabAllocator& slab) {
  for (auto& [owner, list] : lists_) list.Clear(slab);
  lists_.clear();
  pairs_.clear();
  owners_naming_.clear();
}

size_t PairLists::MemoryBytes() const {
  // Node-based maps: a node per element (value, hash, next pointer) plus the bucket array.
  size_t bytes = pairs_.size() * 32 + pairs_.bucket_count() * sizeof(void*);
  bytes += lists_.size() * 32 + lists_.bucket_count() * sizeof(void*);
  for (const auto& [owner, list] : lists_) bytes += list.MemoryBytes();
  for (const auto& [peer, owners] : owners_naming_) {
    bytes += 80 + owners.size() * 24 + owners.bucket_count() * sizeof(void*);
  }
  return bytes;
}

Status PairLists::CheckConsistent(const EntryOrder& order, const char* what) const {
  auto fail = [&](const std::string& m) {
    return Status::Corruption(std::string(what) + ": " + m);
  };
  size_t listed = 0;
  for (const auto& [owner, list] : lists_) {
    if (list.size() == 0) return fail("an empty list is kept");
    const EdgeEntry* prev = nullptr;
    Status status;
    list.ForEach([&](const EdgeEntry& e) {
      if (!status.ok()) return;
      const auto t = Find(owner, e.peer);
      if (!t || *t != EntryTs(e)) {
        status = fail("user " + std::to_string(order.External(owner)) + " lists " +
                      std::to_string(order.External(e.peer)) + " without its pair");
      } else if (prev != nullptr && !order.Less(*prev, order.KeyOf(e))) {
        status = fail("list of user " + std::to_string(order.External(owner)) + " out of order");
      } else if (auto r = owners_naming_.find(InternalId{e.peer});
                 r == owners_naming_.end() || !r->second.contains(owner)) {
        status = fail("reverse index lacks " + std::to_string(order.External(owner)) + " -> " +
                      std::to_string(order.External(e.peer)));
      }
      prev = &e;
    });
    RELGRAPH_RETURN_IF_ERROR(status);
    listed += list.size();
  }
  size_t reversed = 0;
  for (const auto& [peer, owners] : owners_naming_) reversed += owners.size();
  if (listed != pairs_.size() || reversed != pairs_.size()) {
    return fail(std::to_string(pairs_.size()) + " pairs, " + std::to_string(listed) + " listed, " +
                std::to_string(reversed) + " in the reverse index");
  }
  return Status::OK();
}

}  // namespace relgraph
