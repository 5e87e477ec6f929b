// BlockPool: blocks of up to 64 small fixed-size entries (the feed's post rings and inboxes,
// entry_run.h), in a ladder of capacities ("classes"), with free memory that any class can
// reuse.
//
// Why this design: feed buffers grow one entry at a time, so each one passes through the
// classes and frees a block at every step. SlabAllocator (the graph's) keeps a free list per
// class. So when many buffers grow together, as every author's ring does while posts arrive,
// the blocks they leave behind pile up in classes that nobody asks for any more. At 27 posts
// per author the rings' slab held about twice the bytes of the entries.
// Here each 16 KiB run holds blocks of one class, and knows how many
// are in use. A run whose blocks are all free goes back to the pool, where any class can
// take it, as a size-class allocator such as jemalloc does with its pages. Blocks still have
// no header: a block's run is found by masking its address (runs are aligned), and the
// owner knows the block's capacity.
//
// Thread-safety: none; the feed engine serializes access.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/mem/prefetch.h"

namespace relgraph {

class BlockPool {
 public:
  static constexpr uint32_t kMaxBlockEntries = 64;
  static constexpr size_t kRunBytes = 16 << 10;

  // How buffers grow: a trade of copies against unused room, chosen per pool.
  // - kFewCopies: classes step x1.2-1.5, and buffers past the pool grow by half. About 12%
  //   of a growing buffer is unused, past 12 entries.
  // - kTight: the same up to 12 entries, then classes step about x1.1, and buffers past the
  //   pool grow by an eighth. About 5% is unused, for about twice the copies.
  enum class Growth { kFewCopies, kTight };
  static constexpr size_t kMaxClasses = 25;

  // entry_bytes: the size of one entry, a multiple of 4 in [8, 32] (a free block holds a
  // link; the largest block stays small beside a run).
  explicit BlockPool(size_t entry_bytes, Growth growth = Growth::kFewCopies);
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // Entries a block for `n` entries can hold: the smallest class capacity >= n.
  // REQUIRES: 1 <= n <= kMaxBlockEntries.
  uint32_t CapacityFor(uint32_t n) const;
  // The next capacity of a buffer past the pool's blocks (malloc'd), from `capacity`.
  uint32_t GrownPastBlocks(uint32_t capacity) const;

  // A block of CapacityFor(n) entries, 4-byte aligned (aligned to the entry size when that is
  // a power of two), contents unspecified. REQUIRES: 1 <= n <= kMaxBlockEntries.
  void* AllocateBlock(uint32_t n);
  // REQUIRES: `block` came from AllocateBlock(m) with CapacityFor(m) == CapacityFor(n).
  void FreeBlock(void* block, uint32_t n);

  // Hints the CPU to fetch the header of the run that holds `block`, which FreeBlock updates.
  RELGRAPH_PREFETCH_HELPER static void PrefetchRunOf(const void* block) {
    __builtin_prefetch(
        reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(block) & ~(kRunBytes - 1)), 1);
  }

  // Bytes reserved from the system: whole 2 MiB slabs, with free runs and free blocks.
  size_t MemoryBytes() const { return slabs_.size() * kSlabBytes; }
  // Bytes in blocks handed out and not freed (capacity, not just the entries in use).
  size_t LiveBytes() const { return live_bytes_; }
  // True when `block` lies in one of this pool's slabs. O(slabs): for checks.
  bool Holds(const void* block) const;
  // Runs that hold no block in use, waiting for any class.
  size_t FreeRuns() const { return free_runs_; }

 private:
  static constexpr size_t kSlabBytes = size_t{2} << 20;
  struct Run;
  Run* TakeRun(int cls);  // a reset run of class cls, on its class's list
  void Link(Run* run);    // onto its class's list of runs with room
  void Unlink(Run* run);

  const size_t entry_bytes_;
  const Growth growth_;
  const uint32_t* capacity_;                         // per class
  const uint8_t* class_of_;                          // per size, 0..kMaxBlockEntries
  std::array<uint32_t, kMaxClasses> block_bytes_{};  // per class
  std::array<Run*, kMaxClasses> with_room_{};        // per class: runs with a free block or room
  Run* free_ = nullptr;                              // runs with no block in use
  size_t free_runs_ = 0;
  std::vector<char*> slabs_;
  char* next_run_ = nullptr;  // the newest slab's first run not handed out yet
  char* slab_end_ = nullptr;
  size_t live_bytes_ = 0;
};

}  // namespace relgraph
