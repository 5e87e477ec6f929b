// FollowingList: the users one user follows, sorted by (follow time, followee id), in one slab
// block in one of three forms by the list's size n:
//
//   plain  (n = 1):         u32 peer | u32 ts_lo | u16 ts_hi_flags, the block AllocateBlock(1)
//   short  (2 <= n < 8):    a ShortRun (engine/graph/short_run.h): every field bit-packed
//                           behind a 12-bit prefix, the block AllocateWords(its words)
//   packed (n >= kPackMin): u64 header | u32 peer[n] | u32 spare[S] | the times and kMutual
//                           bits as gaps (engine/graph/gap_groups.h)
//     header bits 0..41 base (at most the oldest time), 42..47 the anchors' time_bits,
//     48..53 the gap positions' end_bits, 54..63 S: unused peer slots (at most 1023). The
//     block is the slab's for the content's bytes (8 + 4(n + S) + the gap area's bytes): a
//     word block (AllocateWords) while the word ladder has a class for it, else 10-byte units
//     (AllocateBlock). When the gap area has to move up for a new peer, it takes half its
//     block's slack as spare slots, so most appends move nothing.
//
// Why this design: the hottest operation on a following list is "is b in it?" (every follow's
// duplicate check, every relation), and lists reach the follow cap (1,000). A contiguous peer
// array is scanned 8-16 ids per SIMD compare in the packed form. Times are needed only by
// pages, unfollows and inserts, and a user's follows come in sessions: coded as gaps from
// one follow to the next they take a few bits each where a distance from the oldest takes
// the span's 25-40 (GapGroups). Below kPackMin the 8-byte header would cost more than it
// saves, and most users follow only a few: those lists are short runs, whose scan for a peer
// decodes at most 7 fields.
//
// Changes: the newest entry appends in place when the widths and the block hold it (its peer
// in a spare slot, a nibble varint at the stream's end); an erase works in place too (the
// peers after it move down, its slot becomes spare, GapGroups::Erase). Any other insert,
// and a change of the widths or the block's class, encodes the list again (O(n), n <= the
// follow cap). A short run appends its newest entry
// in place when its widths hold it and is encoded again at any other change (at most 7
// entries). Blocks follow the slab's class ladders, so growth and shrinkage stay amortized
// O(1) copies.
//
// The handle is one 64-bit word: the block's address in 45 bits (engine/mem/packed_address.h)
// and the size in the 19 above, so a list has at most kMaxFollowingLimit (2^19 - 1) entries.
//
// Thread-safety: none; the owning graph serializes mutations. 8 bytes, 4-byte aligned.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "engine/graph/edge_entry.h"
#include "engine/graph/gap_groups.h"
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
  // The first inconsistency in a packed list's gap area (GapGroups::Check), or an empty string
  // (also for the other forms, which keep no such bookkeeping).
  std::string CheckLayout() const { return is_packed() ? gaps().Check() : std::string(); }
  // Calls fn(entry) for every entry, oldest first (a packed list decodes each group once).
  template <typename Fn>
  void ForEach(Fn&& fn) const;
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
  // Once the block's start is cached: hints the CPU to fetch a packed list's newest group
  // directory entry (its anchor, its gaps' end and kMutual bits).
  void PrefetchNewestTime() const {
    const uint32_t n = size();
    if (n < kPackMin) return;
    const GapGroups g = gaps();
    __builtin_prefetch(g.area() + (uint64_t{g.shape().groups() - 1} * g.shape().dir_bits()) / 8);
  }
  // Once that directory entry is cached: hints the CPU to fetch the newest group's gaps
  // (an append decodes them for the newest time) and the stream's end (where it writes).
  void PrefetchNewestGaps() const {
    if (size() < kPackMin) return;
    const GapGroups g = gaps();
    const uint64_t start = g.shape().stream_start();
    __builtin_prefetch(g.area() + (start + g.GapsAt(g.shape().groups() - 1)) / 8);
    __builtin_prefetch(g.area() + (start + g.StreamBits()) / 8);
  }

 private:
  char* block() const { return UnpackBlockAddress(word_); }
  bool is_packed() const { return size() >= kPackMin; }
  bool is_short_run() const { return size() >= kShortRunMin && size() < kPackMin; }
  ShortRun short_run() const { return ShortRun(block(), size()); }
  // The plain and packed forms only.
  uint32_t* peers() const { return reinterpret_cast<uint32_t*>(block() + (is_packed() ? 8 : 0)); }
  // The plain form only: its one entry's time.
  uint32_t* ts_lo() const { return reinterpret_cast<uint32_t*>(block() + 4); }
  uint16_t* ts_hi() const { return reinterpret_cast<uint16_t*>(block() + 8); }
  // Packed form only: the gap area's view, from the header.
  GapGroups gaps() const;
  // Writes a packed block's header (the layout above).
  static void PutHeader(char* block, const GapShape& shape);
  // Packed form only: the spare peer slots (the header's top bits).
  uint32_t spare_slots() const {
    uint64_t h;
    std::memcpy(&h, block(), sizeof(h));
    return static_cast<uint32_t>(h >> kSpareShift);
  }
  static void PutSpare(char* block, uint32_t spare) {
    uint64_t h;
    std::memcpy(&h, block, sizeof(h));
    h = (h & ((uint64_t{1} << kSpareShift) - 1)) | (uint64_t{spare} << kSpareShift);
    std::memcpy(block, &h, sizeof(h));
  }
  static constexpr unsigned kSpareShift = 54;
  static constexpr uint32_t kMaxSpare = (1u << (64 - kSpareShift)) - 1;
  // Packed form only: the bytes the list's content takes (header, peer slots, gap area).
  size_t ContentBytes() const { return PackedBytes(size() + spare_slots(), gaps().AreaBits()); }
  static size_t PackedBytes(uint32_t slots, uint64_t area_bits) {
    return 8 + 4 * size_t{slots} + static_cast<size_t>((area_bits + 7) / 8);
  }
  // The bytes of the slab block for a packed content of `bytes`, and whether it is a word
  // block: two contents share a block exactly when both agree.
  static bool InWordBlock(size_t bytes) {
    return (bytes + 3) / 4 <= SlabAllocator::kLargestClassCapacity;
  }
  static size_t PackedBlockBytes(size_t bytes);
  // What the slab is asked for a packed content of `bytes`: 4-byte words in a word block,
  // else 10-byte units.
  static uint32_t PackedSlabSize(size_t bytes);
  static bool SamePackedBlock(size_t a, size_t b) {
    return InWordBlock(a) == InWordBlock(b) && PackedBlockBytes(a) == PackedBlockBytes(b);
  }
  static char* AllocatePacked(size_t bytes, SlabAllocator& slab);
  static void FreePacked(char* block, size_t bytes, SlabAllocator& slab);
  // Appends `e` (the newest, after `last_ts`), in place or moved to the next class's block;
  // false when the widths do not hold it (the caller encodes the list again).
  bool AppendPacked(const EdgeEntry& e, const GapGroups& g, TimestampMs last_ts,
                    SlabAllocator& slab);
  // Erases entry pos of a packed list in its block; false when the block's class would
  // change (the caller encodes the list again). REQUIRES: size() > kPackMin.
  bool ErasePackedInPlace(uint32_t pos);
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

  uint64_t word_ = 0;  // the block's packed address | size << kPackedAddressBits
};
#pragma pack(pop)
static_assert(sizeof(FollowingList) == 8);
static_assert(kShortRunMax + 1 == FollowingList::kPackMin, "a list is short below kPackMin");
static_assert(kMaxFollowingLimit <= FollowingList::kMaxSize);

