#include "engine/post_index.h"

namespace relgraph {

namespace {
constexpr size_t kInitialSlots = 1024;
}

PostIndex::PostIndex()
    : ids_(kInitialSlots, 0), authors_(kInitialSlots, 0), mask_(kInitialSlots - 1) {}

void PostIndex::Insert(PostId post, InternalId author) {
  if ((size_ + 1) * 8 > ids_.size() * 7) Grow();  // load factor <= 7/8
  size_t i = Slot(post);
  while (ids_[i] != 0) i = (i + 1) & mask_;
  ids_[i] = post;
  authors_[i] = author;
  ++size_;
}

bool PostIndex::Erase(PostId post) {
  size_t i = Slot(post);
  while (ids_[i] != post) {
    if (ids_[i] == 0) return false;
    i = (i + 1) & mask_;
  }
  // Backward shift: pull later entries of the probe run into the hole when their home slot
  // does not lie cyclically in (hole, j].
  size_t hole = i;
  for (size_t j = (hole + 1) & mask_; ids_[j] != 0; j = (j + 1) & mask_) {
    const size_t home = Slot(ids_[j]);
    const bool home_in_range = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (home_in_range) continue;
    ids_[hole] = ids_[j];
    authors_[hole] = authors_[j];
    hole = j;
  }
  ids_[hole] = 0;
  --size_;
  return true;
}

void PostIndex::Grow() {
  std::vector<PostId> old_ids(ids_.size() * 2, 0);
  std::vector<InternalId> old_authors(ids_.size() * 2, 0);
  old_ids.swap(ids_);
  old_authors.swap(authors_);
  mask_ = ids_.size() - 1;
  for (size_t j = 0; j < old_ids.size(); ++j) {
    if (old_ids[j] == 0) continue;
    size_t i = Slot(old_ids[j]);
    while (ids_[i] != 0) i = (i + 1) & mask_;
    ids_[i] = old_ids[j];
    authors_[i] = old_authors[j];
  }
}

}  // namespace relgraph
