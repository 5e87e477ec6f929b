// ShortRun against the entries it was encoded from: random runs of every length at the ends of
// every width (peers of 1 to 32 bits, time spans of 0 to 42 bits, bases under and over 2^32),
// each encoded into a slab block of exactly its words with guard bytes around it, decoded
// field by field and whole, searched by peer and changed in its kMutual bits; and the slab's
// word ladder, whose blocks must not overlap.
#include "engine/graph/short_run.h"

#include <doctest.h>

#include <bit>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "engine/graph/slab_allocator.h"

namespace relgraph {
namespace {

// n entries in key order with peers below 2^peer_bits and times spanning < 2^span_bits.
std::vector<EdgeEntry> RandomRun(std::mt19937_64& rng, uint32_t n, unsigned peer_bits,
                                 unsigned span_bits, bool wide_base) {
  const uint64_t peer_mask = peer_bits >= 32 ? 0xffffffffu : (uint64_t{1} << peer_bits) - 1;
  const uint64_t span = span_bits == 0 ? 0 : (uint64_t{1} << span_bits) - 1;
  const uint64_t base_limit = std::min<uint64_t>(
      kMaxTimestampMs - span, wide_base ? kMaxTimestampMs : (uint64_t{1} << 32) - 1);
  const uint64_t low = wide_base ? uint64_t{1} << 32 : 0;
  const uint64_t base = low + rng() % (base_limit - low + 1);
  std::vector<uint64_t> times(n);
  times[0] = base;
  for (uint32_t i = 1; i < n; ++i) times[i] = base + (span == 0 ? 0 : rng() % (span + 1));
  std::sort(times.begin() + 1, times.end());
  if (n > 1 && span != 0 && rng() % 2 == 0) times[n - 1] = base + span;  // the widest
  std::vector<EdgeEntry> run(n);
  for (uint32_t i = 0; i < n; ++i) {
    const auto peer = static_cast<InternalId>(rng() & peer_mask);
    run[i] = MakeEntry(peer, static_cast<TimestampMs>(times[i]), rng() % 3 == 0);
  }
  return run;
}

void CheckRun(const std::vector<EdgeEntry>& want, std::mt19937_64& rng) {
  const auto n = static_cast<uint32_t>(want.size());
  uint64_t buffer[kShortRunMaxWords64];
  const uint32_t words = EncodeShortRun(want.data(), n, buffer);
  REQUIRE(words >= 2);
  // The block with 16 guard bytes on each side: no change may touch them (reads may go 7
  // bytes past the block, as the slab allows).
  std::vector<char> memory(4 * size_t{words} + 32, '\x5a');
  char* block = memory.data() + 16;
  std::memcpy(block, buffer, 4 * size_t{words});
  const ShortRun run(block, n);
  REQUIRE(run.words() == words);
  for (uint32_t i = 0; i < n; ++i) {
    REQUIRE(run.Peer(i) == InternalId{want[i].peer});
    REQUIRE(run.Ts(i) == EntryTs(want[i]));
    REQUIRE(run.Mutual(i) == EntryMutual(want[i]));
  }
  std::vector<EdgeEntry> all(n);
  run.Decode(all.data());
  for (uint32_t i = 0; i < n; ++i) {
    REQUIRE(InternalId{all[i].peer} == InternalId{want[i].peer});
    REQUIRE(EntryTs(all[i]) == EntryTs(want[i]));
    REQUIRE(EntryMutual(all[i]) == EntryMutual(want[i]));
  }
  // FindPeer gives the first index holding the peer, as a plain scan would.
  for (uint32_t i = 0; i < n; ++i)
    REQUIRE(run.FindPeer(want[i].peer) == FindPeer(want.data(), n, want[i].peer));
  const auto absent = static_cast<InternalId>(rng());
  REQUIRE(run.FindPeer(absent) == FindPeer(want.data(), n, absent));
  // kMutual changes in place touch only their bit.
  std::vector<EdgeEntry> changed = want;
  for (int k = 0; k < 4; ++k) {
    const uint32_t i = static_cast<uint32_t>(rng() % n);
    const bool mutual = rng() % 2 == 0;
    run.SetMutual(block, i, mutual);
    SetEntryMutual(changed[i], mutual);
  }
  for (uint32_t i = 0; i < n; ++i) {
    REQUIRE(run.Peer(i) == InternalId{changed[i].peer});
    REQUIRE(run.Ts(i) == EntryTs(changed[i]));
    REQUIRE(run.Mutual(i) == EntryMutual(changed[i]));
  }
  for (size_t g = 0; g < 16; ++g) {
    REQUIRE(memory[g] == '\x5a');
    REQUIRE(memory[memory.size() - 1 - g] == '\x5a');
  }
}

TEST_CASE("short run: every length at the ends of every width reads back exactly") {
  std::mt19937_64 rng(11);
  for (uint32_t n = kShortRunMin; n <= kShortRunMax; ++n) {
    for (unsigned peer_bits : {1u, 2u, 20u, 31u, 32u}) {
      for (unsigned span_bits : {0u, 1u, 10u, 30u, 41u, 42u}) {
        for (bool wide : {false, true}) {
          if (wide && span_bits == 42) continue;  // a base past 2^32 leaves less than 2^42
          for (int rep = 0; rep < 4; ++rep)
            CheckRun(RandomRun(rng, n, peer_bits, span_bits, wide), rng);
        }
      }
    }
  }
}

TEST_CASE("short run: words are the bits the widths need, rounded up to 32") {
  std::mt19937_64 rng(5);
  for (int rep = 0; rep < 2000; ++rep) {
    const uint32_t n = kShortRunMin + static_cast<uint32_t>(rng() % (kShortRunMax - 1));
    const auto run = RandomRun(rng, n, 1 + rng() % 32, rng() % 42, rng() % 2 == 0);
    uint32_t largest = 0;
    for (const EdgeEntry& e : run) largest = std::max(largest, uint32_t{e.peer});
    const unsigned peer_bits = std::max(1u, static_cast<unsigned>(std::bit_width(largest)));
    const auto span = static_cast<uint64_t>(EntryTs(run[n - 1]) - EntryTs(run[0]));
    const unsigned base_bits = (static_cast<uint64_t>(EntryTs(run[0])) >> 32) != 0 ? 42 : 32;
    const uint64_t bits =
        12 + base_bits + uint64_t{n} * (peer_bits + 1) + uint64_t{n - 1} * std::bit_width(span);
    uint64_t buffer[kShortRunMaxWords64];
    REQUIRE(EncodeShortRun(run.data(), n, buffer) == std::max<uint64_t>(2, (bits + 31) / 32));
  }
}

TEST_CASE("short run: an append fits the widths or changes nothing, and keeps the block's class") {
  std::mt19937_64 rng(17);
  SlabAllocator slab;
  int appended = 0, refused = 0;
  for (int rep = 0; rep < 20'000; ++rep) {
    const uint32_t n = kShortRunMin + static_cast<uint32_t>(rng() % (kShortRunMax - kShortRunMin));
    std::vector<EdgeEntry> run = RandomRun(rng, n + 1, 1 + rng() % 24, rng() % 40, rng() % 4 == 0);
    const EdgeEntry extra = run.back();  // newest of the n + 1
    run.pop_back();
    char* block = AllocateShortRun(run.data(), n, slab);
    const ShortRun before(block, n);
    const bool fits =
        (uint64_t{extra.peer} >> std::max(1u, static_cast<unsigned>(std::bit_width([&] {
                                            uint32_t m = 0;
                                            for (const EdgeEntry& e : run)
                                              m = std::max(m, uint32_t{e.peer});
                                            return m;
                                          }())))) == 0 &&
        std::bit_width(static_cast<uint64_t>(EntryTs(extra) - EntryTs(run[0]))) <=
            std::bit_width(static_cast<uint64_t>(EntryTs(run[n - 1]) - EntryTs(run[0])));
    REQUIRE(before.CanAppend(extra) == fits);
    char* after = AppendToShortRun(block, n, extra, slab);
    if (after == nullptr) {
      ++refused;
      for (uint32_t i = 0; i < n; ++i)
        REQUIRE(ShortRun(block, n).Peer(i) == InternalId{run[i].peer});
      FreeShortRun(block, n, slab);
    } else {
      ++appended;
      run.push_back(extra);
      const ShortRun grown(after, n + 1);
      for (uint32_t i = 0; i <= n; ++i) {
        REQUIRE(grown.Peer(i) == InternalId{run[i].peer});
        REQUIRE(grown.Ts(i) == EntryTs(run[i]));
        REQUIRE(grown.Mutual(i) == EntryMutual(run[i]));
      }
      FreeShortRun(after, n + 1, slab);
    }
    REQUIRE(slab.LiveBytes() == 0);  // freed by the size its contents give: the class held
  }
  CHECK(appended > 1000);
  CHECK(refused > 1000);
}

TEST_CASE("short run: an append writes only its run's words, in place or in a copy") {
  std::mt19937_64 rng(23);
  for (int rep = 0; rep < 5000; ++rep) {
    const uint32_t n = kShortRunMin + static_cast<uint32_t>(rng() % (kShortRunMax - kShortRunMin));
    std::vector<EdgeEntry> run = RandomRun(rng, n + 1, 1 + rng() % 32, rng() % 42, rng() % 2 == 0);
    const EdgeEntry extra = run.back();
    run.pop_back();
    uint64_t buffer[kShortRunMaxWords64];
    const uint32_t words = EncodeShortRun(run.data(), n, buffer);
    const ShortRun before(reinterpret_cast<const char*>(buffer), n);
    if (!before.CanAppend(extra)) continue;
    // The run copied into a block of exactly the grown size, guard bytes around it.
    const uint32_t grown = before.words_after_append();
    std::vector<char> memory(4 * size_t{grown} + 32, '\x5a');
    char* block = memory.data() + 16;
    std::memcpy(block, buffer, 4 * size_t{words});
    ShortRun(block, n).Append(block, extra);
    for (size_t g = 0; g < 16; ++g) {
      REQUIRE(memory[g] == '\x5a');
      REQUIRE(memory[memory.size() - 1 - g] == '\x5a');
    }
    run.push_back(extra);
    const ShortRun after(block, n + 1);
    REQUIRE(after.words() == grown);
    for (uint32_t i = 0; i <= n; ++i) REQUIRE(after.Peer(i) == InternalId{run[i].peer});
    REQUIRE(after.Ts(n) == EntryTs(extra));
    REQUIRE(after.Mutual(n) == EntryMutual(extra));
  }
}

TEST_CASE("slab: every word block ends 8 bytes or more before its 2 MiB slab does") {
  SlabAllocator slab;
  std::mt19937 rng(4);
  constexpr uintptr_t kSlab = uintptr_t{2} << 20;
  size_t checked = 0;
  std::vector<std::pair<void*, uint32_t>> live;
  for (int i = 0; i < 400'000; ++i) {
    // Large classes now and then leave slab tails that are cut into the small classes.
    const uint32_t words = rng() % 50 == 0 ? 200 + rng() % 800 : 1 + rng() % 20;
    void* b = slab.AllocateWords(words);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(b) & (kSlab - 1)) +
                          4 * uintptr_t{SlabAllocator::CapacityFor(std::max(words, 2u))};
    REQUIRE(end + 8 <= kSlab);
    ++checked;
    if (rng() % 3 == 0) {
      slab.FreeWords(b, words);
    } else {
      live.emplace_back(b, words);
    }
  }
  CHECK(slab.MemoryBytes() >= 8 * kSlab);  // the run spans many slabs
  for (const auto& [b, words] : live) slab.FreeWords(b, words);
  CHECK(slab.LiveBytes() == 0);
  CHECK(checked == 400'000);
}

TEST_CASE("slab: word blocks never overlap, entry blocks beside them neither, and both reuse") {
  SlabAllocator slab;
  std::mt19937 rng(9);
  struct Live {
    uint32_t* block;
    uint32_t words;
    bool entry_ladder;
    uint32_t stamp;
  };
  std::vector<Live> live;
  for (uint32_t i = 0; i < 30'000; ++i) {
    if (!live.empty() && rng() % 3 == 0) {
      const size_t k = rng() % live.size();
      for (uint32_t j = 0; j < live[k].words; ++j) REQUIRE(live[k].block[j] == live[k].stamp);
      if (live[k].entry_ladder) {
        slab.FreeBlock(live[k].block, live[k].words / 2);
      } else {
        slab.FreeWords(live[k].block, live[k].words);
      }
      live.erase(live.begin() + static_cast<ptrdiff_t>(k));
      continue;
    }
    const bool entry_ladder = rng() % 4 == 0;
    // An entry block of n 10-byte entries holds at least 2n whole words.
    const uint32_t words = entry_ladder ? 2 * (1 + rng() % 30) : 1 + rng() % 20;
    auto* b = static_cast<uint32_t*>(entry_ladder ? slab.AllocateBlock(words / 2)
                                                  : slab.AllocateWords(words));
    REQUIRE(reinterpret_cast<uintptr_t>(b) % 4 == 0);
    for (uint32_t j = 0; j < words; ++j) b[j] = i;
    live.push_back({b, words, entry_ladder, i});
  }
  const size_t before = slab.MemoryBytes();
  for (const Live& l : live) {
    if (!l.entry_ladder) slab.FreeWords(l.block, l.words);
  }
  for (const Live& l : live) {
    if (!l.entry_ladder) REQUIRE(slab.AllocateWords(l.words) != nullptr);
  }
  CHECK(slab.MemoryBytes() == before);  // every word block came from a free list
}

}  // namespace
}  // namespace relgraph
