// PostBuffer against a std::set of keys under random inserts, erases and trims, and its
// blocks' accounting in the slab.
#include <doctest.h>

#include <iterator>
#include <random>
#include <set>

#include "engine/post_buffer.h"

namespace relgraph {

TEST_CASE("post buffer: packed fields round-trip") {
  const PostEntry e = PostEntry::Make(42, kMaxTimestampMs, 63, 0xbeef);
  CHECK(e.id == 42);
  CHECK(e.ts() == kMaxTimestampMs);
  CHECK(e.kind() == 63);
  CHECK(e.tag() == 0xbeef);
}

TEST_CASE("post buffer: random ops match a sorted set, capacity stays near the bound") {
  std::mt19937_64 rng(7);
  for (uint32_t bound : {1u, 5u, 64u, 300u}) {
    SlabAllocator slab(sizeof(PostEntry));
    PostBuffer b;
    std::set<PostKey> want;
    for (int op = 0; op < 20000; ++op) {
      const uint32_t x = static_cast<uint32_t>(rng() % 10);
      if (x < 6) {
        const PostKey k{static_cast<TimestampMs>(rng() % 500), rng() % 50 + 1};
        CHECK(b.Insert(PostEntry::Make(k.post, k.ts, 1, 0), bound, slab) == want.insert(k).second);
      } else if (x < 8 && !want.empty()) {
        auto it = std::next(want.begin(), static_cast<long>(rng() % want.size()));
        const uint32_t at = b.Find(*it);
        REQUIRE(at < b.size());
        b.EraseAt(at);
        want.erase(it);
      } else if (!want.empty()) {
        CHECK(b.oldest().key() == *want.begin());
        b.PopOldest();
        want.erase(want.begin());
      }
      while (b.size() > bound) {  // the owner's trim
        b.PopOldest();
        want.erase(want.begin());
      }
      REQUIRE(b.size() == want.size());
      CHECK(b.MemoryBytes() <= (size_t{bound} + bound / 16 + 5) * sizeof(PostEntry));
      // Small blocks live in the slab, large ones outside it.
      const bool small = b.MemoryBytes() <= PostBuffer::kSlabMaxEntries * sizeof(PostEntry);
      CHECK(slab.LiveBytes() == (small ? b.MemoryBytes() : 0));
    }
    uint32_t i = 0;
    for (const PostKey& k : want) {
      CHECK(b[i].key() == k);
      CHECK(b.LowerBound(k) == i);
      ++i;
    }
    b.Clear(slab);
    CHECK(b.empty());
    CHECK(slab.LiveBytes() == 0);
  }
}
}  // namespace relgraph
