#include "engine/id_map.h"

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

size_t IdMap::MemoryBytes() const {
  return external_.MemoryBytes() + slots_.capacity() * sizeof(Slot);
}

}  // namespace relgraph
