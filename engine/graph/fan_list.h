// FanList: the fans of one user, sorted by (follow time, fan id), read newest first.
//
// Why this design: most users have a handful of fans, a celebrity has millions, and both need a
// page at any depth in O(log n + limit) and an unfollow that does not cost O(fans). A short list
// is one EntryArray (exactly like a following list). Past `chunk_entries` entries it becomes a
// FanChunks: a vector of sorted chunks (each an EntryArray of at most chunk_entries), the first
// key of each chunk for routing, and a Fenwick tree over chunk sizes for ranks. So
//   insert / erase / find by key:  O(log n + chunk_entries)
//   rank, page at any depth:       O(log n + limit)
// plus O(n / chunk_entries) for the rare chunk split, merge or removal (amortized over at least
// chunk_entries / 4 updates of that chunk). Appends at the newest end fill chunks completely;
// chunks that shrink below a quarter merge with a neighbour, and a list that shrinks below a
// quarter chunk goes back to one array. Entries carry the kMutual bit (the user follows that
// fan back), so fans and friends pages need no extra lookups for it.
//
// The handle is one 64-bit word: the address of the short list's entries, or of its FanChunks,
// in 45 bits (engine/mem/packed_address.h), a bit saying which, and the size in the 18 above
// (a short list has at most chunk_entries <= 1,024 entries; a chunked one's size is read from
// its FanChunks only past 2^18 - 2, so that counts stay one read for all but the largest).
//
// Thread-safety: none; the owning graph serializes mutations, const reads may run concurrently.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/graph/entry_array.h"
#include "engine/mem/packed_address.h"

namespace relgraph {

// What fan-list mutations need from the owning graph.
struct FanContext {
  SlabAllocator& slab;
  EntryOrder order;
  uint32_t chunk_entries;  // >= 4
};

class FanChunks;

#pragma pack(push, 4)
class FanList {
 public:
  uint32_t size() const;
  bool chunked() const { return (word_ & kChunkedBit) != 0; }

  // Inserts `e`. REQUIRES: no entry with the same key.
  void Insert(const EdgeEntry& e, const FanContext& ctx);
  // Fills an empty list with `n` entries already in key order (bulk loads).
  // REQUIRES: size() == 0; entries strictly increasing by key.
  void BuildFromSorted(const EdgeEntry* entries, uint32_t n, const FanContext& ctx);
  // Erases the entry with key `k`; false when there is none.
  bool Erase(const EntryKey& k, const FanContext& ctx);
  // The entry with key `k`, or nullptr. The pointer is valid until the next mutation.
  EdgeEntry* Find(const EntryKey& k, const EntryOrder& order);
  // Whether a short list holds `peer` (linear scan). REQUIRES: IsShort().
  bool ShortContainsPeer(InternalId peer) const {
    const uint32_t n = short_size();
    return relgraph::FindPeer(small_data(), n, peer) < n;
  }
  // Short enough that scanning it beats looking `peer` up elsewhere.
  bool IsShort() const { return !chunked() && short_size() <= kShortScanMax; }
  static constexpr uint32_t kShortScanMax = 32;
  // Hints the CPU to fetch where an append of the newest entry would write.
  void PrefetchTail() const {
    if (chunked()) return;
    const uint32_t n = short_size();
    __builtin_prefetch(small_data() + (n == 0 ? 0 : n - 1));
  }
  // Number of entries whose key is < k.
  size_t Rank(const EntryKey& k, const EntryOrder& order) const;
  // Copies up to `limit` entries with rank < end into `out`, newest first; returns the count.
  uint32_t CopyDescending(size_t end, uint32_t limit, EdgeEntry* out) const;
  // Calls fn(const EdgeEntry&) for every entry, oldest first.
  template <typename Fn>
  void ForEach(Fn&& fn) const;
  // Calls fn(const EdgeEntry* run, uint32_t n) for each stored run (the list, or each chunk),
  // oldest first.
  template <typename Fn>
  void ForEachRun(Fn&& fn) const;

  void Clear(SlabAllocator& slab);
  size_t MemoryBytes() const;  // heap beyond the slab blocks (chunk directory); 0 when short

 private:
  static constexpr uint64_t kChunkedBit = uint64_t{1} << kPackedAddressBits;
  static constexpr int kSizeShift = kPackedAddressBits + 1;
  static constexpr uint32_t kSizeSaturated = (1u << (64 - kSizeShift)) - 1;

