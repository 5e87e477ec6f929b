#include <doctest.h>

#include <random>
#include <vector>

#include "engine/graph/slab_allocator.h"

namespace relgraph {
namespace {

TEST_CASE("slab: capacity classes are monotone, cover every size and keep slack bounded") {
  uint32_t prev = 0;
  for (uint32_t n = 1; n <= 100'000; ++n) {
    const uint32_t cap = SlabAllocator::CapacityFor(n);
    REQUIRE(cap >= n);
    REQUIRE(cap >= prev);
    if (n >= 8 && n <= 1024) REQUIRE(cap <= n * 5 / 4 + 1);  // four classes per doubling
    if (n > 1024) REQUIRE(cap <= n * 3 / 2 + 1);             // large blocks: 1.5x steps
    prev = cap;
  }
}

TEST_CASE("slab: blocks never overlap and freed blocks are reused") {
  SlabAllocator slab;
  std::mt19937 rng(3);
  struct Live {
    EdgeEntry* block;
    uint32_t n;
    uint32_t stamp;
  };
  std::vector<Live> live;
  for (uint32_t i = 0; i < 20'000; ++i) {
    if (!live.empty() && rng() % 3 == 0) {
      const size_t k = rng() % live.size();
      // Every entry still holds the stamp written at allocation: nothing overlapped it.
      for (uint32_t j = 0; j < live[k].n; ++j)
        REQUIRE(uint32_t{live[k].block[j].peer} == live[k].stamp);
      slab.Free(live[k].block, live[k].n);
      live.erase(live.begin() + static_cast<ptrdiff_t>(k));
      continue;
    }
    const uint32_t n = 1 + (rng() % 8 == 0 ? rng() % 3000 : rng() % 40);
    EdgeEntry* b = slab.Allocate(n);
    for (uint32_t j = 0; j < n; ++j) b[j] = MakeEntry(i, 0, false);
    live.push_back({b, n, i});
  }
  const size_t before = slab.MemoryBytes();
  for (const Live& l : live) slab.Free(l.block, l.n);
  std::vector<EdgeEntry*> again;
  for (const Live& l : live) again.push_back(slab.Allocate(l.n));
  CHECK(slab.MemoryBytes() == before);  // every block came from a free list
  for (size_t i = 0; i < live.size(); ++i) slab.Free(again[i], live[i].n);
}

}  // namespace
}  // namespace relgraph
