// FanList: the fans of one user, sorted by (follow time, fan id), read newest first.
//
// Why this design: most users have a handful of fans, a celebrity has millions, and both need a
// page at any depth in O(log n + limit) and an unfollow that does not cost O(fans). A list of
// one entry is a plain EntryArray (10 bytes); of 2 to 7, a ShortRun (engine/graph/
// short_run.h: bit-packed behind a 12-bit prefix, in 4-byte words); a longer one up to
// `chunk_entries` is one PackedRun (engine/graph/packed_run.h: entries bit-packed at the widths
// the list needs, about 7 bytes on a social graph). Past `chunk_entries` it becomes a
// FanChunks: a vector of sorted chunks (each a PackedRun of at most chunk_entries), the first
// key of each chunk for routing, and a Fenwick tree over chunk sizes for ranks. So
//   insert / erase / find by key:  O(log n + chunk_entries)
//   rank, page at any depth:       O(log n + limit)
// plus O(n / chunk_entries) for the rare chunk split, merge or removal (amortized over at least
// chunk_entries / 4 updates of that chunk). Appends at the newest end fill chunks completely;
// chunks that shrink below a quarter merge with a neighbour, and a list that shrinks below a
// quarter chunk goes back to one run. Entries carry the kMutual bit (the user follows that
// fan back), so fans and friends pages need no extra lookups for it. A short run below
// kPackMin: a packed run's 8-byte header and 10-byte units would make a list of a few fans
// larger than its entries.
//
// The handle is one 64-bit word: the address of the short list's block, or of its FanChunks,
// in 45 bits (engine/mem/packed_address.h), a bit saying which, and 18 bits above them. A
// short list has at most chunk_entries <= 1,024 entries: its size takes 11 of the 18 (and
// says which form it has), a packed one's entry width the other 7 (so the newest entry's
// address is known without reading the block's header). A chunked list keeps its size in
// all 18, read from its FanChunks only past 2^18 - 2, so counts stay one read for all but
// the largest.
//
// Entries come out of a packed run decoded: reads hand out copies (ForEach's argument is one),
// and the kMutual bit is changed by key (SetMutual), not through a pointer.
//
// Thread-safety: none; the owning graph serializes mutations, const reads may run concurrently.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/graph/entry_array.h"
#include "engine/graph/packed_run.h"
#include "engine/graph/short_run.h"
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
  // The entry with key `k`, if any.
  std::optional<EdgeEntry> Get(const EntryKey& k, const EntryOrder& order) const;
  // Sets the kMutual bit of the entry with key `k`; false when there is none.
  bool SetMutual(const EntryKey& k, bool mutual, const EntryOrder& order);
  // Whether a short list holds `peer` (linear scan). REQUIRES: IsShort().
  bool ShortContainsPeer(InternalId peer) const {
    const uint32_t n = short_size();
    if (n >= kPackMin) return packed_view().FindPeer(peer) < n;
    if (n >= kShortRunMin) return ShortRun(block(), n).FindPeer(peer) < n;
    return relgraph::FindPeer(small_data(), n, peer) < n;
  }
  // Short enough that scanning it beats looking `peer` up elsewhere.
  bool IsShort() const { return !chunked() && short_size() <= kShortScanMax; }
  static constexpr uint32_t kShortScanMax = 32;
  // The fewest entries a list keeps packed (below: plain, or a short run from 2).
  static constexpr uint32_t kPackMin = 8;
  // Hints the CPU to fetch where an insert of the newest entry reads and writes: a plain
  // list's entry, a short run's block, a packed one's header and newest entry.
  void PrefetchHead() const {
    if (chunked()) return;
    const uint32_t n = short_size();
    if (n >= kPackMin) {
      packed_view().PrefetchForAppend();
      return;
    }
    __builtin_prefetch(block());
    if (n >= kShortRunMin) __builtin_prefetch(block() + 60);
  }
  // Number of entries whose key is < k.
  size_t Rank(const EntryKey& k, const EntryOrder& order) const;
  // Copies up to `limit` entries with rank < end into `out`, newest first; returns the count.
  uint32_t CopyDescending(size_t end, uint32_t limit, EdgeEntry* out) const;
  // Calls fn(const EdgeEntry&) for every entry, oldest first (a copy, valid for the call).
  template <typename Fn>
  void ForEach(Fn&& fn) const;
  // Calls fn(const EdgeEntry* run, uint32_t n) for each stored run (the list, or each chunk),
  // oldest first, decoded into a scratch array that is valid for the call.
  template <typename Fn>
  void ForEachRun(Fn&& fn) const;

  void Clear(SlabAllocator& slab);
  // Heap beyond the slab blocks (the chunk directory); 0 when short. Inline: every change of
  // a fan list asks it twice (Graph keeps the sum).
  size_t MemoryBytes() const { return chunked() ? ChunkedMemoryBytes() : 0; }

 private:
  static constexpr uint64_t kChunkedBit = uint64_t{1} << kPackedAddressBits;
  static constexpr int kSizeShift = kPackedAddressBits + 1;
  static constexpr uint32_t kSizeSaturated = (1u << (64 - kSizeShift)) - 1;
  static constexpr int kShortSizeBits = 11;  // a short list's size; its entry width above
  static constexpr uint32_t kShortSizeMask = (1u << kShortSizeBits) - 1;

  // The 18 bits above the address and the chunked bit.
  uint32_t size_field() const { return static_cast<uint32_t>(word_ >> kSizeShift); }
  // REQUIRES: !chunked().
  uint32_t short_size() const { return size_field() & kShortSizeMask; }
  unsigned short_width() const { return size_field() >> kShortSizeBits; }
  // The plain form. REQUIRES: !chunked() and short_size() < kShortRunMin.
  EntryArray TakeSmall() {
    EntryArray a;
    a.Adopt(reinterpret_cast<EdgeEntry*>(UnpackBlockAddress(word_)), short_size());
    return a;
  }
  void PutSmall(EntryArray& a) {
    const uint32_t n = a.size();
    PutShortBlock(a.Release(), n, 0);
  }
  // The packed short list's handle, to change it (then PutPacked) or, const, to read it (a
  // PackedRun frees nothing by itself). REQUIRES: !chunked() and short_size() >= kPackMin.
  PackedRun packed_view() const {
    PackedRun r;
    r.Adopt(UnpackBlockAddress(word_), short_size(), short_width());
    return r;
  }
  void PutPacked(PackedRun& r) {
    const uint32_t n = r.size();
    const unsigned width = r.entry_width();
    PutShortBlock(r.Release(), n, width);
  }
  void PutShortBlock(const void* block, uint32_t n, unsigned width) {
    word_ = (block == nullptr ? 0 : PackBlockAddress(block)) |
            (uint64_t{n | (width << kShortSizeBits)} << kSizeShift);
  }
  // Replaces an empty short list by `n` entries in key order: plain, a short run or packed
  // by their number.
  void PutShort(const EdgeEntry* entries, uint32_t n, SlabAllocator& slab);
  // The whole short list, decoded.
  std::vector<EdgeEntry> DecodeShort() const;
  // A list below kPackMin (plain or short run), decoded into out[0, kPackMin); its size.
  // REQUIRES: !chunked() and short_size() < kPackMin.
  uint32_t DecodeSmall(EdgeEntry* out) const {
    const uint32_t n = short_size();
    if (n >= kShortRunMin) {
      ShortRun(block(), n).Decode(out);
    } else if (n == 1) {
      out[0] = *small_data();
    }
    return n;
  }
  // Frees a list below kPackMin and empties the handle. REQUIRES: as DecodeSmall.
  void ClearSmall(SlabAllocator& slab);
  // Points the handle at `chunks` and records their size (saturated).
  void PutChunks(FanChunks* chunks);
  char* block() const { return UnpackBlockAddress(word_); }
  // The plain form's entry.
  const EdgeEntry* small_data() const { return reinterpret_cast<const EdgeEntry*>(block()); }
  size_t ChunkedMemoryBytes() const;
  FanChunks* chunks() const { return reinterpret_cast<FanChunks*>(UnpackBlockAddress(word_)); }

  uint64_t word_ = 0;  // packed address | kChunkedBit | short size << kSizeShift
};
#pragma pack(pop)
static_assert(sizeof(FanList) == 8);
static_assert(kShortRunMax + 1 == FanList::kPackMin, "a list is short below kPackMin");

