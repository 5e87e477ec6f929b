// IdListPair: two short lists of internal ids in one block, for the side of an inbox that
// needs them (its visible celebrity followees, its authors pending reconcile).
//
// Why this design: about 40% of the bench's inboxes follow a celebrity, and few have anything
// pending. An inbox keeps a lone celebrity in its own record (inboxes.h), so a pair
// serves those that follow two or more (about 19%), mostly two. Two std::vectors cost 48
// bytes plus a malloc chunk of 32 bytes or more for each list in use; this costs 16 bytes
// plus one block of the ids (8 bytes for one or two), from a BlockPool of 8-byte entries
// that holds two ids each. The first list comes first in the block and the second follows
// it, so adding to the first moves the second (at most 64 ids, the inbox's bound on pending
// authors).
//
// Thread-safety: none; the feed engine serializes access.
#pragma once

#include <cstdint>
#include <span>

#include "engine/mem/block_pool.h"
#include "engine/graph/id_map.h"

namespace relgraph {

class IdListPair {
 public:
  static constexpr uint32_t kMaxSecond = 255;
  static constexpr size_t kEntryBytes = 2 * sizeof(InternalId);  // the pool's entry size

  IdListPair() = default;
  // Frees a malloc'd block. A pool block is left to its pool (Clear gives it back).
  ~IdListPair();
  IdListPair(IdListPair&& other) noexcept;
  IdListPair& operator=(IdListPair&& other) noexcept;
  IdListPair(const IdListPair&) = delete;
  IdListPair& operator=(const IdListPair&) = delete;

  std::span<const InternalId> first() const { return {ids_, first_}; }
  std::span<const InternalId> second() const { return {ids_ + first_, second_}; }
  bool empty() const { return first_ == 0 && second_ == 0; }

  // `pool`: the same one for every call on one pair, with entries of kEntryBytes.
  void AddFirst(InternalId id, BlockPool& pool);
  // REQUIRES: second().size() < kMaxSecond.
  void AddSecond(InternalId id, BlockPool& pool);
  void ClearFirst();            // keeps the block
  void ClearSecond();           // keeps the block
  void Clear(BlockPool& pool);  // empties both and frees the block
  // Bytes of the block (its capacity), not of this object.
  size_t BlockBytes() const { return size_t{capacity_} * sizeof(InternalId); }

 private:
  // Capacities up to this many ids come from the pool, larger ones from malloc.
  static constexpr uint32_t kPoolMaxIds = 2 * BlockPool::kMaxBlockEntries;
  void Grow(BlockPool& pool);  // room for one more id
  void FreeBlock(BlockPool& pool);

  InternalId* ids_ = nullptr;
  uint32_t first_ = 0;
  uint32_t capacity_ : 24 = 0;  // ids the block holds
  uint32_t second_ : 8 = 0;
};

}  // namespace relgraph
