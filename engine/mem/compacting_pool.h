// CompactingPool: a BlockPool whose owners' blocks can be moved, owner by owner, into a fresh
// pool that packs them, after which the old pool and all its slabs go.
//
// Why this design: a BlockPool reuses a run only once all its blocks are free. Buffers that
// stop growing pin runs that growth has otherwise left (an author who posted once, among
// authors who went on), so a pool that grew through many classes keeps much more than its
// live bytes: at 27 posts per author the rings' pool held about 1.3 times its live bytes. Moving
// every block into a fresh pool packs each class's runs full, and, unlike moving blocks out of
// sparse runs, needs no way back from a block to its owner: the feed walks its owners in slot
// order. Owners below the cursor have their blocks in the fresh pool, the others in the old
// one, so For(owner) names the pool every call on an owner's buffer must use. The move runs
// a bounded step at a time, with the fan-out, so no call waits for it.
//
// Thread-safety: none; the feed engine serializes access.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include "engine/mem/block_pool.h"

namespace relgraph {

class CompactingPool {
 public:
  // A move starts when the free bytes pass both this and a quarter of the live bytes; below
  // it a move would return little more than the slabs it rounds to.
  static constexpr size_t kMinFreeBytes = size_t{16} << 20;

  explicit CompactingPool(size_t entry_bytes,
                          BlockPool::Growth growth = BlockPool::Growth::kFewCopies)
      : entry_bytes_(entry_bytes),
        growth_(growth),
        current_(std::make_unique<BlockPool>(entry_bytes, growth)) {}

  // The pool that owner `owner`'s block comes from and goes back to.
  BlockPool& For(size_t owner) { return const_cast<BlockPool&>(std::as_const(*this).For(owner)); }
  const BlockPool& For(size_t owner) const {
    return fresh_ != nullptr && owner < moved_ ? *fresh_ : *current_;
  }

  bool moving() const { return fresh_ != nullptr; }

  // For checks: adds up the owners' blocks by the pool For(owner) names, to compare with the
  // pools' live bytes. A block allocated from or freed to the wrong pool shows there, even
  // after its move has ended.
  class Tally {
   public:
    explicit Tally(const CompactingPool& pool) : pool_(pool) {}
    // Counts owner `owner`'s block of `bytes` (nullptr: it has none from a pool); false when
    // the block lies outside the pool For(owner) names. O(slabs).
    bool Add(size_t owner, const void* block, size_t bytes) {
      if (block == nullptr) return true;
      const BlockPool& pool = pool_.For(owner);
      (&pool == pool_.current_.get() ? current_bytes_ : fresh_bytes_) += bytes;
      return pool.Holds(block);
    }
    // True when the counts equal each pool's live bytes.
    bool Balanced() const {
      return current_bytes_ == pool_.current_->LiveBytes() &&
             fresh_bytes_ == (pool_.fresh_ != nullptr ? pool_.fresh_->LiveBytes() : 0);
    }

   private:
    const CompactingPool& pool_;
    size_t current_bytes_ = 0, fresh_bytes_ = 0;
  };
  // True when a move is due (and none is under way).
  bool Fragmented() const {
    const size_t live = current_->LiveBytes(), reserved = current_->MemoryBytes();
    return !moving() && reserved - live > kMinFreeBytes && reserved - live > live / 4;
  }
  // Starts a move; owners from 0 on move with MoveNext. No-op when one is under way.
  void BeginMove() {
    if (moving()) return;
    fresh_ = std::make_unique<BlockPool>(entry_bytes_, growth_);
    moved_ = 0;
  }
  // The next owner to move.
  size_t next_owner() const { return moved_; }
  // Moves owner next_owner()'s buffer (an EntryRun or anything with MoveBlock(from, to)).
  // REQUIRES: moving().
  template <typename Buffer>
  void MoveNext(Buffer& buffer) {
    buffer.MoveBlock(*current_, *fresh_);
    ++moved_;
  }
  // Ends the move: every owner has moved, and the old pool goes. REQUIRES: moving().
  void EndMove() {
    current_ = std::move(fresh_);
    moved_ = 0;
  }
  // While moving: moves owners [next_owner(), owners) until `limit` moves were made, keeping
  // *bytes (the sum of the owners' MemoryBytes()) right, and ends the move past the last owner.
  // buffer_of(owner) gives an owner's buffer. Returns the moves made.
  template <typename BufferOf>
  size_t MoveSome(size_t owners, BufferOf&& buffer_of, size_t* bytes, size_t limit) {
    if (!moving()) return 0;
    size_t moves = 0;
    for (; moves < limit && next_owner() < owners; ++moves) {
      auto& buffer = buffer_of(next_owner());
      const size_t before = buffer.MemoryBytes();
      MoveNext(buffer);
      *bytes = *bytes - before + buffer.MemoryBytes();
    }
    if (next_owner() == owners) EndMove();
    return moves;
  }

  size_t MemoryBytes() const {
    return current_->MemoryBytes() + (fresh_ != nullptr ? fresh_->MemoryBytes() : 0);
  }
  size_t LiveBytes() const {
    return current_->LiveBytes() + (fresh_ != nullptr ? fresh_->LiveBytes() : 0);
  }

 private:
  const size_t entry_bytes_;
  const BlockPool::Growth growth_;
  std::unique_ptr<BlockPool> current_;
  std::unique_ptr<BlockPool> fresh_;  // while moving: where owners below moved_ are
  size_t moved_ = 0;
};

}  // namespace relgraph
