// PostBuffer: a sorted run of post entries, oldest first, used both as an author's ring of
// retained posts and as a reader's materialized inbox.
//
// Why this design: both are bounded (K posts, R entries), nearly always grow at the newest
// end and shrink at the oldest, and are read newest first from a cursor. A contiguous array
// with a movable start gives appends and trims in amortized O(1), binary search for cursors,
// and 16 bytes per entry: the id plus one word packing time, kind and a 16-bit author tag
// (inboxes use the tag to find an author's entries without a lookup per entry). Most buffers
// are tiny (an author's few posts, a light reader's inbox), so blocks of up to 64 entries come
// from a SlabAllocator: no malloc header, no realloc per growth step. Larger ones are malloc'd
// and sized tightly to their bound.
//
// Thread-safety: none; the feed engine serializes access.
#pragma once

#include <cstdint>
#include <cstdlib>

#include "engine/feed_types.h"
#include "engine/slab_allocator.h"

namespace relgraph {

struct PostEntry {
  PostId id;
  uint64_t packed;  // ts:42 (bits 22..63) | kind:6 (bits 16..21) | tag:16 (bits 0..15)

  static PostEntry Make(PostId id, TimestampMs ts, uint8_t kind, uint16_t tag) {
    return {id, (static_cast<uint64_t>(ts) << 22) | (uint64_t{kind} << 16) | tag};
  }
  TimestampMs ts() const { return static_cast<TimestampMs>(packed >> 22); }
  uint8_t kind() const { return static_cast<uint8_t>((packed >> 16) & 63); }
  uint16_t tag() const { return static_cast<uint16_t>(packed); }
  PostKey key() const { return {ts(), id}; }
  // Strict order of keys; cheaper than building PostKeys.
  static bool Less(const PostEntry& a, const PostEntry& b) {
    const uint64_t ta = a.packed >> 22, tb = b.packed >> 22;
    return ta != tb ? ta < tb : a.id < b.id;
  }
  bool LessThan(const PostKey& k) const { return ts() != k.ts ? ts() < k.ts : id < k.post; }
};
static_assert(sizeof(PostEntry) == 16);

class PostBuffer {
 public:
  static constexpr uint32_t kSlabMaxEntries = 64;  // larger blocks come from malloc

  PostBuffer() = default;
  // Frees a malloc'd block. A slab block is left to its allocator (Clear gives it back).
  ~PostBuffer() {
    if (capacity_ > kSlabMaxEntries) std::free(data_);
  }
  PostBuffer(const PostBuffer&) = delete;
  PostBuffer& operator=(const PostBuffer&) = delete;

  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Index 0 is the oldest entry, size() - 1 the newest.
  const PostEntry& operator[](size_t i) const { return data_[start_ + i]; }
  const PostEntry& oldest() const { return data_[start_]; }
  const PostEntry& newest() const { return data_[start_ + size_ - 1]; }

  // Number of entries with key < k, i.e. the index where k would go.
  uint32_t LowerBound(const PostKey& k) const;
  // Index of the entry with this key, or size().
  uint32_t Find(const PostKey& k) const;
  // Index of the entry with id `id` (linear scan), or size().
  uint32_t FindId(PostId id) const;

  // Inserts e in key order; false (no change) when an entry with its key is present.
  // `bound` is the size the buffer is kept under by its owner: capacity never grows far
  // past it, so a full buffer costs bound * 16 bytes plus a little slack. `slab` is where
  // small blocks come from: the same allocator for every call on one buffer.
  bool Insert(const PostEntry& e, uint32_t bound, SlabAllocator& slab) {
    if (size_ > 0 && !PostEntry::Less(newest(), e)) return InsertInside(e, bound, slab);
    if (start_ + size_ == capacity_) MakeRoomAtEnd(bound, slab);
    data_[start_ + size_++] = e;  // the common case: a new newest entry
    return true;
  }
  void EraseAt(uint32_t i);
  void PopOldest();
  // Removes the entries for which remove(entry) is true; returns how many were removed.
  template <typename Remove>
  uint32_t RemoveIf(Remove&& remove) {
    uint32_t out = 0;
    for (uint32_t i = 0; i < size_; ++i) {
      const PostEntry& e = data_[start_ + i];
      if (!remove(e)) data_[start_ + out++] = e;
    }
    const uint32_t removed = size_ - out;
    size_ = out;
    return removed;
  }
  void Clear(SlabAllocator& slab);  // empties the buffer and frees its block
  size_t MemoryBytes() const { return size_t{capacity_} * sizeof(PostEntry); }
  // Hints the CPU to fetch the newest (oldest) entry.
  void Prefetch() const {
    if (size_ > 0) __builtin_prefetch(data_ + start_ + size_ - 1);
  }
  void PrefetchOldest() const {
    if (size_ > 0) __builtin_prefetch(data_ + start_);
  }

 private:
  bool InsertInside(const PostEntry& e, uint32_t bound, SlabAllocator& slab);
  void MakeRoomAtEnd(uint32_t bound, SlabAllocator& slab);
  void FreeBlock(SlabAllocator& slab);

  PostEntry* data_ = nullptr;
  uint32_t start_ = 0;  // index of the oldest entry in data_
  uint32_t size_ = 0;
  uint32_t capacity_ = 0;
};

}  // namespace relgraph
