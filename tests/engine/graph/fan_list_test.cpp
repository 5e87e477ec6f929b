// FanList against a std::set: random inserts, erases, finds, kMutual changes, ranks and
// descending copies, with chunk sizes small enough that lists go chunked, split, merge and
// flatten back many times, and cross the plain/packed boundary (kPackMin) both ways.
#include <doctest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "engine/graph/fan_list.h"
#include "engine/graph/id_map.h"
#include "tests/engine/graph/list_test_support.h"

namespace relgraph {
namespace {

void RunAgainstSet(uint32_t chunk_entries, uint64_t seed, int steps, uint32_t key_space) {
  std::mt19937_64 rng(seed);
  std::vector<UserId> external(key_space);
  for (UserId& u : external) u = rng();
  IdMap ids;
  for (UserId u : external) {
    const InternalId id = ids.Intern(u);
    REQUIRE(id + 1 == ids.size());  // internal id = index
  }
  SlabAllocator slab;
  const FanContext ctx{slab, EntryOrder(ids), chunk_entries};
  FanList list;
  std::set<EntryKey> ref;
  std::vector<InternalId> present_peer;  // peers present (each peer at most once here)
  std::vector<bool> is_present(key_space, false);
  std::vector<TimestampMs> ts_of(key_space, 0);
  std::vector<bool> mutual_of(key_space, false);
  TimestampMs clock = 0;
  for (int step = 0; step < steps; ++step) {
    // Phases of growth and shrinkage push the list across the short/chunked boundary.
    const bool grow = (step / 3000) % 2 == 0;
    const InternalId peer = static_cast<InternalId>(rng() % key_space);
    if (!is_present[peer] && (grow ? rng() % 4 != 0 : rng() % 4 == 0)) {
      // Mostly appends at the newest end, sometimes an old time (imports), often ties.
      const TimestampMs ts =
          rng() % 5 == 0 ? static_cast<TimestampMs>(rng() % (clock + 1)) : (clock += rng() % 2);
      const bool mutual = rng() % 3 == 0;
      list.Insert(MakeEntry(peer, ts, mutual), ctx);
      ref.insert({ts, external[peer]});
      is_present[peer] = true;
      ts_of[peer] = ts;
      mutual_of[peer] = mutual;
    } else if (is_present[peer] && rng() % 4 == 0) {
      // A follow-back or unfollow-back elsewhere flips the bit.
      mutual_of[peer] = !mutual_of[peer];
      REQUIRE(list.SetMutual({ts_of[peer], external[peer]}, mutual_of[peer], ctx.order));
    } else if (is_present[peer]) {
      REQUIRE(list.Erase({ts_of[peer], external[peer]}, ctx));
      ref.erase({ts_of[peer], external[peer]});
      is_present[peer] = false;
    } else {
      CHECK_FALSE(list.Erase({ts_of[peer], external[peer]}, ctx));
      CHECK_FALSE(list.SetMutual({ts_of[peer], external[peer]}, true, ctx.order));
      CHECK_FALSE(list.Get({ts_of[peer], external[peer]}, ctx.order).has_value());
    }
    REQUIRE(list.size() == ref.size());
    if (step % 53 == 0) {
      // Rank of a random key; a descending copy from a random end; find of a present entry.
      const EntryKey probe{static_cast<TimestampMs>(rng() % (clock + 2)), rng()};
      const size_t rank = static_cast<size_t>(std::distance(ref.begin(), ref.lower_bound(probe)));
      REQUIRE(list.Rank(probe, ctx.order) == rank);
      const size_t end = ref.empty() ? 0 : rng() % (ref.size() + 1);
      const uint32_t limit = 1 + static_cast<uint32_t>(rng() % 40);
      std::vector<EdgeEntry> out(limit);
      const uint32_t n = list.CopyDescending(end, limit, out.data());
      REQUIRE(n == std::min<size_t>(end, limit));
      auto it = std::next(ref.begin(), static_cast<ptrdiff_t>(end));
      for (uint32_t i = 0; i < n; ++i) {
        --it;
        REQUIRE(ctx.order.KeyOf(out[i]) == *it);
      }
      if (is_present[peer]) {
        const auto got = list.Get({ts_of[peer], external[peer]}, ctx.order);
        REQUIRE(got.has_value());
        REQUIRE(got->peer == peer);
        REQUIRE(EntryMutual(*got) == mutual_of[peer]);
      }
    }
  }
  // Full scan in order.
  std::vector<EntryKey> all;
  list.ForEach([&](const EdgeEntry& e) {
    all.push_back(ctx.order.KeyOf(e));
    REQUIRE(EntryMutual(e) == mutual_of[e.peer]);
  });
  CHECK(all == std::vector<EntryKey>(ref.begin(), ref.end()));
  // The runs a snapshot copies hold the same entries.
  std::vector<EntryKey> runs;
  list.ForEachRun([&](const EdgeEntry* run, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) runs.push_back(ctx.order.KeyOf(run[i]));
  });
  CHECK(runs == all);
  list.Clear(slab);
  CHECK(list.size() == 0);
}

TEST_CASE("fan_list: tiny chunks (4) split, merge and flatten correctly") {
  for (uint64_t seed = 1; seed <= 6; ++seed) RunAgainstSet(4, seed, 12'000, 400);
}

TEST_CASE("fan_list: odd chunk size (7) with many ties") {
  RunAgainstSet(7, 9, 20'000, 3000);
}

TEST_CASE("fan_list: chunks of 32, short lists plain and packed") {
  for (uint64_t seed = 1; seed <= 3; ++seed) RunAgainstSet(32, seed, 12'000, 200);
}

TEST_CASE("fan_list: default chunk size with a celebrity-sized list") {
  RunAgainstSet(256, 5, 60'000, 40'000);
}

}  // namespace
}  // namespace relgraph

namespace relgraph {
namespace {

// The slab bytes a short fan list of these entries holds: none, one plain entry (10 bytes in a
// 12-byte block), or a short run's class of words.
size_t SmallListBytes(const std::vector<EdgeEntry>& entries) {
  const auto n = static_cast<uint32_t>(entries.size());
  if (n == 0) return 0;
  if (n == 1) return 12;
  uint64_t buffer[kShortRunMaxWords64];
  return 4 * size_t{SlabAllocator::CapacityFor(
                 std::max(2u, EncodeShortRun(entries.data(), n, buffer)))};
}

// Lists that stay short, as in following_list_test: sizes wander in [0, 10] across the plain,
// short-run and packed forms (and, with chunks of 4 and 7, the chunked one), with 32- and
// 42-bit base times and spans up to years.
void RunShortLists(uint32_t chunk_entries, uint64_t seed) {
  std::mt19937_64 rng(seed);
  testing::InternedUsers users(rng, 600);
  SlabAllocator slab;
  const FanContext ctx{slab, EntryOrder(users.ids), chunk_entries};
  for (int round = 0; round < 300; ++round) {
    FanList list;
    std::vector<EdgeEntry> ref;  // in key order
    const auto key_less = [&](const EdgeEntry& a, const EdgeEntry& b) {
      return ctx.order.KeyOf(a) < ctx.order.KeyOf(b);
    };
    const testing::ShortListRound shape(rng);
    for (int step = 0; step < 60; ++step) {
      const InternalId peer = static_cast<InternalId>(rng() % users.external.size());
      auto it = std::find_if(ref.begin(), ref.end(),
                             [&](const EdgeEntry& e) { return InternalId{e.peer} == peer; });
      if (list.IsShort()) REQUIRE(list.ShortContainsPeer(peer) == (it != ref.end()));
      if (it != ref.end()) {
        const EntryKey key = ctx.order.KeyOf(*it);
        if (rng() % 3 == 0) {
          const bool mutual = !EntryMutual(*it);
          SetEntryMutual(*it, mutual);
          REQUIRE(list.SetMutual(key, mutual, ctx.order));
        } else {
          ref.erase(it);
          REQUIRE(list.Erase(key, ctx));
        }
      } else if (ref.size() < shape.top) {
        const TimestampMs ts =
            shape.NextTime(rng, ref.empty() ? shape.origin : EntryTs(ref.back()));
        const EdgeEntry e = MakeEntry(peer, ts, rng() % 2 == 0);
        list.Insert(e, ctx);
        ref.insert(std::upper_bound(ref.begin(), ref.end(), e, key_less), e);
      }
      REQUIRE(list.size() == ref.size());
      // A list under kPackMin holds exactly the block its entries call for.
      if (ref.size() < FanList::kPackMin && !list.chunked())
        REQUIRE(slab.LiveBytes() == SmallListBytes(ref));
      for (size_t i = 0; i < ref.size(); ++i) {
        const EntryKey key = ctx.order.KeyOf(ref[i]);
        REQUIRE(list.Rank(key, ctx.order) == i);
        const std::optional<EdgeEntry> got = list.Get(key, ctx.order);
        REQUIRE(got.has_value());
        REQUIRE(InternalId{got->peer} == InternalId{ref[i].peer});
        REQUIRE(EntryMutual(*got) == EntryMutual(ref[i]));
      }
      EdgeEntry out[10];
      const uint32_t n = list.CopyDescending(ref.size(), 10, out);
      REQUIRE(n == ref.size());
      for (uint32_t i = 0; i < n; ++i) {
        const EdgeEntry& want = ref[ref.size() - 1 - i];
        REQUIRE(InternalId{out[i].peer} == InternalId{want.peer});
        REQUIRE(EntryTs(out[i]) == EntryTs(want));
        REQUIRE(EntryMutual(out[i]) == EntryMutual(want));
      }
      size_t seen = 0;
      list.ForEach([&](const EdgeEntry& e) {
        REQUIRE(InternalId{e.peer} == InternalId{ref[seen].peer});
        ++seen;
      });
      REQUIRE(seen == ref.size());
    }
    list.Clear(slab);
    REQUIRE(slab.LiveBytes() == 0);
  }
}

TEST_CASE("fan_list: short lists cross plain, short run and packed both ways") {
  RunShortLists(256, 78);
}

TEST_CASE("fan_list: short lists with chunks of 4 and 7 cross into chunks and back") {
  RunShortLists(4, 79);
  RunShortLists(7, 80);
}

}  // namespace
}  // namespace relgraph
