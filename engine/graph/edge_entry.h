// EdgeEntry: one directed edge as seen from one side (a followee in a following list, or a fan
// in a fan list), packed in 10 bytes, and the ordering helpers for sorted runs of entries.
//
// Layout (little-endian, 2-byte aligned):
//   peer          u32  internal id of the other user
//   ts_lo         u32  follow time, bits 0..31 (ms since the epoch)
//   ts_hi_flags   u16  bits 0..9: follow time bits 32..41; bit 15: kMutual (the reverse edge
//   exists)
//
// Order: every run is sorted ascending by key (ts, external id of peer); lists are read from
// the back to be newest first. Ties on ts compare external ids, which costs a lookup in the id
// map's external array, but only when timestamps are equal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "engine/graph/internal_id.h"
#include "engine/types.h"

namespace relgraph {

#pragma pack(push, 2)
struct EdgeEntry {
  uint32_t peer;
  uint32_t ts_lo;
  uint16_t ts_hi_flags;
};
#pragma pack(pop)
static_assert(sizeof(EdgeEntry) == 10);

inline constexpr uint16_t kMutualFlag = 0x8000;
inline constexpr uint16_t kTsHiMask = 0x03ff;

inline EdgeEntry MakeEntry(InternalId peer, TimestampMs ts, bool mutual) {
  EdgeEntry e;
  e.peer = peer;
  e.ts_lo = static_cast<uint32_t>(ts);
  e.ts_hi_flags = static_cast<uint16_t>((ts >> 32) & kTsHiMask) | (mutual ? kMutualFlag : 0);
  return e;
}
inline TimestampMs EntryTs(const EdgeEntry& e) {
  return static_cast<TimestampMs>((static_cast<uint64_t>(e.ts_hi_flags & kTsHiMask) << 32) |
                                  e.ts_lo);
}
inline bool EntryMutual(const EdgeEntry& e) {
  return (e.ts_hi_flags & kMutualFlag) != 0;
}
inline void SetEntryMutual(EdgeEntry& e, bool mutual) {
  e.ts_hi_flags =
      static_cast<uint16_t>((e.ts_hi_flags & ~kMutualFlag) | (mutual ? kMutualFlag : 0));
}

// A position in a list's order: follow time, then external user id.
struct EntryKey {
  TimestampMs ts;
  UserId user;
  friend auto operator<=>(const EntryKey&, const EntryKey&) = default;
};

// Orders entries against keys; reads external ids from the id map for tie-breaks. A template
// only so that this header need not include the map's (engine/graph/id_map.h), whose records
// hold the lists that include this one: a file that calls these methods includes it.
template <typename Ids>
class BasicEntryOrder {
 public:
  explicit BasicEntryOrder(const Ids& ids) : ids_(&ids) {}
  // The same order, told the external ids of two users the caller already has (a follow knows
  // both of its users'): looking them up would cost a cache miss each.
  BasicEntryOrder WithKnown(InternalId a, UserId a_external, InternalId b,
                            UserId b_external) const {
    BasicEntryOrder o(*ids_);
    o.known_[0] = {a, a_external};
    o.known_[1] = {b, b_external};
    return o;
  }

  EntryKey KeyOf(const EdgeEntry& e) const { return {EntryTs(e), External(e.peer)}; }
  UserId External(InternalId id) const {
    if (id == known_[0].id) return known_[0].external;
    if (id == known_[1].id) return known_[1].external;
    return ids_->External(id);
  }
  bool Less(const EdgeEntry& e, const EntryKey& k) const {
    const TimestampMs ts = EntryTs(e);
    return ts != k.ts ? ts < k.ts : External(e.peer) < k.user;
  }
  bool Less(const EntryKey& k, const EdgeEntry& e) const {
    const TimestampMs ts = EntryTs(e);
    return ts != k.ts ? k.ts < ts : k.user < External(e.peer);
  }
  // First index in the sorted run [a, a+n) whose key is >= k.
  size_t LowerBound(const EdgeEntry* a, size_t n, const EntryKey& k) const {
    size_t lo = 0, hi = n;
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (Less(a[mid], k))
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }
  // Index of the entry with key k in the sorted run, or n.
  size_t Find(const EdgeEntry* a, size_t n, const EntryKey& k) const {
    const size_t i = LowerBound(a, n, k);
    return (i < n && !Less(k, a[i])) ? i : n;
  }

 private:
  struct Known {
    InternalId id = kNoInternalId;
    UserId external = 0;
  };
  const Ids* ids_;
  Known known_[2];
};
class IdMap;
using EntryOrder = BasicEntryOrder<IdMap>;

// Copies up to `limit` entries with rank < end of the sorted run `a` into `out`, newest first;
// returns the count.
inline uint32_t CopyRunDescending(const EdgeEntry* a, size_t end, uint32_t limit, EdgeEntry* out) {
  const uint32_t n = static_cast<uint32_t>(end < limit ? end : limit);
  for (uint32_t i = 0; i < n; ++i) out[i] = a[end - 1 - i];
  return n;
}

// Index of the entry whose peer is `peer` in [a, a+n), or n. Linear: used on following lists,
// which are bounded by the follow cap and usually short.
inline size_t FindPeer(const EdgeEntry* a, size_t n, InternalId peer) {
  for (size_t i = 0; i < n; ++i) {
    if (a[i].peer == peer) return i;
  }
  return n;
}

}  // namespace relgraph
