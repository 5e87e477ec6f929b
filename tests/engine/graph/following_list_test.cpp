#include <doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "engine/graph/following_list.h"
#include "engine/graph/id_map.h"
#include "tests/engine/graph/list_test_support.h"

namespace relgraph {
namespace {

struct Ref {
  EntryKey key;
  InternalId peer;
  bool mutual;
};

// Inserts the entry into the list and its Ref into `ref`, kept in key order.
void InsertBoth(FollowingList& list, std::vector<Ref>& ref, const Ref& r, const EntryOrder& order,
                SlabAllocator& slab) {
  list.Insert(MakeEntry(r.peer, r.key.ts, r.mutual), order, slab);
  ref.insert(std::upper_bound(ref.begin(), ref.end(), r,
                              [](const Ref& x, const Ref& y) { return x.key < y.key; }),
             r);
}

TEST_CASE("following_list: random inserts, erases and flag flips match a sorted vector") {
  std::mt19937_64 rng(21);
  testing::InternedUsers users(rng, 1500);
  const std::vector<UserId>& external = users.external;
  const EntryOrder order(users.ids);
  SlabAllocator slab;
  FollowingList list;
  std::vector<Ref> ref;
  for (int step = 0; step < 40'000; ++step) {
    // Grow towards the cap, then shrink: sizes sweep every capacity class up to ~1,000.
    const bool grow = (step / 8000) % 2 == 0;
    const InternalId peer = static_cast<InternalId>(rng() % external.size());
    const size_t at = list.FindPeer(peer);
    auto it = std::find_if(ref.begin(), ref.end(), [&](const Ref& r) { return r.peer == peer; });
    REQUIRE((at < list.size()) == (it != ref.end()));
    if (it != ref.end()) {
      REQUIRE(list.PeerAt(at) == peer);
      if (rng() % 3 == 0) {
        it->mutual = !it->mutual;
        list.SetMutual(at, it->mutual);
      } else if (!grow || rng() % 4 == 0) {
        ref.erase(it);
        list.EraseAt(at, slab);
      }
    } else if (grow || rng() % 4 == 0) {
      const TimestampMs ts = static_cast<TimestampMs>(rng() % 50) * 1'000'000'007LL;
      const bool mutual = rng() % 2;
      InsertBoth(list, ref, {{ts, external[peer]}, peer, mutual}, order, slab);
    }
    REQUIRE(list.size() == ref.size());
    // The block is always the one its size and width call for: none leaks, none is short.
    REQUIRE(slab.LiveBytes() == list.BlockBytes());
    if (step % 101 == 0) {
      for (size_t i = 0; i < ref.size(); ++i) {
        REQUIRE(list.PeerAt(i) == ref[i].peer);
        REQUIRE(list.TsAt(i) == ref[i].key.ts);
        REQUIRE(list.MutualAt(i) == ref[i].mutual);
      }
      const EntryKey probe{static_cast<TimestampMs>(rng() % 50) * 1'000'000'007LL, rng()};
      const size_t want = static_cast<size_t>(
          std::find_if(ref.begin(), ref.end(), [&](const Ref& r) { return !(r.key < probe); }) -
          ref.begin());
      REQUIRE(list.Rank(probe, order) == want);
      EdgeEntry out[7];
      const size_t end = ref.empty() ? 0 : rng() % (ref.size() + 1);
      const uint32_t n = list.CopyDescending(end, 7, out);
      REQUIRE(n == std::min<size_t>(end, 7));
      for (uint32_t i = 0; i < n; ++i) REQUIRE(InternalId{out[i].peer} == ref[end - 1 - i].peer);
    }
  }
  list.Clear(slab);
  CHECK(list.empty());
  CHECK(slab.LiveBytes() == 0);
}

TEST_CASE("following_list: appends that widen the time span, and erases at both ends") {
  // A list grows the way a user's follows come: the newest last, each later than the one
  // before by a gap that sometimes jumps, so the packed times widen as it fills (re-encoded)
  // and otherwise take the new entry in place. Erasing the oldest keeps the base.
  std::mt19937_64 rng(5);
  IdMap ids;
  for (UserId u = 1; u <= 3000; ++u) ids.Intern(u * 7919);
  const EntryOrder order(ids);
  SlabAllocator slab;
  FollowingList list;
  std::vector<EdgeEntry> ref;
  TimestampMs ts = 1'700'000'000'000;
  for (InternalId peer = 0; peer < 1500; ++peer) {
    ts += rng() % 8 == 0 ? static_cast<TimestampMs>(rng() % (uint64_t{1} << (peer % 37))) : 1;
    const EdgeEntry e = MakeEntry(peer, ts, rng() % 2 == 0);
    list.Insert(e, order, slab);
    ref.push_back(e);
    if (peer % 5 == 4) {
      const size_t at = peer % 2 == 0 ? 0 : ref.size() - 1;
      list.EraseAt(at, slab);
      ref.erase(ref.begin() + static_cast<ptrdiff_t>(at));
    }
    REQUIRE(list.size() == ref.size());
    REQUIRE(slab.LiveBytes() == list.BlockBytes());
    for (size_t i = 0; i < ref.size(); i += 1 + i / 16) {
      const InternalId want = ref[i].peer;  // a copy: REQUIRE binds a reference, and the
                                            // packed EdgeEntry's peer is 2-aligned
      REQUIRE(list.PeerAt(i) == want);
      REQUIRE(list.TsAt(i) == EntryTs(ref[i]));
      REQUIRE(list.MutualAt(i) == EntryMutual(ref[i]));
    }
  }
  while (!list.empty()) {
    const size_t at = rng() % list.size();
    list.EraseAt(at, slab);
    ref.erase(ref.begin() + static_cast<ptrdiff_t>(at));
    REQUIRE(slab.LiveBytes() == list.BlockBytes());
    if (!ref.empty()) REQUIRE(list.TsAt(ref.size() - 1) == EntryTs(ref.back()));
  }
  CHECK(slab.LiveBytes() == 0);
}

TEST_CASE("following_list: follows in sessions, unfollows anywhere, pages by rank") {
  // The way a user's list lives: follows come newest-first in bursts (gaps of seconds,
  // then days), sometimes at the same millisecond, now and then one back-dated (an import);
  // unfollows hit any entry. Checks every entry, rank and page against a sorted vector.
  std::mt19937_64 rng(8);
  testing::InternedUsers users(rng, 4000);
  const std::vector<UserId>& external = users.external;
  const EntryOrder order(users.ids);
  for (int round = 0; round < 6; ++round) {
    SlabAllocator slab;
    FollowingList list;
    std::vector<Ref> ref;
    std::vector<bool> in(external.size(), false);
    TimestampMs now = round % 2 == 0 ? 1'700'000'000'000 : 1'700'000'000;
    const auto target = static_cast<size_t>(20 + rng() % 1200);
    for (int step = 0; step < 6000; ++step) {
      const bool grow = ref.size() < target ? rng() % 5 != 0 : rng() % 2 == 0;
      if (grow) {
        InternalId peer;
        do peer = static_cast<InternalId>(rng() % external.size());
        while (in[peer]);
        const uint64_t kind = rng() % 20;
        now += kind < 3 ? 0 : kind < 17 ? rng() % 90 : rng() % 100'000'000;
        const TimestampMs ts = kind == 19 && now > 1'000'000 ? now - rng() % 1'000'000 : now;
        in[peer] = true;
        InsertBoth(list, ref, {{ts, external[peer]}, peer, rng() % 2 == 0}, order, slab);
      } else if (!ref.empty()) {
        const size_t at = rng() % ref.size();
        REQUIRE(list.FindPeer(ref[at].peer) == at);
        in[ref[at].peer] = false;
        list.EraseAt(at, slab);
        ref.erase(ref.begin() + static_cast<ptrdiff_t>(at));
      }
      REQUIRE(list.size() == ref.size());
      REQUIRE(slab.LiveBytes() == list.BlockBytes());
      if (step % 97 != 0 || ref.empty()) continue;
      std::vector<EdgeEntry> all(ref.size());
      list.Decode(all.data());
      for (size_t i = 0; i < ref.size(); ++i) {
        REQUIRE(InternalId{all[i].peer} == ref[i].peer);
        REQUIRE(EntryTs(all[i]) == ref[i].key.ts);
        REQUIRE(EntryMutual(all[i]) == ref[i].mutual);
        if (i % 7 == 0) {
          REQUIRE(list.TsAt(i) == ref[i].key.ts);
          REQUIRE(list.MutualAt(i) == ref[i].mutual);
          REQUIRE(list.Rank(ref[i].key, order) == i);
        }
      }
      const size_t end = rng() % (ref.size() + 1);
      EdgeEntry page[40];
      const uint32_t got = list.CopyDescending(end, 40, page);
      REQUIRE(got == std::min<size_t>(end, 40));
      for (uint32_t i = 0; i < got; ++i) {
        REQUIRE(InternalId{page[i].peer} == ref[end - 1 - i].peer);
        REQUIRE(EntryTs(page[i]) == ref[end - 1 - i].key.ts);
        REQUIRE(EntryMutual(page[i]) == ref[end - 1 - i].mutual);
      }
    }
    list.Clear(slab);
    CHECK(slab.LiveBytes() == 0);
  }
}

TEST_CASE("following_list: a long list erased past the most spare slots keeps its entries") {
  // Erases turn peer slots into spare ones up to 1,023; the next erase moves the gap area
  // down instead. A list longer than the default cap (a snapshot may hold one) gets there.
  std::mt19937_64 rng(31);
  SlabAllocator slab;
  std::vector<EdgeEntry> ref;
  TimestampMs ts = 1'700'000'000'000;
  for (uint32_t i = 0; i < 4000; ++i) {
    ts += static_cast<TimestampMs>(rng() % 4 == 0 ? rng() % 100'000'000 : rng() % 60'000);
    ref.push_back(MakeEntry(i, ts, rng() % 2 == 0));
  }
  FollowingList list;
  list.AppendRun(ref.data(), static_cast<uint32_t>(ref.size()), slab);
  for (int step = 0; step < 2500; ++step) {
    const size_t at = step % 3 == 0 ? ref.size() - 1 : rng() % ref.size();
    list.EraseAt(at, slab);
    ref.erase(ref.begin() + static_cast<ptrdiff_t>(at));
    REQUIRE(slab.LiveBytes() == list.BlockBytes());
    if (step % 50 != 0) continue;
    std::vector<EdgeEntry> all(list.size());
    list.Decode(all.data());
    REQUIRE(all.size() == ref.size());
    for (size_t i = 0; i < ref.size(); ++i) {
      REQUIRE(InternalId{all[i].peer} == InternalId{ref[i].peer});
      REQUIRE(EntryTs(all[i]) == EntryTs(ref[i]));
      REQUIRE(EntryMutual(all[i]) == EntryMutual(ref[i]));
    }
  }
  list.Clear(slab);
  CHECK(slab.LiveBytes() == 0);
}

TEST_CASE("following_list: FindPeer finds every position at every length around SIMD blocks") {
  IdMap ids;
  for (UserId u = 1; u <= 40; ++u) ids.Intern(u);
  const EntryOrder order(ids);
  SlabAllocator slab;
  for (uint32_t n = 0; n <= 33; ++n) {
    FollowingList list;
    for (uint32_t i = 0; i < n; ++i) list.Insert(MakeEntry(i, i, false), order, slab);
    for (uint32_t i = 0; i < n; ++i) REQUIRE(list.FindPeer(i) == i);
    REQUIRE(list.FindPeer(39) == n);
    list.Clear(slab);
  }
}

TEST_CASE("following_list: a list as long as its handle's size bits allow keeps its entries") {
  // The handle packs the block's address and the size into one word: at the largest size
  // neither may spill into the other.
  SlabAllocator slab;
  std::vector<EdgeEntry> entries;
  for (uint32_t i = 0; i < FollowingList::kMaxSize; ++i) {
    entries.push_back(MakeEntry(i, TimestampMs{1'700'000'000'000} + i, i % 3 == 0));
  }
  FollowingList list;
  list.AppendRun(entries.data(), static_cast<uint32_t>(entries.size()), slab);
  REQUIRE(list.size() == FollowingList::kMaxSize);
  const uint32_t last = FollowingList::kMaxSize - 1;
  CHECK(list.PeerAt(last) == last);
  CHECK(list.TsAt(last) == TimestampMs{1'700'000'000'000} + last);
  CHECK(list.MutualAt(last) == (last % 3 == 0));
  CHECK(list.FindPeer(last) == last);
  CHECK(list.FindPeer(last + 1) == list.size());
  list.EraseAt(0, slab);
  CHECK(list.size() == FollowingList::kMaxSize - 1);
  CHECK(list.PeerAt(0) == 1);
  CHECK(list.PeerAt(last - 1) == last);
  list.Clear(slab);
  CHECK(list.empty());
  CHECK(slab.LiveBytes() == 0);
}

}  // namespace
}  // namespace relgraph

namespace relgraph {
namespace {

// Lists that stay short: sizes wander in [0, 12], so every form (plain, short run, packed)
// and every boundary between them is crossed both ways, with times near 0 (a 32-bit base)
// and near 2^41 (a 42-bit one), spans of a millisecond to years, inserts at any place and
// runs appended at the end.
TEST_CASE("following_list: short lists cross plain, short run and packed both ways") {
  std::mt19937_64 rng(77);
  testing::InternedUsers users(rng, 600);
  const std::vector<UserId>& external = users.external;
  const EntryOrder order(users.ids);
  SlabAllocator slab;
  for (int round = 0; round < 300; ++round) {
    FollowingList list;
    std::vector<Ref> ref;
    const testing::ShortListRound shape(rng);
    for (int step = 0; step < 60; ++step) {
      const InternalId peer = static_cast<InternalId>(rng() % external.size());
      const size_t at = list.FindPeer(peer);
      auto it = std::find_if(ref.begin(), ref.end(), [&](const Ref& r) { return r.peer == peer; });
      REQUIRE((at < list.size()) == (it != ref.end()));
      if (it != ref.end()) {
        if (rng() % 3 == 0) {
          it->mutual = !it->mutual;
          list.SetMutual(at, it->mutual);
        } else {
          ref.erase(it);
          list.EraseAt(at, slab);
        }
      } else if (ref.size() < shape.top && rng() % 5 == 0) {
        // AppendRun, as loaders call it: one to three entries after every present one.
        std::vector<EdgeEntry> run;
        TimestampMs ts = ref.empty() ? shape.origin : ref.back().key.ts;
        for (uint64_t k = 1 + rng() % 3; k > 0; --k) {
          InternalId q = peer;
          while (
              list.FindPeer(q) < list.size() ||
              std::any_of(run.begin(), run.end(), [&](const EdgeEntry& e) { return e.peer == q; }))
            q = static_cast<InternalId>(rng() % external.size());
          ts += 1 + static_cast<TimestampMs>(rng() % (shape.span / 8 + 2));
          const bool mutual = rng() % 2;
          run.push_back(MakeEntry(q, ts, mutual));
          ref.push_back({{ts, external[q]}, q, mutual});
        }
        list.AppendRun(run.data(), static_cast<uint32_t>(run.size()), slab);
      } else if (ref.size() < shape.top) {
        const TimestampMs ts = shape.NextTime(rng, ref.empty() ? shape.origin : ref.back().key.ts);
        const bool mutual = rng() % 2;
        InsertBoth(list, ref, {{ts, external[peer]}, peer, mutual}, order, slab);
      }
      REQUIRE(list.size() == ref.size());
      REQUIRE(slab.LiveBytes() == list.BlockBytes());
      for (size_t i = 0; i < ref.size(); ++i) {
        REQUIRE(list.PeerAt(i) == ref[i].peer);
        REQUIRE(list.TsAt(i) == ref[i].key.ts);
        REQUIRE(list.MutualAt(i) == ref[i].mutual);
        REQUIRE(list.FindPeer(ref[i].peer) == i);
        REQUIRE(list.Rank(ref[i].key, order) == i);
      }
      EdgeEntry out[16];
      const uint32_t n = list.CopyDescending(ref.size(), 16, out);
      REQUIRE(n == ref.size());
      for (uint32_t i = 0; i < n; ++i) {
        REQUIRE(InternalId{out[i].peer} == ref[ref.size() - 1 - i].peer);
        REQUIRE(EntryTs(out[i]) == ref[ref.size() - 1 - i].key.ts);
        REQUIRE(EntryMutual(out[i]) == ref[ref.size() - 1 - i].mutual);
      }
    }
    list.Clear(slab);
    REQUIRE(slab.LiveBytes() == 0);
  }
}

}  // namespace
}  // namespace relgraph
