#include "engine/graph/id_map.h"

#include <algorithm>

namespace relgraph {
IdMap::IdMap() {
  Rehash(SlotsFor(0));
}

InternalId IdMap::Intern(UserId user) {
  const InternalId found = Find(user);
  if (found != kNoInternalId) return found;
  if ((external_.size() + 1) * 5 > slot_count_ * 4) Rehash(slot_count_ + slot_count_ / 2);
  const auto id = static_cast<InternalId>(external_.size());
  external_.push_back(user);
  Place(user, id);
  return id;
}

void IdMap::Place(UserId user, InternalId id) {
  size_t i = Home(user);
  while (slots_[i].key != 0) i = Next(i);
  slots_[i] = Slot{user, id};
}

void IdMap::ClearSlots(size_t slot_count) {
  // assign() would keep the old capacity; a table sized exactly must not.
  std::vector<Slot, HugePageAllocator<Slot>>(slot_count, Slot{0, 0}).swap(slots_);
  slot_count_ = slot_count;
}

void IdMap::Rehash(size_t slot_count) {
  ClearSlots(slot_count);
  for (size_t id = 0; id < external_.size(); ++id)
    Place(external_[id], static_cast<InternalId>(id));
}

void IdMap::Reserve(size_t users) {
  if (users * 5 > slot_count_ * 4) Rehash(SlotsFor(users));
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
  ClearSlots(SlotsFor(n));
  // Bucket sort by the top bits of each id's hash (home slots grow with the hash), then place
  // bucket by bucket: each bucket's probes stay within a few hundred consecutive slots.
  constexpr int kBucketBits = 16;
  auto bucket = [](UserId user) { return Hash(user) >> (64 - kBucketBits); };
  std::vector<uint32_t> start((size_t{1} << kBucketBits) + 1, 0);
  for (size_t i = 0; i < n; ++i) ++start[bucket(external_[i]) + 1];
  for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  std::vector<Slot> order(n);  // (id, internal id) in bucket order
  for (size_t i = 0; i < n; ++i) {
    const UserId user = external_[i];
    order[start[bucket(user)]++] = Slot{user, static_cast<InternalId>(i)};
  }
  for (const Slot& s : order) {
    size_t i = Home(s.key);
    for (; slots_[i].key != 0; i = Next(i)) {
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
