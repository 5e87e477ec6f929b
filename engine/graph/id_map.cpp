#include "engine/graph/id_map.h"

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

void IdMap::ClearSlots(size_t slot_count) {
  slots_.assign(slot_count, Slot{0, 0});
  mask_ = slot_count - 1;
}

void IdMap::Rehash(size_t slot_count) {
  ClearSlots(slot_count);
  for (size_t id = 0; id < external_.size(); ++id)
    Place(external_[id], static_cast<InternalId>(id));
}

void IdMap::Reserve(size_t users) {
  const size_t slots = GrownSlots(users, mask_ + 1);
  if (slots != mask_ + 1) Rehash(slots);
}

size_t IdMap::AppendAll(std::span<const UserId> externals) {
  for (size_t i = 0; i < externals.size(); ++i) {
    if (externals[i] == 0) return i;
    external_.push_back(externals[i]);
  }
  return externals.size();
}

size_t IdMap::IndexAll() {
  const size_t n = external_.size();
  const size_t slots = GrownSlots(n, kInitialSlots);
  ClearSlots(slots);
  // Bucket sort by the top bits of each id's home slot, then place bucket by bucket: each
  // bucket's probes stay within a few hundred consecutive slots.
  const int slot_bits = std::countr_zero(slots);
  const int bucket_bits = std::min(slot_bits, 16);
  const int shift = slot_bits - bucket_bits;
  std::vector<uint32_t> start((size_t{1} << bucket_bits) + 1, 0);
  for (size_t i = 0; i < n; ++i) ++start[((Hash(external_[i]) & mask_) >> shift) + 1];
  for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  std::vector<Slot> order(n);  // (id, internal id) in bucket order
  for (size_t i = 0; i < n; ++i) {
    const UserId user = external_[i];
    order[start[(Hash(user) & mask_) >> shift]++] = Slot{user, static_cast<InternalId>(i)};
  }
  for (const Slot& s : order) {
    size_t i = Hash(s.key) & mask_;
    for (; slots_[i].key != 0; i = (i + 1) & mask_) {
      if (slots_[i].key == s.key) return std::max<size_t>(s.id, slots_[i].id);
    }
    slots_[i] = s;
  }
  return n;
}

size_t IdMap::MemoryBytes() const {
  return external_.MemoryBytes() + slots_.capacity() * sizeof(Slot);
}

}  // namespace relgraph
