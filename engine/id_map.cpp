#include "engine/id_map.h"

#include <algorithm>
#include <bit>

namespace relgraph {
namespace {

constexpr size_t kInitialSlots = 16;

}  // namespace

IdMap::IdMap() {
  Rehash(kInitialSlots);
}

InternalId IdMap::Intern(UserId user) {
  const InternalId found = Find(user);
  if (found != kNoInternalId) return found;
  if ((external_.size() + 1) * 5 > (mask_ + 1) * 4) Rehash((mask_ + 1) * 2);
  const auto id = static_cast<InternalId>(external_.size());
  external_.push_back(user);
  Place(user, id);
  return id;
}

void IdMap::Place(UserId user, InternalId id) {
  size_t i = Hash(user) & mask_;
  while (slots_[i].key != 0) i = (i + 1) & mask_;
  slots_[i] = Slot{user, id};
}

void IdMap::Rehash(size_t slot_count) {
  slots_.assign(slot_count, Slot{0, 0});
  mask_ = slot_count - 1;
  for (size_t id = 0; id < external_.size(); ++id)
    Place(external_[id], static_cast<InternalId>(id));
}

void IdMap::Reserve(size_t users) {
  size_t slots = mask_ + 1;
  while (users * 5 > slots * 4) slots *= 2;
  if (slots != mask_ + 1) Rehash(slots);
}

size_t IdMap::AssignAll(std::span<const UserId> externals) {
  Reserve(externals.size());
  for (size_t i = 0; i < externals.size(); ++i) {
    if (externals[i] == 0) return i;
    external_.push_back(externals[i]);
  }
  // Bucket sort by the top bits of each id's home slot, then place bucket by bucket: each
  // bucket's probes stay within a few hundred consecutive slots.
  const size_t slots = mask_ + 1;
  const int slot_bits = std::countr_zero(slots);
  const int bucket_bits = std::min(slot_bits, 16);
  const int shift = slot_bits - bucket_bits;
  std::vector<uint32_t> start((size_t{1} << bucket_bits) + 1, 0);
  for (UserId u : externals) ++start[((Hash(u) & mask_) >> shift) + 1];
  for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  std::vector<uint32_t> order(externals.size());
  for (size_t i = 0; i < externals.size(); ++i)
    order[start[(Hash(externals[i]) & mask_) >> shift]++] = static_cast<uint32_t>(i);
  for (uint32_t id : order) {
    const UserId user = externals[id];
    size_t i = Hash(user) & mask_;
    for (; slots_[i].key != 0; i = (i + 1) & mask_) {
      if (slots_[i].key == user) return std::max<size_t>(id, slots_[i].id);
    }
    slots_[i] = Slot{user, id};
  }
  return externals.size();
}

size_t IdMap::MemoryBytes() const {
  return external_.MemoryBytes() + slots_.capacity() * sizeof(Slot);
}

}  // namespace relgraph
