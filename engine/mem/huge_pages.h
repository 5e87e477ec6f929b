// Memory for the engine's large arrays, backed by transparent huge pages where the kernel
// offers them (madvise mode). Why: the graph is read at random; with 4 KiB pages nearly every
// access to a 100+ MiB structure also misses the TLB, which costs about a third of a lookup on
// the machines we measured. Small requests use the ordinary heap.
//
// Thread-safety: the functions are thread-safe; HugePageAllocator is stateless.
#pragma once

#include <cstddef>
#include <memory>

namespace relgraph {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// Allocates `bytes` (rounded up to 2 MiB when large) and advises huge pages. Never returns null
// (throws std::bad_alloc like operator new).
void* AllocateLarge(size_t bytes);
void FreeLarge(void* p, size_t bytes);
// Asks the kernel to fault in [p, p + bytes) writable without changing its contents
// (MADV_POPULATE_WRITE), so it is safe while other threads use the range. 0 on success; -1
// when the kernel cannot (before Linux 5.14), which callers treat as "fault as you go".
int PopulateForWrite(void* p, size_t bytes);

// std::allocator replacement for vectors that grow large (user table, id map).
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT
  T* allocate(size_t n) { return static_cast<T*>(AllocateLarge(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { FreeLarge(p, n * sizeof(T)); }
  friend bool operator==(const HugePageAllocator&, const HugePageAllocator&) { return true; }
};

}  // namespace relgraph
