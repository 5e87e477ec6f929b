#include "engine/id_map.h"

namespace relgraph {
namespace {

constexpr size_t kInitialSlots = 16;

// Tags are never 0 so that 0 can mark an empty slot.
inline uint8_t TagOf(uint64_t hash) { return static_cast<uint8_t>(hash >> 56) | 1; }

}  // namespace

IdMap::IdMap() { Rehash(kInitialSlots); }

uint64_t IdMap::Hash(UserId user) {
  // splitmix64 finalizer: cheap, and spreads sequential ids over the whole table.
  uint64_t x = user + 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

InternalId IdMap::Find(UserId user) const {
  const uint64_t hash = Hash(user);
  const uint8_t tag = TagOf(hash);
  for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
    const uint8_t t = slot_tags_[i];
    if (t == 0) return kNoInternalId;
    if (t == tag && external_[slot_ids_[i]] == user) return slot_ids_[i];
  }
}

InternalId IdMap::Intern(UserId user) {
  const InternalId found = Find(user);
  if (found != kNoInternalId) return found;
  if ((external_.size() + 1) * 5 > (mask_ + 1) * 4) Rehash((mask_ + 1) * 2);
  const auto id = static_cast<InternalId>(external_.size());
  external_.push_back(user);
  Place(id, Hash(user));
  return id;
}

void IdMap::Place(InternalId id, uint64_t hash) {
  size_t i = hash & mask_;
  while (slot_tags_[i] != 0) i = (i + 1) & mask_;
  slot_tags_[i] = TagOf(hash);
  slot_ids_[i] = id;
}

void IdMap::Rehash(size_t slot_count) {
  slot_ids_.assign(slot_count, 0);
  slot_tags_.assign(slot_count, 0);
  mask_ = slot_count - 1;
  for (InternalId id = 0; id < external_.size(); ++id) Place(id, Hash(external_[id]));
}

void IdMap::Reserve(size_t users) {
  external_.reserve(users);
  size_t slots = mask_ + 1;
  while (users * 5 > slots * 4) slots *= 2;
  if (slots != mask_ + 1) Rehash(slots);
}

size_t IdMap::MemoryBytes() const {
  return external_.capacity() * sizeof(UserId) + slot_ids_.capacity() * sizeof(InternalId) +
         slot_tags_.capacity();
}

}  // namespace relgraph
