// SlabAllocator: arrays of fixed-size entries (EdgeEntry for graph lists, PostEntry for feed
// buffers) in a fixed ladder of capacities ("classes"), carved from large slabs, with a free
// list per class.
//
// Why this design: a graph of 10M edges has millions of short lists. glibc's malloc would add a
// 16-byte header and 16-byte rounding to each, about as much as the entries themselves. Here a
// block has no header: the owner knows its size, and the class is a pure function of the
// capacity needed (CapacityFor). The ladder grows by 1.06-1.125x a step, so slack stays near 6%.
// All classes of a ladder carve blocks from its bump arena of 2 MiB huge-page slabs, so at
// most one slab a ladder is partly used; freed blocks go to their class's free list. Blocks above
// the largest class come from operator new.
//
// Two ladders share the slabs: one in entries (entry_bytes each), and one in 4-byte words
// for the header-less short lists (engine/graph/short_run.h), whose sizes are not multiples
// of an entry: a short list of 23 bytes takes 24, not the 30 of three 10-byte units. Each
// ladder has its own bump pointer and free lists. The word ladder leaves the last 8 bytes of
// each of its slabs unused, so that an 8-byte load starting at any byte of a word block stays
// in mapped memory (ShortRun reads its fields that way, without bounds checks).
//
// Thread-safety: none; the owning graph serializes mutations.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "engine/graph/edge_entry.h"

namespace relgraph {

class SlabAllocator {
 public:
  // entry_bytes: the size of one entry; at least 2, and blocks of one entry must hold a pointer
  // (free-list link), so entry_bytes >= 8 or entries are EdgeEntry-sized (10).
  explicit SlabAllocator(size_t entry_bytes = sizeof(EdgeEntry)) : entry_bytes_(entry_bytes) {}
  SlabAllocator(const SlabAllocator&) = delete;
  SlabAllocator& operator=(const SlabAllocator&) = delete;
  ~SlabAllocator();

  // The largest class: blocks above it come from operator new (AllocateBlock), and
  // AllocateWords has none.
  static constexpr uint32_t kLargestClassCapacity = 1024;
  // Entries a block for `n` entries can hold: the smallest class capacity >= n (n >= 1).
  static uint32_t CapacityFor(uint32_t n);

  // A block of CapacityFor(n) entries (4-byte aligned, size rounded up to a multiple of 4;
  // aligned to the entry size when that is a multiple of 8 and every block of this allocator
  // is), contents unspecified. REQUIRES: n >= 1.
  void* AllocateBlock(uint32_t n);
  // REQUIRES: `block` came from AllocateBlock(m) with CapacityFor(m) == CapacityFor(n).
  void FreeBlock(void* block, uint32_t n);
  // The same, typed for graph lists. REQUIRES: entry_bytes == sizeof(EdgeEntry).
  EdgeEntry* Allocate(uint32_t n) { return static_cast<EdgeEntry*>(AllocateBlock(n)); }
  void Free(EdgeEntry* block, uint32_t n) { FreeBlock(block, n); }

  // A block of CapacityFor(max(n, 2)) 4-byte words (4-byte aligned; at least two words, room
  // for a free block's link), contents unspecified; 8 bytes past its end are readable (a
  // neighbour's, or the slab's unused tail). REQUIRES: 1 <= n <= the largest class.
  void* AllocateWords(uint32_t n);
  // REQUIRES: `block` came from AllocateWords(m) with the same class as AllocateWords(n).
  void FreeWords(void* block, uint32_t n);
  // The bytes of the block AllocateWords(n) hands out (equal for n and m exactly when their
  // blocks are of one class).
  static size_t WordBlockBytes(uint32_t n) { return 4 * size_t{CapacityFor(n < 2 ? 2 : n)}; }

  // Bulk loads: maps `bytes` (rounded up to whole slabs) for the slabs to come, and faults it
  // in on a background thread, so a load's page faults (a third of it on this VM) overlap
  // its copying. The thread only asks the kernel to populate pages (MADV_POPULATE_WRITE) and
  // never writes them, so a slab may be used before it gets there. EndPrefault stops and joins
  // it and unmaps the slabs no block took; the destructor calls it.
  void BeginPrefault(size_t bytes);
  void EndPrefault();

  // Bytes reserved from the system (slabs and large blocks), including free blocks and the
  // untouched tail of each ladder's current slab.
  size_t MemoryBytes() const { return reserved_bytes_; }
  // Bytes in blocks handed out and not freed (capacity, not just the entries in use).
  size_t LiveBytes() const { return live_bytes_; }

 private:
  // One capacity ladder: its unit, free lists and the slab it carves.
  struct Ladder {
    size_t unit_bytes;
    size_t slab_tail;         // bytes at the end of each slab no block takes
    std::vector<char*> free;  // per class: first free block; each holds the next one's address
    char* bump = nullptr;     // next unused byte of this ladder's newest slab
    char* bump_end = nullptr;
    size_t BlockBytes(uint32_t capacity) const {
      return (size_t{capacity} * unit_bytes + 3) & ~size_t{3};
    }
  };

  static int ClassIndex(uint32_t n);  // -1 for large blocks
  size_t BlockBytes(uint32_t capacity) const { return entries_.BlockBytes(capacity); }
  // A block of class c of `ladder`, from its free list or its slab.
  char* CarveBlock(Ladder& ladder, int c);
  void PushFree(Ladder& ladder, int c, char* block);

  const size_t entry_bytes_;
  Ladder entries_{entry_bytes_, 0, {}};
  Ladder words_{4, 8, {}};
  std::vector<char*> slabs_;  // 2 MiB each, freed in the destructor
  std::vector<char*> spare_;  // mapped by BeginPrefault, not used yet; next one last
  std::thread prefault_;
  std::atomic<bool> stop_prefault_{false};
  size_t reserved_bytes_ = 0;
  size_t live_bytes_ = 0;
};

}  // namespace relgraph