inline GapGroups FollowingList::gaps() const {
  char* b = block();
  uint64_t h;
  std::memcpy(&h, b, sizeof(h));
  GapShape s;
  s.n = size();
  s.base = static_cast<TimestampMs>(h & ((uint64_t{1} << 42) - 1));
  s.time_bits = static_cast<unsigned>((h >> 42) & 63);
  s.end_bits = static_cast<unsigned>((h >> 48) & 63);
  return GapGroups(b + 8 + 4 * (size_t{s.n} + (h >> kSpareShift)), s);
}

template <typename Fn>
void FollowingList::ForEach(Fn&& fn) const {
  const uint32_t n = size();
  if (!is_packed()) {
    for (uint32_t i = 0; i < n; ++i) fn(EntryAt(i));
    return;
  }
  const GapGroups g = gaps();
  const uint32_t* const peer = peers();
  TimestampMs ts[GapShape::kGroup];
  for (uint32_t grp = 0, first = 0; first < n; ++grp, first += GapShape::kGroup) {
    const uint32_t count = g.GroupSize(grp);
    g.DecodeGroup(grp, ts);
    const uint32_t mask = g.MutualMask(grp);
    for (uint32_t r = 0; r < count; ++r)
      fn(MakeEntry(peer[first + r], ts[r], ((mask >> r) & 1) != 0));
  }
}

inline TimestampMs FollowingList::TsAt(size_t i) const {
  if (is_packed()) return gaps().Ts(static_cast<uint32_t>(i));
  if (is_short_run()) return short_run().Ts(static_cast<uint32_t>(i));
  return static_cast<TimestampMs>((static_cast<uint64_t>(*ts_hi() & kTsHiMask) << 32) | *ts_lo());
}

inline bool FollowingList::MutualAt(size_t i) const {
  if (is_short_run()) return short_run().Mutual(static_cast<uint32_t>(i));
  if (!is_packed()) return (*ts_hi() & kMutualFlag) != 0;
  return gaps().Mutual(static_cast<uint32_t>(i));
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
  gaps().SetMutual(static_cast<uint32_t>(i), mutual);
}

}  // namespace relgraph
