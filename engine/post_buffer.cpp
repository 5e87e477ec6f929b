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

// Slides the entries to the front when there is free room before them, else grows: by one
// while tiny, by half while small, and to bound + bound/16 + 4 once near the bound, so a full
// buffer wastes little.
void PostBuffer::MakeRoomAtEnd(uint32_t bound) {
  if (start_ + size_ < capacity_) return;
  if (start_ > 0 && start_ >= size_ / 16) {
    std::memmove(data_, data_ + start_, size_t{size_} * sizeof(PostEntry));
    start_ = 0;
    return;
  }
  const uint32_t slack = bound / 16 + 4;
  // Most authors and inboxes hold a handful of entries: grow one by one while tiny.
  uint32_t want = capacity_ < 4 ? capacity_ + 1 : capacity_ + capacity_ / 2;
  if (want > bound) want = std::max(bound + slack, size_ + 1);
  if (start_ > 0) {
    std::memmove(data_, data_ + start_, size_t{size_} * sizeof(PostEntry));
    start_ = 0;
  }
  void* grown = std::realloc(data_, size_t{want} * sizeof(PostEntry));
  if (grown == nullptr) throw std::bad_alloc();
  data_ = static_cast<PostEntry*>(grown);
  capacity_ = want;
}

bool PostBuffer::Insert(const PostEntry& e, uint32_t bound) {
  uint32_t pos = size_;
  if (size_ > 0 && !PostEntry::Less(newest(), e)) {  // not the newest: find its place
    pos = LowerBound(e.key());
    if (pos < size_ && data_[start_ + pos].key() == e.key()) return false;
  }
  MakeRoomAtEnd(bound);
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

void PostBuffer::Clear() {
  std::free(data_);
  data_ = nullptr;
  start_ = size_ = capacity_ = 0;
}

}  // namespace relgraph
