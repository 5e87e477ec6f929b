// InboxEntry and InboxBuffer: a reader's materialized inbox, sorted oldest first by the key
// (ts, post id) of the posts it names.
//
// Why this design: an inbox entry names a post without its 8-byte id. It is 12 bytes: the
// slot of the author's ring and the ring entry's packed word (time, kind and the sequence
// number that is unique among the author's posts at that time, post_buffer.h). A read gets
// the id from the ring by (ts, seq), and the author from the ring's header: two dependent
// loads, as many as the post index took to name the author. The lookup fails exactly when
// the post has left the ring. Order by key needs the id only
// between entries of equal time, so the searches below ask the caller for ids (`id_of`) only
// there: rarely, since one reader's followees seldom post in the same millisecond.
//
// Thread-safety: none; the feed engine serializes access.
#pragma once

#include <cstdint>

#include "engine/mem/entry_run.h"
#include "engine/feed/post_buffer.h"

namespace relgraph {

struct InboxEntry {
  uint32_t ring;  // the slot of the author's ring, which Feed keeps for the author's life
  uint32_t low;   // the ring entry's packed word, in two halves: 12 bytes, 4-byte aligned
  uint32_t high;

  static InboxEntry Of(uint32_t ring, const PostEntry& e) {
    return {ring, static_cast<uint32_t>(e.packed), static_cast<uint32_t>(e.packed >> 32)};
  }
  uint64_t packed() const { return (uint64_t{high} << 32) | low; }
  TimestampMs ts() const { return static_cast<TimestampMs>(packed() >> 22); }
  uint8_t kind() const { return static_cast<uint8_t>((low >> 16) & 63); }
  uint16_t seq() const { return static_cast<uint16_t>(low); }
  // The same post: ring, time and sequence number identify it (Feed keeps them unique).
  bool SamePost(const InboxEntry& o) const {
    return ring == o.ring && low == o.low && high == o.high;
  }
};
static_assert(sizeof(InboxEntry) == 12);

class InboxBuffer : public EntryRun<InboxEntry> {
 public:
  // `id_of(const InboxEntry&) -> PostId` gives the id of an entry's post, or 0 when unknown
  // (then the entry counts as older than any id of its time). It is called only for entries
  // whose time equals the key's.

  // Number of entries with key < k, i.e. the index where k would go.
  template <typename IdOf>
  uint32_t LowerBound(const PostKey& k, IdOf&& id_of) const {
    uint32_t i = FirstAtOrAfter(k.ts);
    while (i < size() && (*this)[i].ts() == k.ts && id_of((*this)[i]) < k.post) ++i;
    return i;
  }
  // Index of the entry naming the same post as e, or size().
  uint32_t Find(const InboxEntry& e) const {
    const TimestampMs ts = e.ts();
    for (uint32_t i = FirstAtOrAfter(ts); i < size() && (*this)[i].ts() == ts; ++i) {
      if ((*this)[i].SamePost(e)) return i;
    }
    return size();
  }
  // Inserts e, whose post has id `id`, in key order; false (no change) when present.
  // `bound` and `slab` as for EntryRun::InsertAt.
  template <typename IdOf>
  bool Insert(const InboxEntry& e, PostId id, uint32_t bound, BlockPool& slab, IdOf&& id_of) {
    const TimestampMs ts = e.ts();
    if (empty() || newest().ts() < ts) {  // the common case: a new newest entry
      InsertAt(size(), e, bound, slab);
      return true;
    }
    uint32_t pos = FirstAtOrAfter(ts);
    uint32_t end = pos;
    for (; end < size() && (*this)[end].ts() == ts; ++end) {
      if ((*this)[end].SamePost(e)) return false;
    }
    while (pos < end && id_of((*this)[pos]) < id) ++pos;
    InsertAt(pos, e, bound, slab);
    return true;
  }

 private:
  uint32_t FirstAtOrAfter(TimestampMs ts) const;  // the first index with time >= ts
};

}  // namespace relgraph