  uint32_t short_size() const { return static_cast<uint32_t>(word_ >> kSizeShift); }
  EntryArray TakeSmall() {
    EntryArray a;
    a.Adopt(reinterpret_cast<EdgeEntry*>(UnpackBlockAddress(word_)), short_size());
    return a;
  }
  void PutSmall(EntryArray& a) {
    const uint32_t n = a.size();
    EdgeEntry* entries = a.Release();
    word_ = (entries == nullptr ? 0 : PackBlockAddress(entries)) | (uint64_t{n} << kSizeShift);
  }
  // Points the handle at `chunks` and records their size (saturated).
  void PutChunks(FanChunks* chunks);
  const EdgeEntry* small_data() const {
    return reinterpret_cast<const EdgeEntry*>(UnpackBlockAddress(word_));
  }
  FanChunks* chunks() const { return reinterpret_cast<FanChunks*>(UnpackBlockAddress(word_)); }

  uint64_t word_ = 0;  // packed address | kChunkedBit | short size << kSizeShift
};
#pragma pack(pop)
static_assert(sizeof(FanList) == 8);

class FanChunks {
 public:
  // Takes a full short list as the first chunk.
  explicit FanChunks(EntryArray first, const EntryOrder& order);
  // Full chunks of chunk_entries (the last one partial) from entries in key order.
  static FanChunks* FromSorted(const EdgeEntry* entries, uint32_t n, const FanContext& ctx);

  uint32_t size() const { return total_; }
  void Insert(const EdgeEntry& e, const FanContext& ctx);
  bool Erase(const EntryKey& k, const FanContext& ctx);
  EdgeEntry* Find(const EntryKey& k, const EntryOrder& order);
  size_t Rank(const EntryKey& k, const EntryOrder& order) const;
  uint32_t CopyDescending(size_t end, uint32_t limit, EdgeEntry* out) const;
  // Moves every entry into one array (REQUIRES: size() <= array capacity needs) and frees chunks.
  EntryArray Flatten(SlabAllocator& slab);
  void Clear(SlabAllocator& slab);
  size_t MemoryBytes() const;

  template <typename Fn>
  void ForEachRun(Fn&& fn) const {
    for (const EntryArray& c : chunks_) fn(c.data(), c.size());
  }
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const EntryArray& c : chunks_) {
      for (uint32_t i = 0; i < c.size(); ++i) fn(c[i]);
    }
  }

 private:
  size_t Locate(const EntryKey& k) const;  // the chunk that holds, or would hold, key k
  void Split(size_t c, const FanContext& ctx);
  void MaybeMerge(size_t c, const FanContext& ctx);
  void RemoveChunk(size_t c, SlabAllocator& slab);
  void RebuildIndex(const EntryOrder& order);
  void FenwickAdd(size_t c, int delta);
  size_t Prefix(size_t c) const;  // entries in chunks [0, c)
  size_t ChunkOfRank(size_t rank, size_t* offset) const;

  FanChunks() = default;

  std::vector<EntryArray> chunks_;
  std::vector<EntryKey> first_;    // key of each chunk's first entry
  std::vector<uint32_t> fenwick_;  // 1-based Fenwick tree over chunk sizes
  uint32_t total_ = 0;
};

inline uint32_t FanList::size() const {
  const uint32_t n = short_size();
  return n == kSizeSaturated ? chunks()->size() : n;
}

inline void FanList::PutChunks(FanChunks* chunks) {
  word_ = PackBlockAddress(chunks) | kChunkedBit |
          (uint64_t{std::min(chunks->size(), kSizeSaturated)} << kSizeShift);
}

template <typename Fn>
void FanList::ForEach(Fn&& fn) const {
  if (chunked()) {
    chunks()->ForEach(fn);
    return;
  }
  const EdgeEntry* a = small_data();
  const uint32_t n = short_size();
  for (uint32_t i = 0; i < n; ++i) fn(a[i]);
}

template <typename Fn>
void FanList::ForEachRun(Fn&& fn) const {
  if (chunked()) {
    chunks()->ForEachRun(fn);
  } else if (short_size() > 0) {
    fn(small_data(), short_size());
  }
}

}  // namespace relgraph
