#include "engine/post_index.h"

namespace relgraph {

namespace {
constexpr size_t kInitialSlots = 1024;
}

PostIndex::PostIndex() : slots_(kInitialSlots, Slot{0, 0}) {}

void PostIndex::Insert(PostId post, InternalId author) {
  if ((size_ + 1) * 8 > slots_.size() * 7) Grow();  // load factor <= 7/8
  size_t i = Home(post);
  while (slots_[i].id != 0) i = Next(i);
  slots_[i] = Slot{post, author};
  ++size_;
}

bool PostIndex::Erase(PostId post) {
  size_t i = Home(post);
  while (slots_[i].id != post) {
    if (slots_[i].id == 0) return false;
    i = Next(i);
  }
  // Backward shift: pull later entries of the probe run into the hole when their home slot
  // does not lie cyclically in (hole, j].
  size_t hole = i;
  for (size_t j = Next(hole); slots_[j].id != 0; j = Next(j)) {
    const size_t home = Home(slots_[j].id);
    const bool home_in_range = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (home_in_range) continue;
    slots_[hole] = slots_[j];
    hole = j;
  }
  slots_[hole].id = 0;
  --size_;
  return true;
}

void PostIndex::Grow() {
  std::vector<Slot> old(slots_.size() + slots_.size() / 2, Slot{0, 0});
  old.swap(slots_);
  for (const Slot& s : old) {
    if (s.id == 0) continue;
    size_t i = Home(s.id);
    while (slots_[i].id != 0) i = Next(i);
    slots_[i] = s;
  }
}

}  // namespace relgraph