class FanChunks {
 public:
  // Takes a full short list, in key order, as the first chunk.
  FanChunks(const std::vector<EdgeEntry>& first, const FanContext& ctx);
  // Full chunks of chunk_entries (the last one partial) from entries in key order.
  static FanChunks* FromSorted(const EdgeEntry* entries, uint32_t n, const FanContext& ctx);

  uint32_t size() const { return total_; }
  void Insert(const EdgeEntry& e, const FanContext& ctx);
  bool Erase(const EntryKey& k, const FanContext& ctx);
  std::optional<EdgeEntry> Get(const EntryKey& k, const EntryOrder& order) const;
  bool SetMutual(const EntryKey& k, bool mutual, const EntryOrder& order);
  size_t Rank(const EntryKey& k, const EntryOrder& order) const;
  uint32_t CopyDescending(size_t end, uint32_t limit, EdgeEntry* out) const;
  // Every entry, in key order; frees the chunks.
  std::vector<EdgeEntry> Flatten(SlabAllocator& slab);
  void Clear(SlabAllocator& slab);
  size_t MemoryBytes() const;

  template <typename Fn>
  void ForEachRun(Fn&& fn) const {
    std::vector<EdgeEntry> scratch;
    for (const PackedRun& c : chunks_) {
      scratch.resize(c.size());
      c.Decode(scratch.data());
      fn(static_cast<const EdgeEntry*>(scratch.data()), c.size());
    }
  }
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const PackedRun& c : chunks_) {
      for (uint32_t i = 0; i < c.size(); ++i) {
        const EdgeEntry e = c.At(i);
        fn(e);
      }
    }
  }

 private:
  size_t Locate(const EntryKey& k) const;  // the chunk that holds, or would hold, key k
  void Split(size_t c, const FanContext& ctx);
  void MaybeMerge(size_t c, const FanContext& ctx);
  void RemoveChunk(size_t c, SlabAllocator& slab);
  // Recounts total_ and the Fenwick tree from the chunks' sizes (in the handles: no chunk is
  // read). Every structural change keeps first_ itself: reading each chunk's first key again
  // would take two cache misses a chunk (its header, the fan's record).
  void RebuildSizes();
  void FenwickAdd(size_t c, int delta);
  size_t Prefix(size_t c) const;  // entries in chunks [0, c)
  size_t ChunkOfRank(size_t rank, size_t* offset) const;

  FanChunks() = default;

  std::vector<PackedRun> chunks_;
  std::vector<EntryKey> first_;    // key of each chunk's first entry
  std::vector<uint32_t> fenwick_;  // 1-based Fenwick tree over chunk sizes
  uint32_t total_ = 0;
};

inline uint32_t FanList::size() const {
  if (!chunked()) return short_size();
  const uint32_t n = size_field();
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
  const uint32_t n = short_size();
  if (n >= kPackMin) {
    const PackedRun r = packed_view();
    for (uint32_t i = 0; i < n; ++i) {
      const EdgeEntry e = r.At(i);
      fn(e);
    }
    return;
  }
  EdgeEntry small[kPackMin];
  DecodeSmall(small);
  for (uint32_t i = 0; i < n; ++i) {
    const EdgeEntry e = small[i];
    fn(e);
  }
}

template <typename Fn>
void FanList::ForEachRun(Fn&& fn) const {
  if (chunked()) {
    chunks()->ForEachRun(fn);
  } else if (short_size() >= kPackMin) {
    const std::vector<EdgeEntry> all = DecodeShort();
    fn(static_cast<const EdgeEntry*>(all.data()), short_size());
  } else if (short_size() > 0) {
    EdgeEntry small[kPackMin];
    const uint32_t n = DecodeSmall(small);
    fn(static_cast<const EdgeEntry*>(small), n);
  }
}

}  // namespace relgraph
