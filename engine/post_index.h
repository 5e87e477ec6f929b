// PostIndex: post id -> author (internal id) for every post the engine retains.
//
// Why this design: publish must refuse a duplicate id, delete and retraction must find a
// post's author, and a timeline read must name the author of each inbox entry; all are
// point lookups on 64-bit ids. Open addressing with linear probing over 12-byte slots (id and
// author side by side, so a lookup is one cache miss) and deletes by backward shift, so no
// tombstones build up under the steady publish/trim churn. The table grows by 1.5x, not 2x,
// and maps hashes to slots by multiply-shift, so any size works: the load factor stays
// between 7/12 and 7/8 instead of dropping to 7/16 after each doubling.
//
// Thread-safety: none; the feed engine serializes access.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/feed_types.h"
#include "engine/id_map.h"

namespace relgraph {

__extension__ typedef unsigned __int128 PostIndexU128;  // GCC/Clang; quiet under -Wpedantic

class PostIndex {
 public:
  PostIndex();
  // The author of `post`, or kNoInternalId.
  InternalId Find(PostId post) const {
    for (size_t i = Home(post);; i = Next(i)) {
      if (slots_[i].id == post) return slots_[i].author;
      if (slots_[i].id == 0) return kNoInternalId;
    }
  }
  void Prefetch(PostId post) const { __builtin_prefetch(&slots_[Home(post)]); }
  // REQUIRES: post != 0 and absent.
  void Insert(PostId post, InternalId author);
  // Removes `post`; false when absent.
  bool Erase(PostId post);
  size_t size() const { return size_; }
  size_t MemoryBytes() const { return slots_.capacity() * sizeof(Slot); }

 private:
#pragma pack(push, 4)
  struct Slot {
    PostId id;  // 0: empty
    InternalId author;
  };
#pragma pack(pop)
  static_assert(sizeof(Slot) == 12);

  // The home slot: the high bits of a multiplicative hash, scaled to the table size.
  size_t Home(PostId post) const {
    const uint64_t h = post * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>((static_cast<PostIndexU128>(h) * slots_.size()) >> 64);
  }
  size_t Next(size_t i) const {
    return i + 1 == slots_.size() ? 0 : i + 1;
  }
  void Grow();

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace relgraph
