#include "engine/feed/id_list_pair.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace relgraph {

IdListPair::~IdListPair() {
  if (capacity_ > kPoolMaxIds) std::free(ids_);
}

IdListPair::IdListPair(IdListPair&& other) noexcept
    : ids_(std::exchange(other.ids_, nullptr)),
      first_(std::exchange(other.first_, 0)),
      capacity_(other.capacity_),
      second_(other.second_) {
  other.capacity_ = 0;
  other.second_ = 0;
}

IdListPair& IdListPair::operator=(IdListPair&& other) noexcept {
  if (this != &other) {
    if (capacity_ > kPoolMaxIds) std::free(ids_);
    ids_ = std::exchange(other.ids_, nullptr);
    first_ = std::exchange(other.first_, 0);
    capacity_ = other.capacity_;
    second_ = other.second_;
    other.capacity_ = 0;
    other.second_ = 0;
  }
  return *this;
}

void IdListPair::AddFirst(InternalId id, BlockPool& pool) {
  if (first_ + second_ == capacity_) Grow(pool);
  if (second_ > 0)
    std::memmove(ids_ + first_ + 1, ids_ + first_, size_t{second_} * sizeof(InternalId));
  ids_[first_++] = id;
}

void IdListPair::AddSecond(InternalId id, BlockPool& pool) {
  if (first_ + second_ == capacity_) Grow(pool);
  ids_[first_ + second_] = id;
  second_ = second_ + 1;
}

void IdListPair::ClearFirst() {
  if (second_ > 0) std::memmove(ids_, ids_ + first_, size_t{second_} * sizeof(InternalId));
  first_ = 0;
}

void IdListPair::ClearSecond() {
  second_ = 0;
}

void IdListPair::Clear(BlockPool& pool) {
  FreeBlock(pool);
  ids_ = nullptr;
  first_ = 0;
  capacity_ = 0;
  second_ = 0;
}

// Pool blocks hold an even number of ids, in the pool's classes; past them the
// block grows by half.
void IdListPair::Grow(BlockPool& pool) {
  const uint32_t size = first_ + second_;
  uint32_t want = size + 1;
  if (want <= kPoolMaxIds)
    want = 2 * pool.CapacityFor((want + 1) / 2);
  else
    want = std::max(want, size + size / 2);
  const size_t bytes = size_t{want} * sizeof(InternalId);
  void* fresh = want <= kPoolMaxIds ? pool.AllocateBlock(want / 2) : std::malloc(bytes);
  if (fresh == nullptr) throw std::bad_alloc();
  if (size > 0) std::memcpy(fresh, ids_, size_t{size} * sizeof(InternalId));
  FreeBlock(pool);
  ids_ = static_cast<InternalId*>(fresh);
  capacity_ = want;
}

void IdListPair::FreeBlock(BlockPool& pool) {
  if (capacity_ == 0) return;
  if (capacity_ <= kPoolMaxIds)
    pool.FreeBlock(ids_, capacity_ / 2);
  else
    std::free(ids_);
}

}  // namespace relgraph
