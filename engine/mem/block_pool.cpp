#include "engine/mem/block_pool.h"

#include <cstring>

#include "engine/mem/huge_pages.h"

namespace relgraph {
namespace {

// Capacities in entries. kFewCopies: SlabAllocator's ladder (x1.2-1.5). kTight: the same up
// to 12, where a block wastes at most an entry or two, then about x1.1.
constexpr std::array<uint32_t, 16> kFewCopiesCapacity = {1,  2,  3,  4,  5,  6,  8,  10,
                                                         12, 16, 20, 24, 32, 40, 48, 64};
constexpr std::array<uint32_t, 25> kTightCapacity = {
    1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 27, 30, 33, 36, 40, 44, 48, 53, 58, 64};
static_assert(kTightCapacity.size() <= BlockPool::kMaxClasses);

// Class index of every size up to 64: one load instead of a search.
template <size_t N>
constexpr std::array<uint8_t, BlockPool::kMaxBlockEntries + 1> MakeClassTable(
    const std::array<uint32_t, N>& capacity) {
  std::array<uint8_t, BlockPool::kMaxBlockEntries + 1> t{};
  uint8_t c = 0;
  for (uint32_t n = 0; n <= BlockPool::kMaxBlockEntries; ++n) {
    while (capacity[c] < n) ++c;
    t[n] = c;
  }
  return t;
}
constexpr auto kFewCopiesClassOf = MakeClassTable(kFewCopiesCapacity);
constexpr auto kTightClassOf = MakeClassTable(kTightCapacity);

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

BlockPool::BlockPool(size_t entry_bytes, Growth growth)
    : entry_bytes_(entry_bytes),
      growth_(growth),
      capacity_(growth == Growth::kTight ? kTightCapacity.data() : kFewCopiesCapacity.data()),
      class_of_(growth == Growth::kTight ? kTightClassOf.data() : kFewCopiesClassOf.data()) {
  static_assert(sizeof(Run) == 32 || sizeof(void*) != 8);
  static_assert(kFewCopiesCapacity.back() == kMaxBlockEntries &&
                kTightCapacity.back() == kMaxBlockEntries);
  const size_t classes = class_of_[kMaxBlockEntries] + size_t{1};
  for (size_t c = 0; c < classes; ++c)
    block_bytes_[c] = static_cast<uint32_t>(capacity_[c] * entry_bytes_);
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

uint32_t BlockPool::CapacityFor(uint32_t n) const {
  return capacity_[class_of_[n]];
}

uint32_t BlockPool::GrownPastBlocks(uint32_t capacity) const {
  return capacity + (growth_ == Growth::kTight ? capacity / 8 : capacity / 2);
}

void* BlockPool::AllocateBlock(uint32_t n) {
  const int c = class_of_[n];
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
  live_bytes_ -= block_bytes_[class_of_[n]];
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
