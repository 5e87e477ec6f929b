// FollowingList: the users one user follows, sorted by (follow time, followee id), in one slab
// block in one of three forms by the list's size n:
//
//   plain  (n = 1):         u32 peer | u32 ts_lo | u16 ts_hi_flags, the block AllocateBlock(1)
//   short  (2 <= n < 8):    a ShortRun (engine/graph/short_run.h): every field bit-packed
//                           behind a 12-bit prefix, the block AllocateWords(its words)
//   packed (n >= kPackMin): u64 header | u32 peer[P] | times: P fields of W = 1 + time_bits
//                           bits, field i at bit i * W: kMutual (1) | time - base (time_bits)
//     header bits 0..41 base (the oldest time), 42..47 time_bits (0..42), 48..63 P (0xffff:
//     P >= 0xffff, worked out from the block's class); the block is AllocateBlock(
//     PackedUnits(n, time_bits)) and P the most entries its class holds at that width
//
// Why this design: the hottest operation on a following list is "is b in it?" (every follow's
// duplicate check, every relation), and lists reach the follow cap (1,000). A contiguous peer
// array is scanned 8-16 ids per SIMD compare in the packed form. Times are needed only by
// pages, unfollows and inserts, so they take the bits the list's span needs: a list's follows
// span months or years, 30-40 bits where a plain entry spends 48 (with the kMutual bit).
// Below kPackMin the 8-byte header would cost more than it saves, and most users follow only
// a few: those lists are short runs, whose scan for a peer decodes at most 7 fields.
//
// Changes: an insert into a packed list that fits the width and the block writes in place
// (peers memmove, times a bit move); one that does not re-encodes the list (O(n), n <= the
// follow cap); an erase keeps the width and the base. A short run appends its newest entry
// in place when its widths hold it and is encoded again at any other change (at most 7
// entries). Blocks follow the slab's class ladders, so growth and
// shrinkage stay amortized O(1) copies.
//
// The handle is one 64-bit word: the block's address in 45 bits (engine/mem/packed_address.h)
// and the size in the 19 above, so a list has at most kMaxFollowingLimit (2^19 - 1) entries.
//
// Thread-safety: none; the owning graph serializes mutations. 8 bytes, 4-byte aligned.
#pragma once

#include <cstdint>
#include <cstring>

#include "engine/graph/edge_entry.h"
#include "engine/graph/packed_bits.h"
#include "engine/graph/short_run.h"
#include "engine/graph/slab_allocator.h"
#include "engine/mem/packed_address.h"

namespace relgraph {

#pragma pack(push, 4)
class FollowingList {
 public:
  uint32_t size() const { return static_cast<uint32_t>(word_ >> kPackedAddressBits); }
  bool empty() const { return size() == 0; }
  // The most entries a list can hold (the size's bits in the handle).
  static constexpr uint32_t kMaxSize = (1u << (64 - kPackedAddressBits)) - 1;
  // The fewest entries whose times are packed.
  static constexpr uint32_t kPackMin = 8;

  InternalId PeerAt(size_t i) const {
    if (is_short_run()) return short_run().Peer(static_cast<uint32_t>(i));
    return peers()[i];
  }
  TimestampMs TsAt(size_t i) const;
  bool MutualAt(size_t i) const;
  EdgeEntry EntryAt(size_t i) const { return MakeEntry(PeerAt(i), TsAt(i), MutualAt(i)); }
  void SetMutual(size_t i, bool mutual);
  // Index of `peer`, or size(). Vectorized linear scan.
  size_t FindPeer(InternalId peer) const;
  // Number of entries whose key is < k.
  size_t Rank(const EntryKey& k, const EntryOrder& order) const;
  // Inserts at its place in key order. REQUIRES: peer absent.
  void Insert(const EdgeEntry& e, const EntryOrder& order, SlabAllocator& slab);
  void EraseAt(size_t pos, SlabAllocator& slab);
  // Appends `n` entries that sort after every present one, in order (bulk loads).
  void AppendRun(const EdgeEntry* entries, uint32_t n, SlabAllocator& slab);
  void Clear(SlabAllocator& slab);
  // Copies up to `limit` entries with rank < end into `out`, newest first; returns the count.
  uint32_t CopyDescending(size_t end, uint32_t limit, EdgeEntry* out) const;
  // The whole list into out[0, size()), oldest first.
  void Decode(EdgeEntry* out) const;
  // Bytes of the block as the slab counts it (0 when empty).
  size_t BlockBytes() const;

  // For prefetching: the start of the block (a packed list's header and first peers).
  const void* peers_address() const { return block(); }
  // Hints the CPU to fetch what a search and an insert of the newest entry read: the start
  // of the block and the newest entry's peer; a short run's end too (it may cross a line).
  void PrefetchForInsert() const {
    __builtin_prefetch(block());
    const uint32_t n = size();
    if (n < kShortRunMin) return;
    if (n < kPackMin) {
      __builtin_prefetch(block() + 60);
      return;
    }
    __builtin_prefetch(peers() + n - 1);
  }
  // Once the block's start is cached: hints the CPU to fetch a packed list's newest time.
  void PrefetchNewestTime() const {
    const uint32_t n = size();
    if (n < kPackMin) return;
    const Packed p = packed();
    __builtin_prefetch(p.times + (uint64_t{n} * p.width - 1) / 8);
  }

