// PostBuffer against a std::set of keys under random inserts, erases and trims, and its
// blocks' accounting in the slab.
#include <doctest.h>

#include <iterator>
#include <random>
#include <set>

#include "engine/feed/post_buffer.h"

namespace relgraph {

TEST_CASE("post buffer: packed fields round-trip") {
  const PostEntry e = PostEntry::Make(42, kMaxTimestampMs, 63, 0xbeef);
  CHECK(e.id == 42);
  CHECK(e.ts() == kMaxTimestampMs);
  CHECK(e.kind() == 63);
  CHECK(e.seq() == 0xbeef);
}

TEST_CASE("post buffer: random ops match a sorted set, capacity stays near the bound") {
  std::mt19937_64 rng(7);
  for (uint32_t bound : {1u, 5u, 64u, 300u}) {
    BlockPool slab(sizeof(PostEntry));
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

TEST_CASE(
    "post buffer: a growing ring on a tight pool leaves at most an eighth unused past its blocks") {
  for (uint32_t bound : {100u, 300u, 5000u}) {
    BlockPool slab(sizeof(PostEntry), BlockPool::Growth::kTight);
    PostBuffer b;
    for (uint32_t n = 1; n <= bound; ++n) {
      REQUIRE(b.Insert(PostEntry::Make(n, n, 0, 0), bound, slab));
      const size_t capacity = b.MemoryBytes() / sizeof(PostEntry);
      // The last step goes to the full size (bound + bound/16 + 4) at once.
      if (n > PostBuffer::kSlabMaxEntries)
        REQUIRE((capacity <= n + n / 8 + 1 || capacity == bound + bound / 16 + 4));
    }
    CHECK(b.MemoryBytes() <= (size_t{bound} + bound / 16 + 4) * sizeof(PostEntry));
    b.Clear(slab);
  }
}

TEST_CASE("post buffer: FindSeq finds by time and sequence number, hint right or wrong") {
  std::mt19937_64 rng(9);
  BlockPool slab(sizeof(PostEntry));
  PostBuffer b;
  PostId next_id = 1;
  TimestampMs now = 1000;
  auto linear = [&](TimestampMs ts, uint16_t seq) {
    for (uint32_t i = 0; i < b.size(); ++i) {
      if (b[i].ts() == ts && b[i].seq() == seq) return i;
    }
    return b.size();
  };
  for (int op = 0; op < 20000; ++op) {
    const uint32_t what = static_cast<uint32_t>(rng() % 10);
    if (what < 6) {  // mostly appends, some in the middle, many sharing a time
      now += static_cast<TimestampMs>(rng() % 3);
      const TimestampMs ts = rng() % 5 == 0 ? now - static_cast<TimestampMs>(rng() % 50) : now;
      // Numbers follow the newest entry's, as Feed gives them (wrapping past 0xffff), and
      // some are random, so that the position the number predicts is wrong.
      uint16_t seq = b.empty() ? 0xfff0 : b.SeqAfterNewest();
      if (rng() % 8 == 0) seq = static_cast<uint16_t>(rng());
      if (linear(ts, seq) < b.size()) continue;  // Feed keeps (time, number) unique
      b.Insert(PostEntry::Make(next_id++, ts, 0, seq), 300, slab);
    } else if (what < 7 && !b.empty()) {
      b.EraseAt(static_cast<uint32_t>(rng() % b.size()));
    }
    while (b.size() > 300) b.PopOldest();
    for (int probe = 0; probe < 4 && !b.empty(); ++probe) {
      const PostEntry& e = b[static_cast<uint32_t>(rng() % b.size())];
      CHECK(b.FindSeq(e.ts(), e.seq()) == linear(e.ts(), e.seq()));
      const auto seq = static_cast<uint16_t>(rng());
      const TimestampMs ts = now - static_cast<TimestampMs>(rng() % 60);
      CHECK(b.FindSeq(ts, seq) == linear(ts, seq));
    }
  }
  b.Clear(slab);
}

}  // namespace relgraph
