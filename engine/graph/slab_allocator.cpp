#include "engine/graph/slab_allocator.h"

#include <algorithm>
#include <array>

#include "engine/mem/huge_pages.h"

namespace relgraph {
namespace {

// Capacities in entries: every size up to 8, then eight classes per doubling (steps of
// 1.06-1.125x, so a list's slack is at most an eighth of its entries, ~6% on average). The
// last one bounds slab-allocated blocks.
constexpr std::array<uint32_t, 64> MakeClassCapacities() {
  std::array<uint32_t, 64> c{};
  size_t i = 0;
  for (uint32_t n = 1; n <= 8; ++n) c[i++] = n;
  for (uint32_t base = 8; base < 1024; base *= 2) {
    for (uint32_t k = 1; k <= 8; ++k) c[i++] = base + base / 8 * k;
  }
  return c;
}
constexpr std::array<uint32_t, 64> kClassCapacity = MakeClassCapacities();
static_assert(kClassCapacity.back() == 1024);
constexpr size_t kSlabBytes = kHugePageBytes;
constexpr uint32_t kLargestClass = kClassCapacity.back();
static_assert(kLargestClass == SlabAllocator::kLargestClassCapacity);

// class index of every size up to the largest class: one load instead of a search.
constexpr std::array<uint8_t, kLargestClass + 1> MakeClassTable() {
  std::array<uint8_t, kLargestClass + 1> t{};
  uint8_t c = 0;
  for (uint32_t n = 0; n <= kLargestClass; ++n) {
    while (kClassCapacity[c] < n) ++c;
    t[n] = c;
  }
  return t;
}
constexpr std::array<uint8_t, kLargestClass + 1> kClassOf = MakeClassTable();

}  // namespace

SlabAllocator::~SlabAllocator() {
  EndPrefault();
  for (char* slab : slabs_) FreeLarge(slab, kSlabBytes);
}

void SlabAllocator::BeginPrefault(size_t bytes) {
  EndPrefault();
  const size_t slabs = (bytes + kSlabBytes - 1) / kSlabBytes;
  if (slabs == 0) return;
  // One mapping; each slab of it is unmapped on its own later (munmap of part of a mapping).
  char* arena = static_cast<char*>(AllocateLarge(slabs * kSlabBytes));
  for (size_t i = slabs; i-- > 0;) spare_.push_back(arena + i * kSlabBytes);
  stop_prefault_ = false;
  prefault_ = std::thread([this, arena, slabs] {
    constexpr size_t kStep = 4 * kSlabBytes;
    for (size_t at = 0; at < slabs * kSlabBytes && !stop_prefault_; at += kStep) {
      // Fails on kernels before 5.14 (EINVAL): then the loader simply faults as it goes.
      if (PopulateForWrite(arena + at, std::min(kStep, slabs * kSlabBytes - at)) != 0) break;
    }
  });
}

void SlabAllocator::EndPrefault() {
  if (prefault_.joinable()) {
    stop_prefault_ = true;
    prefault_.join();
  }
  for (char* slab : spare_) FreeLarge(slab, kSlabBytes);
  spare_.clear();
}

int SlabAllocator::ClassIndex(uint32_t n) {
  return n <= kLargestClass ? kClassOf[n] : -1;
}

uint32_t SlabAllocator::CapacityFor(uint32_t n) {
  const int c = ClassIndex(n);
  if (c >= 0) return kClassCapacity[c];
  // Large blocks grow by 1.5x steps above the ladder so growth stays amortized O(1).
  uint32_t cap = kClassCapacity.back();
  while (cap < n) cap += cap / 2;
  return cap;
}

// Blocks are multiples of 4 bytes so that a FollowingList's u32 arrays are aligned.
void* SlabAllocator::AllocateBlock(uint32_t n) {
  live_bytes_ += BlockBytes(CapacityFor(n));
  const int c = ClassIndex(n);
  if (c < 0) {
    const size_t bytes = BlockBytes(CapacityFor(n));
    reserved_bytes_ += bytes;
    return ::operator new(bytes);
  }
  return CarveBlock(entries_, c);
}

void* SlabAllocator::AllocateWords(uint32_t n) {
  live_bytes_ += WordBlockBytes(n);
  return CarveBlock(words_, ClassIndex(std::max<uint32_t>(n, 2)));
}

char* SlabAllocator::CarveBlock(Ladder& ladder, int c) {
  if (ladder.free.empty()) ladder.free.resize(kClassCapacity.size(), nullptr);
  if (ladder.free[c] != nullptr) {
    char* block = ladder.free[c];
    std::memcpy(&ladder.free[c], block, sizeof(char*));
    return block;
  }
  const size_t block_bytes = ladder.BlockBytes(kClassCapacity[c]);
  if (static_cast<size_t>(ladder.bump_end - ladder.bump) < block_bytes) {
    // The unused tail of the old slab is too small for this block: hand it, cut into the
    // largest classes that fit, to their free lists so no byte is stranded (a tail below
    // the smallest block that holds a link stays unused).
    for (int k = c - 1; k >= 0; --k) {
      const size_t bytes = ladder.BlockBytes(kClassCapacity[k]);
      if (bytes < sizeof(char*)) break;
      while (static_cast<size_t>(ladder.bump_end - ladder.bump) >= bytes) {
        PushFree(ladder, k, ladder.bump);
        ladder.bump += bytes;
      }
    }
    if (spare_.empty()) {
      slabs_.push_back(static_cast<char*>(AllocateLarge(kSlabBytes)));
    } else {
      slabs_.push_back(spare_.back());
      spare_.pop_back();
    }
    reserved_bytes_ += kSlabBytes;
    ladder.bump = slabs_.back();
    ladder.bump_end = ladder.bump + kSlabBytes - ladder.slab_tail;
  }
  char* block = ladder.bump;
  ladder.bump += block_bytes;
  return block;
}

void SlabAllocator::PushFree(Ladder& ladder, int c, char* block) {
  // Blocks are 2-byte aligned and at least 8 bytes: room for the link, stored unaligned.
  std::memcpy(block, &ladder.free[c], sizeof(char*));
  ladder.free[c] = block;
}

void SlabAllocator::FreeBlock(void* block, uint32_t n) {
  if (block == nullptr) return;
  live_bytes_ -= BlockBytes(CapacityFor(n));
  const int c = ClassIndex(n);
  if (c < 0) {
    reserved_bytes_ -= BlockBytes(CapacityFor(n));
    ::operator delete(block);
    return;
  }
  PushFree(entries_, c, static_cast<char*>(block));
}

void SlabAllocator::FreeWords(void* block, uint32_t n) {
  if (block == nullptr) return;
  live_bytes_ -= WordBlockBytes(n);
  PushFree(words_, ClassIndex(std::max<uint32_t>(n, 2)), static_cast<char*>(block));
}

}  // namespace relgraph