  // The 10-byte slab units of a packed block for n entries with `time_bits` of time.
  static uint32_t PackedUnits(uint32_t n, unsigned time_bits) {
    return static_cast<uint32_t>(
        (8 + 4 * uint64_t{n} + (uint64_t{n} * (1 + time_bits) + 7) / 8 + 9) / 10);
  }
  // P: the most entries a packed block of the class of PackedUnits(n, time_bits) holds.
  static uint32_t PackedCapacity(uint32_t n, unsigned time_bits);

 private:
  // A packed list's header, read once for a whole operation.
  struct Packed {
    char* times = nullptr;  // the bit fields; 8 readable bytes in front (the peers)
    TimestampMs base = 0;
    unsigned time_bits = 0, width = 1;
    uint32_t capacity = 0;  // P

    // Entry i, given the list's peers.
    EdgeEntry Entry(const uint32_t* peers, uint32_t i) const;
    TimestampMs Ts(size_t i) const {
      if (time_bits == 0) return base;
      return base + static_cast<TimestampMs>(
                        LoadBitsEndingAt(times, (uint64_t{i} + 1) * width, time_bits));
    }
  };
  static constexpr uint32_t kCapacitySaturated = 0xffff;

  char* block() const { return UnpackBlockAddress(word_); }
  bool is_packed() const { return size() >= kPackMin; }
  bool is_short_run() const { return size() >= kShortRunMin && size() < kPackMin; }
  ShortRun short_run() const { return ShortRun(block(), size()); }
  // The plain and packed forms only.
  uint32_t* peers() const { return reinterpret_cast<uint32_t*>(block() + (is_packed() ? 8 : 0)); }
  // The plain form only: its one entry's time.
  uint32_t* ts_lo() const { return reinterpret_cast<uint32_t*>(block() + 4); }
  uint16_t* ts_hi() const { return reinterpret_cast<uint16_t*>(block() + 8); }
  // Packed form only.
  Packed packed() const;
  // Writes a packed block's header (the layout above).
  static void PutHeader(char* block, TimestampMs base, unsigned time_bits, uint32_t capacity);
  // Rank with the time of entry i read by ts_of(i).
  template <typename TsOf>
  size_t RankBy(const EntryKey& k, const EntryOrder& order, TsOf&& ts_of) const;

  void Set(char* block, uint32_t size) {
    word_ =
        (block == nullptr ? 0 : PackBlockAddress(block)) | (uint64_t{size} << kPackedAddressBits);
  }
  // Replaces the list by its one plain entry `e`. REQUIRES: the list is empty.
  void PutPlain(const EdgeEntry& e, SlabAllocator& slab);
  // Frees the block, whatever its form, and empties the handle.
  void FreeBlock(SlabAllocator& slab);
  // Replaces the list by `n` entries in key order: plain, short run or packed by n, packed
  // at the width they need. REQUIRES: `entries` is not in the list's block.
  void Encode(const EdgeEntry* entries, uint32_t n, SlabAllocator& slab);
  // Packed form: moves the list to a block for `n` entries at the same width, keeping the
  // first min(size, n) entries. REQUIRES: n >= kPackMin.
  void RelayoutPacked(const Packed& p, uint32_t n, SlabAllocator& slab);

  uint64_t word_ = 0;  // the block's packed address | size << kPackedAddressBits
};
#pragma pack(pop)
static_assert(sizeof(FollowingList) == 8);
static_assert(kShortRunMax + 1 == FollowingList::kPackMin, "a list is short below kPackMin");
static_assert(kMaxFollowingLimit <= FollowingList::kMaxSize);

inline FollowingList::Packed FollowingList::packed() const {
  Packed p;
  const char* b = block();
  uint64_t h;
  std::memcpy(&h, b, sizeof(h));
  p.base = static_cast<TimestampMs>(h & ((uint64_t{1} << 42) - 1));
  p.time_bits = static_cast<unsigned>((h >> 42) & 63);
  p.width = 1 + p.time_bits;
  p.capacity = static_cast<uint32_t>(h >> 48);
  if (p.capacity == kCapacitySaturated) p.capacity = PackedCapacity(size(), p.time_bits);
  p.times = const_cast<char*>(b) + 8 + 4 * size_t{p.capacity};
  return p;
}

inline TimestampMs FollowingList::TsAt(size_t i) const {
  if (is_packed()) return packed().Ts(i);
  if (is_short_run()) return short_run().Ts(static_cast<uint32_t>(i));
  return static_cast<TimestampMs>((static_cast<uint64_t>(*ts_hi() & kTsHiMask) << 32) | *ts_lo());
}

inline bool FollowingList::MutualAt(size_t i) const {
  if (is_short_run()) return short_run().Mutual(static_cast<uint32_t>(i));
  if (!is_packed()) return (*ts_hi() & kMutualFlag) != 0;
  const Packed p = packed();
  return LoadBits(p.times, uint64_t{i} * p.width, 1) != 0;
}

inline void FollowingList::SetMutual(size_t i, bool mutual) {
  if (is_short_run()) {
    short_run().SetMutual(block(), static_cast<uint32_t>(i), mutual);
    return;
  }
  if (!is_packed()) {
    uint16_t& h = *ts_hi();
    h = static_cast<uint16_t>((h & ~kMutualFlag) | (mutual ? kMutualFlag : 0));
    return;
  }
  const Packed p = packed();
  StoreBits(p.times, uint64_t{i} * p.width, 1, mutual ? 1 : 0);
}

}  // namespace relgraph
