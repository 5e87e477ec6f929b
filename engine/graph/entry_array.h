// EntryArray: a sorted run of packed EdgeEntry in one slab block whose capacity is always
// SlabAllocator::CapacityFor(size) (grown and shrunk on class boundaries, so no capacity field).
// A fan list of one entry is an EntryArray.
//
// Costs: find by key O(log n), insert and erase O(n) memmove, rank and page reads
// O(log n + limit), find by peer O(n) (only used on short lists).
//
// Thread-safety: none; the owning graph serializes mutations. 12 bytes, 4-byte aligned, so a
// user record stays small.
#pragma once

#include <cstdint>

#include "engine/graph/edge_entry.h"
#include "engine/graph/slab_allocator.h"

namespace relgraph {

#pragma pack(push, 4)
class EntryArray {
 public:
  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  EdgeEntry* data() { return data_; }
  const EdgeEntry* data() const { return data_; }
  EdgeEntry& operator[](size_t i) { return data_[i]; }
  const EdgeEntry& operator[](size_t i) const { return data_[i]; }

  size_t FindPeer(InternalId peer) const { return relgraph::FindPeer(data_, size_, peer); }
  size_t Rank(const EntryKey& k, const EntryOrder& order) const {
    return order.LowerBound(data_, size_, k);
  }

  // Inserts `e` at its place in key order. REQUIRES: no entry with the same key.
  void Insert(const EdgeEntry& e, const EntryOrder& order, SlabAllocator& slab);
  void InsertAt(size_t pos, const EdgeEntry& e, SlabAllocator& slab);
  void EraseAt(size_t pos, SlabAllocator& slab);
  // Appends `n` entries that sort after every present one (bulk moves between chunks).
  void AppendRun(const EdgeEntry* src, uint32_t n, SlabAllocator& slab);
  void Clear(SlabAllocator& slab);
  // Keeps the first `n` entries. REQUIRES: n <= size().
  void Truncate(uint32_t n, SlabAllocator& slab) { Resize(n, slab); }

  // Copies up to `limit` entries with rank < end into `out`, newest first; returns the count.
  uint32_t CopyDescending(size_t end, uint32_t limit, EdgeEntry* out) const;

  // Adopts a block holding `size` entries (capacity CapacityFor(size)); releases ownership.
  void Adopt(EdgeEntry* block, uint32_t size) {
    data_ = block;
    size_ = size;
  }
  EdgeEntry* Release() {
    EdgeEntry* b = data_;
    data_ = nullptr;
    size_ = 0;
    return b;
  }

 private:
  void Resize(uint32_t new_size, SlabAllocator& slab);  // keeps the first min(old,new) entries

  EdgeEntry* data_ = nullptr;
  uint32_t size_ = 0;
};
#pragma pack(pop)
static_assert(sizeof(EntryArray) == 12);

}  // namespace relgraph
