#include "engine/graph/pair_lists.h"

#include <optional>
#include <string>

#include "engine/graph/id_map.h"  // EntryOrder reads external ids

namespace relgraph {

std::optional<TimestampMs> PairLists::Find(InternalId owner, InternalId peer) const {
  const PairInfo* info = pairs_.Find(Key(owner, peer));
  if (info == nullptr) return std::nullopt;
  return info->ts;
}

void PairLists::Add(InternalId owner, InternalId peer, TimestampMs ts, const FanContext& ctx) {
  lists_[owner].Insert(MakeEntry(peer, ts, false), ctx);
  uint32_t place = 0;
  auto [named, added] = named_by_.Insert(peer, NamedBy{1, owner});
  if (!added) {
    if (named->count == 1) {  // a second owner: the set spills into a vector
      uint32_t index;
      if (free_spill_.empty()) {
        index = static_cast<uint32_t>(spill_.size());
        spill_.emplace_back();
      } else {
        index = free_spill_.back();
        free_spill_.pop_back();
      }
      spill_[index].push_back(named->owner_or_spill);  // its place 0 is unchanged
      named->owner_or_spill = index;
    }
    std::vector<InternalId>& owners = spill_[named->owner_or_spill];
    place = static_cast<uint32_t>(owners.size());
    owners.push_back(owner);
    ++named->count;
  }
  pairs_.Insert(Key(owner, peer), PairInfo{ts, place});
}

void PairLists::DropFromReverse(InternalId owner, InternalId peer, uint32_t place) {
  NamedBy* named = named_by_.Find(peer);
  if (named->count == 1) {
    named_by_.Erase(peer);
    return;
  }
  const uint32_t index = named->owner_or_spill;
  std::vector<InternalId>& owners = spill_[index];
  const InternalId moved = owners.back();  // takes the removed owner's place
  owners[place] = moved;
  owners.pop_back();
  if (moved != owner) pairs_.Find(Key(moved, peer))->place = place;
  if (--named->count == 1) {  // back inline
    const InternalId last = owners[0];
    pairs_.Find(Key(last, peer))->place = 0;
    named->owner_or_spill = last;
    std::vector<InternalId>().swap(owners);
    free_spill_.push_back(index);
  }
}

bool PairLists::NamedIn(InternalId owner, InternalId peer) const {
  const NamedBy* named = named_by_.Find(peer);
  const PairInfo* info = pairs_.Find(Key(owner, peer));
  if (named == nullptr || info == nullptr) return false;
  if (named->count == 1) return named->owner_or_spill == owner && info->place == 0;
  const std::vector<InternalId>& owners = spill_[named->owner_or_spill];
  return named->count == owners.size() && info->place < owners.size() &&
         owners[info->place] == owner;
}

bool PairLists::Remove(InternalId owner, InternalId peer, const FanContext& ctx) {
  PairInfo removed;
  if (!pairs_.Erase(Key(owner, peer), &removed)) return false;
  auto list = lists_.find(owner);
  list->second.Erase({removed.ts, ctx.order.External(peer)}, ctx);
  if (list->second.size() == 0) {
    list->second.Clear(ctx.slab);
    lists_.erase(list);
  }
  DropFromReverse(owner, peer, removed.place);
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
  const NamedBy* named = named_by_.Find(peer);
  return named == nullptr ? 0 : named->count;
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
  const NamedBy* named = named_by_.Find(peer);
  if (named == nullptr) return {};
  if (named->count == 1) return {named->owner_or_spill};
  return spill_[named->owner_or_spill];
}

void PairLists::Clear(SlabAllocator& slab) {
  for (auto& [owner, list] : lists_) list.Clear(slab);
  lists_.clear();
  pairs_.Clear();
  named_by_.Clear();
  spill_.clear();
  free_spill_.clear();
}

size_t PairLists::MemoryBytes() const {
  size_t bytes = pairs_.MemoryBytes() + named_by_.MemoryBytes();
  // lists_ is node-based: a node per owner (key, list, next pointer) plus the bucket array.
  bytes += lists_.size() * (sizeof(FanList) + 16) + lists_.bucket_count() * sizeof(void*);
  for (const auto& [owner, list] : lists_) bytes += list.MemoryBytes();
  bytes += spill_.capacity() * sizeof(std::vector<InternalId>) +
           free_spill_.capacity() * sizeof(uint32_t);
  for (const auto& owners : spill_) bytes += owners.capacity() * sizeof(InternalId);
  return bytes;
}

Status PairLists::CheckConsistent(const EntryOrder& order, const char* what) const {
  auto fail = [&](const std::string& m) {
    return Status::Corruption(std::string(what) + ": " + m);
  };
  size_t listed = 0;
  for (const auto& [owner, list] : lists_) {
    if (list.size() == 0) return fail("an empty list is kept");
    std::optional<EdgeEntry> prev;
    Status status;
    list.ForEach([&](const EdgeEntry& e) {
      if (!status.ok()) return;
      const auto t = Find(owner, e.peer);
      if (!t || *t != EntryTs(e)) {
        status = fail("user " + std::to_string(order.External(owner)) + " lists " +
                      std::to_string(order.External(e.peer)) + " without its pair");
      } else if (prev && !order.Less(*prev, order.KeyOf(e))) {
        status = fail("list of user " + std::to_string(order.External(owner)) + " out of order");
      } else if (!NamedIn(owner, InternalId{e.peer})) {
        status = fail("reverse index lacks " + std::to_string(order.External(owner)) + " -> " +
                      std::to_string(order.External(e.peer)));
      }
      prev = e;
    });
    RELGRAPH_RETURN_IF_ERROR(status);
    listed += list.size();
  }
  size_t reversed = 0;
  named_by_.ForEach([&](uint64_t, const NamedBy& named) { reversed += named.count; });
  if (listed != pairs_.size() || reversed != pairs_.size()) {
    return fail(std::to_string(pairs_.size()) + " pairs, " + std::to_string(listed) + " listed, " +
                std::to_string(reversed) + " in the reverse index");
  }
  return Status::OK();
}

}  // namespace relgraph
