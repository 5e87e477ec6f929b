#include "engine/post_buffer.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace relgraph {

uint32_t PostBuffer::LowerBound(const PostKey& k) const {
  uint32_t lo = 0, hi = size_;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    if (data_[start_ + mid].LessThan(k))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

uint32_t PostBuffer::Find(const PostKey& k) const {
  const uint32_t i = LowerBound(k);
  return (i < size_ && data_[start_ + i].key() == k) ? i : size_;
}

uint32_t PostBuffer::FindId(PostId id) const {
  for (uint32_t i = 0; i < size_; ++i) {
    if (data_[start_ + i].id == id) return i;
  }
  return size_;
}

// Slides the entries to the front when there is free room before them, else grows: through
// the slab's classes (x1.25-1.5) while small, by half past them, and to bound + bound/16 + 4
// once near the bound, so a full buffer wastes little.
void PostBuffer::MakeRoomAtEnd(uint32_t bound, SlabAllocator& slab) {
  if (start_ + size_ < capacity_) return;
  if (start_ > 0 && start_ >= size_ / 16) {
    std::memmove(data_, data_ + start_, size_t{size_} * sizeof(PostEntry));
    start_ = 0;
    return;
  }
  uint32_t want = capacity_ < kSlabMaxEntries ? SlabAllocator::CapacityFor(capacity_ + 1)
                                              : capacity_ + capacity_ / 2;
  if (want > bound) want = std::max(bound + bound / 16 + 4, size_ + 1);
  if (want <= kSlabMaxEntries) want = SlabAllocator::CapacityFor(want);
  const size_t bytes = size_t{want} * sizeof(PostEntry);
  if (capacity_ > kSlabMaxEntries) {  // malloc'd already, and stays so: realloc keeps a prefix
    if (start_ > 0) std::memmove(data_, data_ + start_, size_t{size_} * sizeof(PostEntry));
    void* grown = std::realloc(data_, bytes);
    if (grown == nullptr) throw std::bad_alloc();
    data_ = static_cast<PostEntry*>(grown);
  } else {  // a fresh block: copy the entries straight to its front
    void* fresh = want <= kSlabMaxEntries ? slab.AllocateBlock(want) : std::malloc(bytes);
    if (fresh == nullptr) throw std::bad_alloc();
    if (size_ > 0) std::memcpy(fresh, data_ + start_, size_t{size_} * sizeof(PostEntry));
    FreeBlock(slab);
    data_ = static_cast<PostEntry*>(fresh);
  }
  start_ = 0;
  capacity_ = want;
}

void PostBuffer::FreeBlock(SlabAllocator& slab) {
  if (capacity_ == 0) return;
  if (capacity_ <= kSlabMaxEntries)
    slab.FreeBlock(data_, capacity_);
  else
    std::free(data_);
}

// Insert when e is not newer than the newest entry: find its place.
bool PostBuffer::InsertInside(const PostEntry& e, uint32_t bound, SlabAllocator& slab) {
  const uint32_t pos = LowerBound(e.key());
  if (pos < size_ && data_[start_ + pos].key() == e.key()) return false;
  MakeRoomAtEnd(bound, slab);
  PostEntry* at = data_ + start_ + pos;
  std::memmove(at + 1, at, size_t{size_ - pos} * sizeof(PostEntry));
  *at = e;
  ++size_;
  return true;
}

void PostBuffer::EraseAt(uint32_t i) {
  PostEntry* at = data_ + start_ + i;
  std::memmove(at, at + 1, size_t{size_ - i - 1} * sizeof(PostEntry));
  --size_;
}

void PostBuffer::PopOldest() {
  ++start_;
  --size_;
  if (size_ == 0) start_ = 0;
}

void PostBuffer::Clear(SlabAllocator& slab) {
  FreeBlock(slab);
  data_ = nullptr;
  start_ = size_ = capacity_ = 0;
}

}  // namespace relgraph
