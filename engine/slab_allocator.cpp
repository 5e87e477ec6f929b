#include "engine/slab_allocator.h"

#include <algorithm>
#include <array>

namespace relgraph {
namespace {

// Capacities in entries; about x1.25-1.5 per step. The last one bounds slab-allocated blocks.
constexpr std::array<uint32_t, 26> kClassCapacity = {
    1,   2,   3,   4,   5,   6,   8,    10,   12,   16,   20,   24,   32,
    40,  48,  64,  80,  96,  128, 160,  192,  256,  384,  512,  768,  1024};
constexpr size_t kSlabBytes = 1 << 20;

}  // namespace

SlabAllocator::~SlabAllocator() = default;

int SlabAllocator::ClassIndex(uint32_t n) {
  auto it = std::lower_bound(kClassCapacity.begin(), kClassCapacity.end(), n);
  return it == kClassCapacity.end() ? -1 : static_cast<int>(it - kClassCapacity.begin());
}

uint32_t SlabAllocator::CapacityFor(uint32_t n) {
  const int c = ClassIndex(n);
  if (c >= 0) return kClassCapacity[c];
  // Large blocks grow by 1.5x steps above the ladder so growth stays amortized O(1).
  uint32_t cap = kClassCapacity.back();
  while (cap < n) cap += cap / 2;
  return cap;
}

EdgeEntry* SlabAllocator::Allocate(uint32_t n) {
  live_bytes_ += size_t{CapacityFor(n)} * sizeof(EdgeEntry);
  const int c = ClassIndex(n);
  if (c < 0) {
    const size_t bytes = size_t{CapacityFor(n)} * sizeof(EdgeEntry);
    reserved_bytes_ += bytes;
    return static_cast<EdgeEntry*>(::operator new(bytes));
  }
  if (classes_.empty()) classes_.resize(kClassCapacity.size());
  ClassState& cls = classes_[c];
  if (cls.free != nullptr) {
    char* block = cls.free;
    std::memcpy(&cls.free, block, sizeof(char*));
    return reinterpret_cast<EdgeEntry*>(block);
  }
  const size_t block_bytes = size_t{kClassCapacity[c]} * sizeof(EdgeEntry);
  if (cls.bump == nullptr || static_cast<size_t>(cls.bump_end - cls.bump) < block_bytes) {
    slabs_.emplace_back(new char[kSlabBytes]);
    reserved_bytes_ += kSlabBytes;
    cls.bump = slabs_.back().get();
    cls.bump_end = cls.bump + kSlabBytes;
  }
  char* block = cls.bump;
  cls.bump += block_bytes;
  return reinterpret_cast<EdgeEntry*>(block);
}

void SlabAllocator::Free(EdgeEntry* block, uint32_t n) {
  if (block == nullptr) return;
  live_bytes_ -= size_t{CapacityFor(n)} * sizeof(EdgeEntry);
  const int c = ClassIndex(n);
  if (c < 0) {
    reserved_bytes_ -= size_t{CapacityFor(n)} * sizeof(EdgeEntry);
    ::operator delete(block);
    return;
  }
  // Blocks are 2-byte aligned and at least 10 bytes: room for the link, stored unaligned.
  char* raw = reinterpret_cast<char*>(block);
  std::memcpy(raw, &classes_[c].free, sizeof(char*));
  classes_[c].free = raw;
}

}  // namespace relgraph
