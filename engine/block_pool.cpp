#include "engine/block_pool.h"

#include <cstring>

#include "engine/huge_pages.h"

namespace relgraph {
namespace {

// Capacities in entries. Up to 12 the steps are those of SlabAllocator (x1.2-1.5): a block
// that small wastes at most an entry or two. Past 12 they are about x1.1, so that a block
// holds about 5% more than its entries on average, not 12%: feed buffers are mostly
// entries, and each step costs only a copy of the block.
constexpr std::array<uint32_t, BlockPool::kClasses> kClassCapacity = {
    1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 27, 30, 33, 36, 40, 44, 48, 53, 58, 64};

// Class index of every size up to 64: one load instead of a search.
constexpr std::array<uint8_t, BlockPool::kMaxBlockEntries + 1> MakeClassTable() {
  std::array<uint8_t, BlockPool::kMaxBlockEntries + 1> t{};
  uint8_t c = 0;
  for (uint32_t n = 0; n <= BlockPool::kMaxBlockEntries; ++n) {
    while (kClassCapacity[c] < n) ++c;
    t[n] = c;
  }
  return t;
}
constexpr std::array<uint8_t, BlockPool::kMaxBlockEntries + 1> kClassOf = MakeClassTable();

}  // namespace

// A run's header, at its start. Blocks follow it; a block never used yet lies at or past
// `used`, a freed one is on `free`.
struct BlockPool::Run {
  Run* prev;  // on the class's list of runs with room (or, for a free run, the pool's list)
  Run* next;
  char* free;     // the first free block; each holds the next one's address
  uint32_t used;  // bytes from the run's start up to the first block never handed out
  uint16_t live;  // blocks handed out and not freed
  uint8_t cls;
  uint8_t listed;  // on its class's list
};

BlockPool::BlockPool(size_t entry_bytes) : entry_bytes_(entry_bytes) {
  static_assert(sizeof(Run) == 32 || sizeof(void*) != 8);
  static_assert(kClassCapacity.size() == kClasses && kClassCapacity.back() == kMaxBlockEntries);
  for (size_t c = 0; c < kClasses; ++c)
    block_bytes_[c] = static_cast<uint32_t>(kClassCapacity[c] * entry_bytes_);
}

BlockPool::~BlockPool() {
  for (char* slab : slabs_) FreeLarge(slab, kSlabBytes);
}

bool BlockPool::Holds(const void* block) const {
  const char* p = static_cast<const char*>(block);
  for (const char* slab : slabs_) {
    if (p >= slab && p < slab + kSlabBytes) return true;
  }
  return false;
}

uint32_t BlockPool::CapacityFor(uint32_t n) {
  return kClassCapacity[kClassOf[n]];
}

void* BlockPool::AllocateBlock(uint32_t n) {
  const int c = kClassOf[n];
  const uint32_t bytes = block_bytes_[c];
  Run* run = with_room_[c];
  if (run == nullptr) run = TakeRun(c);
  char* block;
  if (run->free != nullptr) {
    block = run->free;
    std::memcpy(&run->free, block, sizeof(char*));
  } else {
    block = reinterpret_cast<char*>(run) + run->used;
    run->used += bytes;
  }
  ++run->live;
  live_bytes_ += bytes;
  if (run->free == nullptr && run->used + bytes > kRunBytes) Unlink(run);  // full
  return block;
}

void BlockPool::FreeBlock(void* block, uint32_t n) {
  if (block == nullptr) return;
  live_bytes_ -= block_bytes_[kClassOf[n]];
  // Runs are aligned to their size within 2 MiB-aligned slabs: the mask finds the header.
  Run* run = reinterpret_cast<Run*>(reinterpret_cast<uintptr_t>(block) & ~(kRunBytes - 1));
  std::memcpy(block, &run->free, sizeof(char*));
  run->free = static_cast<char*>(block);
  if (--run->live == 0) {  // back to the pool, for any class
    if (run->listed) Unlink(run);
    run->next = free_;
    free_ = run;
    ++free_runs_;
  } else if (!run->listed) {
    Link(run);
  }
}

BlockPool::Run* BlockPool::TakeRun(int cls) {
  Run* run = free_;
  if (run != nullptr) {
    free_ = run->next;
    --free_runs_;
  } else {
    if (next_run_ == slab_end_) {
      slabs_.push_back(static_cast<char*>(AllocateLarge(kSlabBytes)));
      next_run_ = slabs_.back();
      slab_end_ = next_run_ + kSlabBytes;
    }
    run = reinterpret_cast<Run*>(next_run_);
    next_run_ += kRunBytes;
  }
  // Blocks start after the header, at a multiple of the entry size when that is a power of
  // two (at most 32, the header's size), so entries keep their natural alignment.
  *run = Run{
      nullptr, nullptr, nullptr, static_cast<uint32_t>(sizeof(Run)), 0, static_cast<uint8_t>(cls),
      0};
  Link(run);
  return run;
}

void BlockPool::Link(Run* run) {
  Run*& head = with_room_[run->cls];
  run->prev = nullptr;
  run->next = head;
  if (head != nullptr) head->prev = run;
  head = run;
  run->listed = 1;
}

void BlockPool::Unlink(Run* run) {
  if (run->prev != nullptr)
    run->prev->next = run->next;
  else
    with_room_[run->cls] = run->next;
  if (run->next != nullptr) run->next->prev = run->prev;
  run->listed = 0;
}

}  // namespace relgraph
