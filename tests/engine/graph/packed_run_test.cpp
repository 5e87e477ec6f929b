// PackedRun against a sorted vector of entries: random inserts (most of them the newest, as
// follows arrive), erases, kMutual changes, appends and truncations, with every read checked
// after each change; and the widths and bytes of runs at both ends of the ranges.
#include "engine/graph/packed_run.h"

#include <doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "engine/graph/id_map.h"

namespace relgraph {
namespace {

constexpr uint32_t kUsers = 3000;

// External ids out of internal order, so ties on time are broken by a different order.
UserId ExternalOf(uint32_t i) {
  return 1 + (uint64_t{i} * 7919) % 100'003;
}

struct Fixture {
  IdMap ids;
  SlabAllocator slab;
  Fixture() {
    for (uint32_t i = 0; i < kUsers; ++i) REQUIRE(ids.Intern(ExternalOf(i)) == i);
  }
};

void CheckSame(const PackedRun& run, const std::vector<EdgeEntry>& model, const EntryOrder& order,
               std::mt19937_64& rng) {
  REQUIRE(run.size() == model.size());
  for (uint32_t i = 0; i < model.size(); ++i) {
    REQUIRE(run.PeerAt(i) == InternalId{model[i].peer});
    REQUIRE(run.TsAt(i) == EntryTs(model[i]));
    REQUIRE(run.MutualAt(i) == EntryMutual(model[i]));
  }
  std::vector<EdgeEntry> all(model.size());
  run.Decode(all.data());
  for (size_t i = 0; i < model.size(); ++i)
    REQUIRE(InternalId{all[i].peer} == InternalId{model[i].peer});
  // Ranks and finds of present keys and of keys between them.
  for (int probe = 0; probe < 8 && !model.empty(); ++probe) {
    const EdgeEntry& e = model[rng() % model.size()];
    const EntryKey present = order.KeyOf(e);
    REQUIRE(run.Find(present, order) == order.Find(model.data(), model.size(), present));
    const EntryKey between{EntryTs(e) + static_cast<TimestampMs>(rng() % 3) - 1,
                           ExternalOf(static_cast<uint32_t>(rng() % kUsers))};
    REQUIRE(run.Rank(between, order) == order.LowerBound(model.data(), model.size(), between));
    REQUIRE(run.Find(between, order) == order.Find(model.data(), model.size(), between));
    const InternalId peer = static_cast<InternalId>(rng() % kUsers);
    REQUIRE(run.FindPeer(peer) == FindPeer(model.data(), model.size(), peer));
  }
  EdgeEntry page[20], want[20];
  const size_t end = model.empty() ? 0 : rng() % (model.size() + 1);
  const uint32_t got = run.CopyDescending(end, 20, page);
  REQUIRE(got == CopyRunDescending(model.data(), end, 20, want));
  for (uint32_t i = 0; i < got; ++i) REQUIRE(run.TsAt(0) <= EntryTs(page[i]));
  for (uint32_t i = 0; i < got; ++i) REQUIRE(InternalId{page[i].peer} == InternalId{want[i].peer});
}

TEST_CASE("packed_run: random changes agree with a sorted vector, reads checked after each") {
  for (const TimestampMs spread :
       {TimestampMs{50}, TimestampMs{86'400'000}, TimestampMs{1} << 40}) {
    CAPTURE(spread);
    Fixture f;
    const EntryOrder order(f.ids);
    std::mt19937_64 rng(static_cast<uint64_t>(spread));
    PackedRun run;
    std::vector<EdgeEntry> model;
    TimestampMs newest = 1'600'000'000'000;
    for (int step = 0; step < 6000; ++step) {
      const uint64_t op = rng() % 100;
      if (op < 55 && model.size() < 700) {
        // A follow: usually the newest (steps of at most a day, so times stay in their 42
        // bits), sometimes at a random time up to the spread before it.
        TimestampMs ts = newest;
        if (op < 40) {
          newest +=
              static_cast<TimestampMs>(rng() % (std::min<TimestampMs>(spread, 86'400'000) + 1));
          ts = newest;
        } else {
          ts = newest - static_cast<TimestampMs>(rng() % (spread + 1));
        }
        const EdgeEntry e = MakeEntry(static_cast<InternalId>(rng() % kUsers), ts, rng() % 4 == 0);
        const EntryKey key = order.KeyOf(e);
        if (order.Find(model.data(), model.size(), key) < model.size()) continue;
        model.insert(model.begin() +
                         static_cast<ptrdiff_t>(order.LowerBound(model.data(), model.size(), key)),
                     e);
        run.Insert(e, order, f.slab);
      } else if (op < 80 && !model.empty()) {
        const auto pos =
            static_cast<uint32_t>(rng() % 3 == 0 ? model.size() - 1 : rng() % model.size());
        model.erase(model.begin() + pos);
        run.EraseAt(pos, f.slab);
      } else if (op < 92 && !model.empty()) {
        const auto pos = static_cast<uint32_t>(rng() % model.size());
        const bool mutual = rng() % 2 == 0;
        SetEntryMutual(model[pos], mutual);
        run.SetMutual(pos, mutual);
      } else if (op < 96) {
        // A run of newer entries (a chunk merge).
        std::vector<EdgeEntry> more;
        for (int k = 0; k < 10; ++k) {
          newest +=
              1 + static_cast<TimestampMs>(rng() % (std::min<TimestampMs>(spread, 86'400'000) + 1));
          more.push_back(MakeEntry(static_cast<InternalId>(rng() % kUsers), newest, false));
        }
        model.insert(model.end(), more.begin(), more.end());
        run.AppendRun(more.data(), static_cast<uint32_t>(more.size()), f.slab);
      } else if (op < 99) {
        const auto keep = static_cast<uint32_t>(model.empty() ? 0 : rng() % model.size());
        model.resize(keep);
        run.Truncate(keep, f.slab);
      } else {
        model.clear();
        run.Clear(f.slab);
      }
      CheckSame(run, model, order, rng);
      REQUIRE(f.slab.LiveBytes() == run.BlockBytes());  // one block, and the right class
    }
    run.Clear(f.slab);
    CHECK(f.slab.LiveBytes() == 0);
  }
}

TEST_CASE("packed_run: the widths follow the largest peer and the span, to 32 and 42 bits") {
  SlabAllocator slab;
  PackedRun run;
  std::vector<EdgeEntry> entries = {MakeEntry(0, 0, true), MakeEntry(5, 0, false),
                                    MakeEntry(0xfffffffe, 17, true),
                                    MakeEntry(3, kMaxTimestampMs, true)};
  run.AppendRun(entries.data(), 2, slab);  // peers 0 and 5, one time
  CHECK(run.peer_bits() == 3);
  CHECK(run.time_bits() == 0);
  CHECK(run.PeerAt(1) == 5);
  CHECK(run.MutualAt(0));
  run.AppendRun(entries.data() + 2, 2, slab);
  CHECK(run.peer_bits() == 32);
  CHECK(run.time_bits() == 42);
  for (uint32_t i = 0; i < 4; ++i) {
    CHECK(run.PeerAt(i) == InternalId{entries[i].peer});
    CHECK(run.TsAt(i) == EntryTs(entries[i]));
    CHECK(run.MutualAt(i) == EntryMutual(entries[i]));
  }
  run.Clear(slab);
}

TEST_CASE("packed_run: a run of a session's follows takes far less than plain entries") {
  // 256 fans within a day, among two million users: 21-bit peers, 27-bit times.
  SlabAllocator slab;
  PackedRun run;
  std::mt19937_64 rng(3);
  std::vector<EdgeEntry> entries;
  TimestampMs ts = 1'700'000'000'000;
  for (int i = 0; i < 256; ++i) {
    ts += static_cast<TimestampMs>(rng() % 300'000);
    entries.push_back(MakeEntry(static_cast<InternalId>(rng() % 2'000'000), ts, i % 5 == 0));
  }
  run.AppendRun(entries.data(), 256, slab);
  const unsigned w = run.peer_bits() + 1 + run.time_bits();
  CHECK(w <= 21 + 1 + 27);
  // The header, the packed entries, and at most the capacity class's slack.
  CHECK(run.BlockBytes() >= 8 + 256 * w / 8);
  CHECK(run.BlockBytes() <= (8 + 256 * w / 8) * 5 / 4 + 10);
  CHECK(run.BlockBytes() < 256 * sizeof(EdgeEntry) * 2 / 3);
  // Appending the newest entry that fits (here at the newest time) writes in place: the widths
  // stay.
  run.InsertAt(256, MakeEntry(7, ts, false), slab);
  CHECK(run.peer_bits() + 1 + run.time_bits() == w);
  CHECK(run.TsAt(256) == ts);
  CHECK(run.PeerAt(256) == 7);
  run.Clear(slab);
}

}  // namespace
}  // namespace relgraph
