// Large blocks come straight from mmap and go back with munmap, so a freed table (say, the id
// map's old slots after a rehash) leaves the process at once instead of lingering in malloc's
// heap, where it would stay resident and skew every memory figure.
#include "engine/mem/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <new>

namespace relgraph {
namespace {

// From here up a block is mapped on its own (4 KiB pages below kHugePageBytes): a table that
// doubles through these sizes (the id map's, the user table's) would otherwise leave each
// old copy resident in malloc's heap once freed, megabytes that no structure accounts for.
constexpr size_t kMappedBytes = size_t{64} << 10;
constexpr size_t kPageBytes = size_t{4} << 10;

size_t RoundUp(size_t bytes) {
  return (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
}

}  // namespace

void* AllocateLarge(size_t bytes) {
  if (bytes < kMappedBytes) return ::operator new(bytes);
  if (bytes < kHugePageBytes) {
    void* p = mmap(nullptr, (bytes + kPageBytes - 1) & ~(kPageBytes - 1), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return p;
  }
  const size_t rounded = RoundUp(bytes);
  // Over-map by one huge page, then trim both ends to a 2 MiB-aligned range.
  const size_t mapped = rounded + kHugePageBytes;
  void* raw = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kHugePageBytes - 1) & ~(uintptr_t{kHugePageBytes} - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const uintptr_t end = start + mapped;
  if (end > aligned + rounded)
    munmap(reinterpret_cast<void*>(aligned + rounded), end - aligned - rounded);
  void* p = reinterpret_cast<void*>(aligned);
  madvise(p, rounded, MADV_HUGEPAGE);  // advisory: fine if the kernel says no
  return p;
}

int PopulateForWrite(void* p, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  return madvise(p, bytes, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)bytes;
  return -1;
#endif
}

void FreeLarge(void* p, size_t bytes) {
  if (p == nullptr) return;
  if (bytes < kMappedBytes) {
    ::operator delete(p);
  } else if (bytes < kHugePageBytes) {
    munmap(p, (bytes + kPageBytes - 1) & ~(kPageBytes - 1));
  } else {
    munmap(p, RoundUp(bytes));
  }
}

}  // namespace relgraph
