#include "engine/graph/id_map.h"

#include <algorithm>

namespace relgraph {
IdMap::IdMap() {
  Rehash(SlotsFor(0));
}

InternalId IdMap::Intern(UserId user) {
  const InternalId found = Find(user);
  if (found != kNoInternalId) return found;
  if (growing()) {
    Grow(growth_step_);
  } else if ((records_.size() + 1) * 5 > slot_count_ * 4) {
    BeginGrowth(slot_count_ + slot_count_ / 2);
  }
  const auto id = static_cast<InternalId>(records_.size());
  records_.emplace_back().external = user;
  Place(user, id);
  return id;
}

void IdMap::Place(UserId user, InternalId id) {
  const uint64_t h = Hash(user);
  size_t i = Home(h);
  while (static_cast<InternalId>(LoadSlot(i)) != kNoInternalId) i = Next(i);
  StoreSlot(i, id, Fingerprint(h));
}

void IdMap::ClearSlots(size_t slot_count) {
  // assign() would keep the old capacity; a table sized exactly must not. All ones: every
  // slot's id is kNoInternalId.
  std::vector<char, HugePageAllocator<char>>(kSlotBytes * slot_count + kSlotPadding,
                                             static_cast<char>(0xff))
      .swap(slots_);
  slot_count_ = slot_count;
}

void IdMap::BeginGrowth(size_t slot_count) {
  old_slots_.swap(slots_);
  old_slot_count_ = slot_count_;
  ClearSlots(slot_count);
  moved_ = 0;
  moving_end_ = records_.size();
  Grow(growth_step_);
}

bool IdMap::Grow(size_t users) {
  if (!growing()) return false;
  const size_t end = std::min(moving_end_, moved_ + users);
  PlaceIds(moved_, end);
  moved_ = end;
  if (moved_ == moving_end_) EndGrowth();
  return growing();
}

void IdMap::PlaceIds(size_t begin, size_t end) {
  // Each probe is a cache miss in a table of up to GiBs; asking for the home slots kAhead users
  // ahead overlaps them instead of waiting on one at a time (2x a step on a map of 40M users,
  // relgraph-bench's id_growth row; 32 or 64 ahead were slower).
  constexpr size_t kAhead = 16;
  for (size_t id = begin; id < std::min(end, begin + kAhead); ++id) PrefetchHome(id);
  for (size_t id = begin; id < end; ++id) {
    if (id + kAhead < end) PrefetchHome(id + kAhead);
    Place(records_[id].external, static_cast<InternalId>(id));
  }
}

void IdMap::EndGrowth() {
  std::vector<char, HugePageAllocator<char>>().swap(old_slots_);
  old_slot_count_ = 0;
  moved_ = moving_end_ = 0;
}

InternalId IdMap::FindInOldTable(UserId user, uint64_t hash) const {
  // The probe of Find over the old table (its own slot count); ids moved since are still
  // there, and still right: ids never change.
  for (size_t i = HomeIn(hash, old_slot_count_);; i = i + 1 == old_slot_count_ ? 0 : i + 1) {
    const uint64_t v = LoadSlotIn(old_slots_.data(), i);
    const auto id = static_cast<InternalId>(v);
    if (id == kNoInternalId) return id;
    if (static_cast<uint8_t>(v >> 32) == Fingerprint(hash) && records_[id].external == user) {
      return id;
    }
  }
}

void IdMap::Rehash(size_t slot_count) {
  EndGrowth();
  ClearSlots(slot_count);
  PlaceIds(0, records_.size());
}

void IdMap::Reserve(size_t users) {
  if (users * 5 > slot_count_ * 4) Rehash(SlotsFor(users));
}

size_t IdMap::AppendAll(std::span<const UserId> externals) {
  for (size_t i = 0; i < externals.size(); ++i) {
    if (externals[i] == 0) return i;
    records_.emplace_back().external = externals[i];
  }
  return externals.size();
}

size_t IdMap::IndexAll() {
  EndGrowth();
  const size_t n = records_.size();
  ClearSlots(SlotsFor(n));
  // Bucket sort by the top bits of each id's hash (home slots grow with the hash), then place
  // bucket by bucket: each bucket's probes stay within a few hundred consecutive slots.
  constexpr int kBucketBits = 16;
  std::vector<uint32_t> start((size_t{1} << kBucketBits) + 1, 0);
  for (size_t i = 0; i < n; ++i) ++start[(Hash(records_[i].external) >> (64 - kBucketBits)) + 1];
  for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  struct Placing {
    uint64_t hash;
    InternalId id;
  };
  std::vector<Placing> order(n);  // in bucket order
  for (size_t i = 0; i < n; ++i) {
    const uint64_t h = Hash(records_[i].external);
    order[start[h >> (64 - kBucketBits)]++] = Placing{h, static_cast<InternalId>(i)};
  }
  for (const Placing& p : order) {
    Match m = NextMatch(Home(p.hash), Fingerprint(p.hash));
    for (; m.id != kNoInternalId; m = NextMatch(Next(m.slot), m.fp)) {
      if (records_[m.id].external == records_[p.id].external) return std::max(p.id, m.id);
    }
    StoreSlot(m.slot, p.id, m.fp);
  }
  return n;
}

size_t IdMap::MemoryBytes() const {
  return slots_.capacity() + old_slots_.capacity();
}

}  // namespace relgraph
