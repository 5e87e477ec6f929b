// PostIndex: post id -> author (internal id) for every post the engine retains.
//
// Why this design: publish must refuse a duplicate id, delete and retraction must find a
// post's author, and a timeline read must name the author of each inbox entry; all are
// point lookups on 64-bit ids. Open addressing with linear probing over two parallel arrays
// (ids, authors) costs 12 bytes a slot, one cache miss per lookup, and deletes by backward
// shift, so no tombstones build up under the steady publish/trim churn.
//
// Thread-safety: none; the feed engine serializes access.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/feed_types.h"
#include "engine/id_map.h"

namespace relgraph {

class PostIndex {
 public:
  PostIndex();
  // The author of `post`, or kNoInternalId.
  InternalId Find(PostId post) const {
    for (size_t i = Slot(post);; i = (i + 1) & mask_) {
      if (ids_[i] == post) return authors_[i];
      if (ids_[i] == 0) return kNoInternalId;
    }
  }
  void Prefetch(PostId post) const { __builtin_prefetch(&ids_[Slot(post)]); }
  // REQUIRES: post != 0 and absent.
  void Insert(PostId post, InternalId author);
  // Removes `post`; false when absent.
  bool Erase(PostId post);
  size_t size() const { return size_; }
  size_t MemoryBytes() const { return ids_.capacity() * 8 + authors_.capacity() * 4; }

 private:
  size_t Slot(PostId post) const {
    return static_cast<size_t>((post * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
  }
  void Grow();

  std::vector<PostId> ids_;  // 0: empty slot
  std::vector<InternalId> authors_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace relgraph
