// ChunkedArray<T>: an append-only array stored in 2 MiB huge-page chunks.
//
// Why: the user table and the external-id array hold millions of elements and are read at
// random. A std::vector would leave up to half its capacity as slack (resident once huge pages
// back it) and copy everything on growth; chunks grow by 2 MiB with no copy. Indexing costs
// one extra load from a small, cache-resident chunk table.
//
// Thread-safety: const methods may run concurrently with each other; growth needs exclusion.
// References stay valid across growth (chunks never move).
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

#include "engine/mem/huge_pages.h"

namespace relgraph {

template <typename T>
class ChunkedArray {
 public:
  // A function, not a constant, so the array can be declared while T is incomplete.
  static constexpr size_t PerChunk() { return kHugePageBytes / sizeof(T); }

  ChunkedArray() = default;
  ChunkedArray(const ChunkedArray&) = delete;
  ChunkedArray& operator=(const ChunkedArray&) = delete;
  ~ChunkedArray() {
    for (size_t i = 0; i < size_; ++i) (*this)[i].~T();
    for (T* c : chunks_) FreeLarge(c, kHugePageBytes);
  }

  size_t size() const { return size_; }
  T& operator[](size_t i) { return chunks_[i / PerChunk()][i % PerChunk()]; }
  const T& operator[](size_t i) const { return chunks_[i / PerChunk()][i % PerChunk()]; }

  void push_back(const T& value) { new (Grow()) T(value); }
  // Appends a value-initialized element (for types that cannot be copied).
  T& emplace_back() { return *new (Grow()) T{}; }
  // Grows to n elements, value-initialized. REQUIRES: n >= size().
  void grow_to(size_t n) {
    while (size_ < n) push_back(T{});
  }
  size_t MemoryBytes() const { return chunks_.size() * kHugePageBytes; }

 private:
  // Room for one more element at the end; size() counts it.
  void* Grow() {
    if (size_ == chunks_.size() * PerChunk()) {
      chunks_.push_back(static_cast<T*>(AllocateLarge(kHugePageBytes)));
    }
    return &(*this)[size_++];
  }

  std::vector<T*> chunks_;
  size_t size_ = 0;
};

}  // namespace relgraph
