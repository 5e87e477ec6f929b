// FollowingList: the users one user follows, sorted by (follow time, followee id), stored as a
// structure of arrays inside one slab block:
//
//   u32 peer[C] | u32 ts_lo[C] | u16 ts_hi_flags[C]      C = SlabAllocator::CapacityFor(size)
//
// Why this design: the hottest operation on a following list is "is b in it?" (every follow's
// duplicate check, every relation), and lists reach the follow cap (1,000). A contiguous peer
// array is scanned 4 ids per SSE2 compare, where the packed 10-byte EdgeEntry layout of fan
// lists would need one scalar compare per entry. Same 10 bytes per entry, same slab classes.
// The list is bounded by the cap, so inserts and erases (memmove of three arrays) stay cheap.
//
// The handle is one 64-bit word: the block's address in 45 bits (engine/mem/packed_address.h)
// and the size in the 19 above, so a list has at most kMaxFollowingLimit (2^19 - 1) entries.
//
// Thread-safety: none; the owning graph serializes mutations. 8 bytes, 4-byte aligned.
#pragma once

#include <cstdint>
#include <cstring>

#include "engine/graph/edge_entry.h"
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

  InternalId PeerAt(size_t i) const { return peers()[i]; }
  TimestampMs TsAt(size_t i) const {
    return static_cast<TimestampMs>((static_cast<uint64_t>(ts_hi()[i] & kTsHiMask) << 32) |
                                    ts_lo()[i]);
  }
  bool MutualAt(size_t i) const { return (ts_hi()[i] & kMutualFlag) != 0; }
  EdgeEntry EntryAt(size_t i) const { return MakeEntry(PeerAt(i), TsAt(i), MutualAt(i)); }
  void SetMutual(size_t i, bool mutual) {
    uint16_t& h = ts_hi()[i];
    h = static_cast<uint16_t>((h & ~kMutualFlag) | (mutual ? kMutualFlag : 0));
  }

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

  // The three arrays as they are stored, for copying whole lists (snapshot images).
  struct Arrays {
    const uint32_t* peers;
    const uint32_t* ts_lo;
    const uint16_t* ts_hi_flags;
  };
  Arrays arrays() const { return {peers(), ts_lo(), ts_hi()}; }

  // For prefetching: the start of the peer array.
  const void* peers_address() const { return block(); }
  // Hints the CPU to fetch what a search and an insert of the newest entry read: the start of
  // the peer array and the newest entry in each of the three arrays.
  void PrefetchForInsert() const {
    __builtin_prefetch(block());
    const uint32_t n = size();
    if (n == 0) return;
    __builtin_prefetch(peers() + n - 1);
    __builtin_prefetch(ts_lo() + n - 1);
    __builtin_prefetch(ts_hi() + n - 1);
  }

 private:
  char* block() const { return UnpackBlockAddress(word_); }
  uint32_t capacity() const {
    const uint32_t n = size();
    return n == 0 ? 0 : SlabAllocator::CapacityFor(n);
  }
  uint32_t* peers() const { return reinterpret_cast<uint32_t*>(block()); }
  uint32_t* ts_lo() const { return reinterpret_cast<uint32_t*>(block() + 4 * size_t{capacity()}); }
  uint16_t* ts_hi() const { return reinterpret_cast<uint16_t*>(block() + 8 * size_t{capacity()}); }
  void Set(char* block, uint32_t size) {
    word_ =
        (block == nullptr ? 0 : PackBlockAddress(block)) | (uint64_t{size} << kPackedAddressBits);
  }
  // Keeps the first min(old, new) entries. REQUIRES: new_size <= kMaxSize.
  void Resize(uint32_t new_size, SlabAllocator& slab);

  uint64_t word_ = 0;  // the block's packed address | size << kPackedAddressBits
};
#pragma pack(pop)
static_assert(sizeof(FollowingList) == 8);
static_assert(kMaxFollowingLimit <= FollowingList::kMaxSize);

}  // namespace relgraph
