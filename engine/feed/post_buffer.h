// PostEntry and PostBuffer: an author's ring of retained posts, sorted oldest first by key
// (ts, post id).
//
// An entry is 16 bytes: the id plus one word packing time, kind and a 16-bit sequence number
// that is unique among the author's posts with the same time (Feed assigns it). Inboxes store
// that word and the author, not the id (inbox_buffer.h): the author's ring gives the id back
// from (ts, seq). Storage is an EntryRun (entry_run.h).
//
// Thread-safety: none; the feed engine serializes access.
#pragma once

#include <cstdint>

#include "engine/mem/entry_run.h"
#include "engine/feed/feed_types.h"

namespace relgraph {

struct PostEntry {
  PostId id;
  uint64_t packed;  // ts:42 (bits 22..63) | kind:6 (bits 16..21) | seq:16 (bits 0..15)

  static PostEntry Make(PostId id, TimestampMs ts, uint8_t kind, uint16_t seq) {
    return {id, (static_cast<uint64_t>(ts) << 22) | (uint64_t{kind} << 16) | seq};
  }
  TimestampMs ts() const { return static_cast<TimestampMs>(packed >> 22); }
  uint8_t kind() const { return static_cast<uint8_t>((packed >> 16) & 63); }
  uint16_t seq() const { return static_cast<uint16_t>(packed); }
  PostKey key() const { return {ts(), id}; }
  // Strict order of keys; cheaper than building PostKeys.
  static bool Less(const PostEntry& a, const PostEntry& b) {
    const uint64_t ta = a.packed >> 22, tb = b.packed >> 22;
    return ta != tb ? ta < tb : a.id < b.id;
  }
  bool LessThan(const PostKey& k) const { return ts() != k.ts ? ts() < k.ts : id < k.post; }
};
static_assert(sizeof(PostEntry) == 16);

class PostBuffer : public EntryRun<PostEntry> {
 public:
  // Number of entries with key < k, i.e. the index where k would go.
  uint32_t LowerBound(const PostKey& k) const;
  // Index of the entry with this key, or size().
  uint32_t Find(const PostKey& k) const;
  // Index of the entry with id `id` (linear scan), or size().
  uint32_t FindId(PostId id) const;
  // The number after the newest entry's (0 when empty): where Feed starts looking for a new
  // post's sequence number, so that posts appended in order carry consecutive numbers.
  uint16_t SeqAfterNewest() const {
    return empty() ? 0 : static_cast<uint16_t>(newest().seq() + 1);
  }
  // Index of the entry with this time and sequence number, or size(). When posts were
  // appended in order since this one, with none removed, the entry sits `newest.seq - seq`
  // below the newest, and one probe finds it (a removal since shifts it by one or two).
  // Otherwise it searches from the newest end outwards (timelines mostly ask for recent
  // posts): O(log distance).
  uint32_t FindSeq(TimestampMs ts, uint16_t seq) const;
  // Where that first probe goes (size() when out of range).
  uint32_t SeqGuess(uint16_t seq) const {
    if (empty()) return 0;
    const uint32_t back = static_cast<uint16_t>(newest().seq() - seq);
    return back < size() ? size() - 1 - back : size();
  }

  // Inserts e in key order; false (no change) when an entry with its key is present.
  // `bound` and `slab` as for EntryRun::InsertAt.
  bool Insert(const PostEntry& e, uint32_t bound, BlockPool& slab) {
    if (!empty() && !PostEntry::Less(newest(), e)) return InsertInside(e, bound, slab);
    InsertAt(size(), e, bound, slab);  // the common case: a new newest entry
    return true;
  }

 private:
  bool InsertInside(const PostEntry& e, uint32_t bound, BlockPool& slab);
};

}  // namespace relgraph
