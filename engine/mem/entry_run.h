// EntryRun<Entry>: the storage under the feed's sorted buffers (PostBuffer for authors' rings,
// InboxBuffer for readers' inboxes): a contiguous array of trivially copyable entries with a
// movable start, oldest first. It knows nothing of order; its owners decide where an entry
// goes.
//
// Why this design: both buffers are bounded (K posts, R entries), nearly always grow at the
// newest end and shrink at the oldest, and are read newest first from a cursor. A movable
// start gives appends and trims in amortized O(1), and binary search stays possible. Most
// buffers are tiny (an author's few posts, a light reader's inbox), so blocks of up to 64
// entries come from a BlockPool: no malloc header, no realloc per growth step, and the blocks
// growth leaves behind are reused by any size. Larger ones are malloc'd and sized tightly to
// their bound.
//
// Thread-safety: none; the feed engine serializes access.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

#include "engine/mem/block_pool.h"
#include "engine/mem/prefetch.h"

namespace relgraph {

template <typename Entry>
class EntryRun {
  static_assert(std::is_trivially_copyable_v<Entry>);

 public:
  // Larger blocks come from malloc.
  static constexpr uint32_t kSlabMaxEntries = BlockPool::kMaxBlockEntries;

  EntryRun() = default;
  // Frees a malloc'd block. A slab block is left to its allocator (Clear gives it back).
  ~EntryRun() {
    if (capacity_ > kSlabMaxEntries) std::free(data_);
  }
  EntryRun(const EntryRun&) = delete;
  EntryRun& operator=(const EntryRun&) = delete;

  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Index 0 is the oldest entry, size() - 1 the newest.
  const Entry& operator[](size_t i) const { return data_[start_ + i]; }
  const Entry& oldest() const { return data_[start_]; }
  const Entry& newest() const { return data_[start_ + size_ - 1]; }

  // The first index in [lo, hi) whose entry is not before(entry), or hi: a binary search.
  // REQUIRES: before(entry) is true for a prefix of [lo, hi) and false for the rest.
  template <typename Before>
  uint32_t PartitionPoint(uint32_t lo, uint32_t hi, Before&& before) const {
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (before(data_[start_ + mid]))
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }

  // Puts e at index `pos` (0..size()), moving the newer entries up. `bound` is the size the
  // owner keeps the run under: capacity never grows far past it, so a full run costs
  // bound * sizeof(Entry) plus a little slack. `slab`: the same allocator for every call on
  // one run.
  void InsertAt(uint32_t pos, const Entry& e, uint32_t bound, BlockPool& slab) {
    if (start_ + size_ == capacity_) MakeRoomAtEnd(bound, slab);
    Entry* at = data_ + start_ + pos;
    if (pos < size_) std::memmove(at + 1, at, size_t{size_ - pos} * sizeof(Entry));
    *at = e;
    ++size_;
  }
  void EraseAt(uint32_t i) {
    Entry* at = data_ + start_ + i;
    std::memmove(at, at + 1, size_t{size_ - i - 1} * sizeof(Entry));
    --size_;
  }
  void PopOldest() {
    ++start_;
    --size_;
    if (size_ == 0) start_ = 0;
  }
  // Removes the entries for which remove(entry) is true; returns how many were removed.
  template <typename Remove>
  uint32_t RemoveIf(Remove&& remove) {
    uint32_t out = 0;
    for (uint32_t i = 0; i < size_; ++i) {
      const Entry& e = data_[start_ + i];
      if (!remove(e)) data_[start_ + out++] = e;
    }
    const uint32_t removed = size_ - out;
    size_ = out;
    return removed;
  }
  // Empties the run and frees its block.
  void Clear(BlockPool& slab) {
    FreeBlock(slab);
    data_ = nullptr;
    start_ = size_ = capacity_ = 0;
  }
  // Moves the entries of a pool block (from `from`) into a block of `to` sized to them, and
  // frees the old one; a run with no entries gives its block back. A malloc'd block stays.
  // For CompactingPool.
  void MoveBlock(BlockPool& from, BlockPool& to) {
    if (capacity_ == 0 || capacity_ > kSlabMaxEntries) return;
    const uint32_t capacity = size_ > 0 ? to.CapacityFor(size_) : 0;
    Adopt(capacity > 0 ? to.AllocateBlock(capacity) : nullptr, capacity, from);
  }
  size_t MemoryBytes() const { return size_t{capacity_} * sizeof(Entry); }
  // The block when it came from a pool, else nullptr (none, or malloc'd).
  const void* pool_block() const {
    return capacity_ > 0 && capacity_ <= kSlabMaxEntries ? data_ : nullptr;
  }
  // Hints the CPU to fetch the newest entry and the room an append writes after it (for
  // entries of 12 bytes that room often starts a new cache line); when the block is full,
  // the header of its pool run instead, which the growth that frees the block updates.
  RELGRAPH_PREFETCH_HELPER void PrefetchNewest() const {
    if (size_ == 0) return;
    const Entry* newest = data_ + start_ + size_ - 1;
    __builtin_prefetch(newest);
    if (start_ + size_ < capacity_)
      __builtin_prefetch(reinterpret_cast<const char*>(newest + 2) - 1, 1);
    else if (capacity_ <= kSlabMaxEntries)
      BlockPool::PrefetchRunOf(data_);
  }
  RELGRAPH_PREFETCH_HELPER void PrefetchOldest() const {
    if (size_ > 0) __builtin_prefetch(data_ + start_);
  }

