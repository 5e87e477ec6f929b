#include "engine/mem/compacting_pool.h"

#include <doctest.h>

#include <random>
#include <vector>

#include "engine/mem/entry_run.h"

namespace relgraph {
namespace {

struct Wide {  // a 16-byte entry, as a ring's
  uint64_t owner, n;
};

using Buffer = EntryRun<Wide>;

// Appends entry number size() of owner `owner`, through the pool that owner's calls use.
void Append(Buffer& b, uint64_t owner, CompactingPool& pool) {
  b.InsertAt(b.size(), Wide{owner, b.size()}, BlockPool::kMaxBlockEntries, pool.For(owner));
}

bool Intact(const Buffer& b, uint64_t owner, uint32_t size) {
  if (b.size() != size) return false;
  for (uint32_t i = 0; i < size; ++i) {
    if (b[i].owner != owner || b[i].n != i) return false;
  }
  return true;
}

// Owners grow to full blocks, then three in four are emptied: their runs stay three-quarters
// free. A move, run a few owners at a time among appends and clears, packs the rest and gives
// the old slabs back, and every owner keeps its entries.
TEST_CASE("compacting pool: a move among other calls packs the blocks and keeps the entries") {
  constexpr uint32_t kOwners = 40'000;
  CompactingPool pool(sizeof(Wide));
  std::vector<Buffer> buffers(kOwners);
  std::vector<uint32_t> sizes(kOwners, 0);
  for (uint32_t o = 0; o < kOwners; ++o) {
    for (uint32_t i = 0; i < BlockPool::kMaxBlockEntries; ++i) Append(buffers[o], o, pool);
    sizes[o] = BlockPool::kMaxBlockEntries;
  }
  CHECK_FALSE(pool.Fragmented());
  for (uint32_t o = 0; o < kOwners; ++o) {
    if (o % 4 != 0) {
      buffers[o].Clear(pool.For(o));
      sizes[o] = 0;
    }
  }
  REQUIRE(pool.Fragmented());  // 30 MiB free of 41 MiB
  const size_t before = pool.MemoryBytes();

  std::mt19937 rng(5);
  pool.BeginMove();
  CHECK(pool.moving());
  CHECK_FALSE(pool.Fragmented());  // a move under way is not started again
  while (pool.next_owner() < kOwners) {
    for (int k = 0; k < 16 && pool.next_owner() < kOwners; ++k)
      pool.MoveNext(buffers[pool.next_owner()]);
    const uint32_t o = rng() % kOwners;  // owners on both sides of the cursor change
    if (rng() % 8 == 0) {
      buffers[o].Clear(pool.For(o));
      sizes[o] = 0;
    } else if (sizes[o] < BlockPool::kMaxBlockEntries) {
      Append(buffers[o], o, pool);
      ++sizes[o];
    }
  }
  pool.EndMove();
  CHECK_FALSE(pool.moving());
  size_t live = 0;
  for (uint32_t o = 0; o < kOwners; ++o) {
    REQUIRE(Intact(buffers[o], o, sizes[o]));
    live += buffers[o].MemoryBytes();
  }
  CHECK(pool.LiveBytes() == live);
  MESSAGE("reserved " << before << " B before the move, " << pool.MemoryBytes() << " after; live "
                      << live);
  CHECK(pool.MemoryBytes() < before / 2);
  CHECK(pool.MemoryBytes() <= live + live / 8 + (size_t{4} << 20));
  for (uint32_t o = 0; o < kOwners; ++o) buffers[o].Clear(pool.For(o));
  CHECK(pool.LiveBytes() == 0);
}

}  // namespace
}  // namespace relgraph
