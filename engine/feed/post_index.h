// PostIndex: which author holds a post id, for every post the engine retains, in about 5.7
// bytes a post.
//
// Why this design: the index answers "is this id taken?" (publish), "does this author hold
// it?" (delete, replay) and "who wrote this inbox entry?" (reads). Storing the 8-byte id in each
// slot would cost more than the 16-byte ring entry that already holds it, so a slot holds only
// an 8-bit fingerprint of the id and the author's internal id, and the author's ring is the
// place that confirms a candidate. This is a cuckoo filter whose payload is the author:
//   - buckets of four slots, each post in one of two buckets, so a lookup reads two buckets and
//     the table fills to 93% before it grows (a probing table of 12-byte slots filled 58-87%);
//   - partial-key cuckoo hashing: the second bucket is computed from the first and the
//     fingerprint alone, so a slot can be moved to its other bucket without knowing its id, and
//     deletes remove a slot with no tombstones;
//   - a candidate is a slot whose fingerprint matches: the true holder is always among them
//     (when the post is retained), and each other slot matches by chance 1 time in 255.
// The table cannot be resized by itself, since slots do not hold ids: when NeedsGrowth(), the
// owner fills a larger one (Reset to GrownBuckets(), about 13% larger) from where it keeps the
// posts, for Feed its authors' rings (engine/feed/feed_index.cpp moves them incrementally). This
// keeps the mean load near 87%; steady publishing (one post in, one trimmed) never grows it.
//
// Thread-safety: none; the feed engine serializes access.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/feed/feed_types.h"
#include "engine/graph/id_map.h"

namespace relgraph {

class PostIndex {
 public:
  static constexpr size_t kSlotsPerBucket = 4;

  PostIndex() { Reset(kMinBuckets); }

  // Calls fn(author) for every slot that may hold `post`, in no particular order, until fn
  // returns true. The author holding `post`, if it is retained, is among them.
  template <typename Fn>
  void ForEachCandidate(PostId post, Fn&& fn) const {
    const Place p = PlaceOf(post);
    if (Scan(buckets_[p.first], p.fp, fn)) return;
    if (p.second != p.first && Scan(buckets_[p.second], p.fp, fn)) return;
    for (const Stashed& s : stash_) {
      if (s.fp == p.fp && (s.bucket == p.first || s.bucket == p.second) && fn(s.author)) return;
    }
  }
  // True when some slot may hold `post` for `author` (no false negatives).
  bool MayHold(PostId post, InternalId author) const {
    bool found = false;
    ForEachCandidate(post, [&](InternalId a) { return found = (a == author); });
    return found;
  }
  void Prefetch(PostId post) const {
    const Place p = PlaceOf(post);
    __builtin_prefetch(&buckets_[p.first]);
    __builtin_prefetch(&buckets_[p.second]);
  }

  // Records that `author` holds `post`. REQUIRES: it does not already (ids are unique). Always
  // succeeds; afterwards NeedsGrowth() may ask for a rebuild.
  void Insert(PostId post, InternalId author);
  // Removes one slot that may hold `post` for `author`; false when there is none. Any such
  // slot will do: two posts of one author with one fingerprint share both buckets.
  bool Erase(PostId post, InternalId author);

  // True when the table is too full (or an insert overflowed): the owner should Reset it to
  // GrownBuckets() and insert every post again.
  bool NeedsGrowth() const { return !stash_.empty() || size_ > max_size_; }
  size_t GrownBuckets() const;
  // Buckets that hold `posts` at the load a rebuild aims at.
  static size_t BucketsFor(size_t posts);
  // Empties the table and gives it `buckets` buckets.
  void Reset(size_t buckets);

  size_t size() const { return size_; }
  size_t stashed() const { return stash_.size(); }
  size_t buckets() const { return buckets_.size(); }
  size_t MemoryBytes() const {
    return buckets_.capacity() * sizeof(Bucket) + stash_.capacity() * sizeof(Stashed);
  }

 private:
  static constexpr size_t kMinBuckets = 256;
  static constexpr uint8_t kEmpty = 0;

  struct Bucket {
    uint8_t fp[kSlotsPerBucket];  // kEmpty: a free slot
    InternalId author[kSlotsPerBucket];
  };
  static_assert(sizeof(Bucket) == 20);
  struct Place {
    uint32_t first, second;
    uint8_t fp;
  };
  struct Stashed {  // a slot no bucket had room for (until the next rebuild)
    uint8_t fp;
    uint32_t bucket;  // one of its two buckets
    InternalId author;
  };

  static uint64_t Mix(uint64_t x) {  // a bijective 64-bit mixer (murmur3's finalizer)
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
  }
  // The other bucket of a slot in bucket i: (offset(fp) - i) mod n, its own inverse.
  uint32_t Alt(uint32_t i, uint8_t fp) const {
    const uint32_t c = alt_offset_[fp];
    return c >= i ? c - i : c + static_cast<uint32_t>(buckets_.size()) - i;
  }
  Place PlaceOf(PostId post) const {
    const uint64_t h = Mix(post);
    uint8_t fp = static_cast<uint8_t>(h);
    if (fp == kEmpty) fp = 1;
    __extension__ typedef unsigned __int128 U128;
    const auto first = static_cast<uint32_t>((static_cast<U128>(h) * buckets_.size()) >> 64);
    return {first, Alt(first, fp), fp};
  }
  template <typename Fn>
  static bool Scan(const Bucket& b, uint8_t fp, Fn& fn) {
    for (size_t s = 0; s < kSlotsPerBucket; ++s) {
      if (b.fp[s] == fp && fn(b.author[s])) return true;
    }
    return false;
  }
  bool PlaceFree(uint32_t bucket, uint8_t fp, InternalId author);

  std::vector<Bucket> buckets_;
  std::vector<uint32_t> alt_offset_;  // by fingerprint: a hash of it, mod the bucket count
  std::vector<Stashed> stash_;
  size_t size_ = 0;
  size_t max_size_ = 0;
  uint64_t rng_ = 0x2545F4914F6CDD1Dull;  // picks the slot a cuckoo walk evicts
};

}  // namespace relgraph