 private:
  // Slides the entries to the front when there is free room before them, else grows: through
  // the pool's classes while small, past them as the pool's Growth says, and to bound +
  // bound/16 + 4 once near the bound, so that a full run wastes little.
  void MakeRoomAtEnd(uint32_t bound, BlockPool& slab) {
    if (start_ > 0 && start_ >= size_ / 16) {
      std::memmove(data_, data_ + start_, size_t{size_} * sizeof(Entry));
      start_ = 0;
      return;
    }
    uint32_t want = capacity_ < kSlabMaxEntries ? slab.CapacityFor(capacity_ + 1)
                                                : slab.GrownPastBlocks(capacity_);
    if (want > bound) want = std::max(bound + bound / 16 + 4, size_ + 1);
    if (want <= kSlabMaxEntries) want = slab.CapacityFor(want);
    const size_t bytes = size_t{want} * sizeof(Entry);
    if (capacity_ > kSlabMaxEntries) {  // malloc'd already, and stays so: realloc keeps a prefix
      if (start_ > 0) std::memmove(data_, data_ + start_, size_t{size_} * sizeof(Entry));
      void* grown = std::realloc(data_, bytes);
      if (grown == nullptr) throw std::bad_alloc();
      data_ = static_cast<Entry*>(grown);
      start_ = 0;
      capacity_ = want;
    } else {
      void* fresh = want <= kSlabMaxEntries ? slab.AllocateBlock(want) : std::malloc(bytes);
      if (fresh == nullptr) throw std::bad_alloc();
      Adopt(fresh, want, slab);
    }
  }
  // Copies the entries straight to the front of `fresh` (room for `capacity`), frees the old
  // block (to `old_pool` when it came from a pool), and keeps the new one.
  void Adopt(void* fresh, uint32_t capacity, BlockPool& old_pool) {
    if (size_ > 0) std::memcpy(fresh, data_ + start_, size_t{size_} * sizeof(Entry));
    FreeBlock(old_pool);
    data_ = static_cast<Entry*>(fresh);
    start_ = 0;
    capacity_ = capacity;
  }
  void FreeBlock(BlockPool& slab) {
    if (capacity_ == 0) return;
    if (capacity_ <= kSlabMaxEntries)
      slab.FreeBlock(data_, capacity_);
    else
      std::free(data_);
  }

  Entry* data_ = nullptr;
  uint32_t start_ = 0;  // index of the oldest entry in data_
  uint32_t size_ = 0;
  uint32_t capacity_ = 0;
};

}  // namespace relgraph
