#include <doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "engine/graph/entry_array.h"
#include "engine/graph/id_map.h"

namespace relgraph {
namespace {

TEST_CASE("entry: time and mutual bit survive packing across the full 42-bit range") {
  for (TimestampMs ts : {TimestampMs{0}, TimestampMs{1}, TimestampMs{0xffffffff},
                         TimestampMs{1'700'000'000'123}, kMaxTimestampMs}) {
    for (bool mutual : {false, true}) {
      EdgeEntry e = MakeEntry(0xfffffffe, ts, mutual);
      CHECK(EntryTs(e) == ts);
      CHECK(EntryMutual(e) == mutual);
      SetEntryMutual(e, !mutual);
      CHECK(EntryTs(e) == ts);
      CHECK(EntryMutual(e) == !mutual);
    }
  }
}

TEST_CASE("entry_array: random inserts and erases keep key order and match a sorted vector") {
  std::vector<UserId> external(500);
  std::mt19937_64 rng(11);
  for (UserId& u : external) u = rng();
  IdMap ids;
  for (UserId u : external) {
    const InternalId id = ids.Intern(u);
    REQUIRE(id + 1 == ids.size());  // internal id = index
  }
  const EntryOrder order(ids);
  SlabAllocator slab;
  EntryArray a;
  std::vector<EntryKey> ref;
  for (int step = 0; step < 20'000; ++step) {
    const InternalId peer = static_cast<InternalId>(rng() % external.size());
    const size_t at = a.FindPeer(peer);
    if (at < a.size()) {
      auto it = std::find(ref.begin(), ref.end(), order.KeyOf(a[at]));
      REQUIRE(it != ref.end());
      ref.erase(it);
      a.EraseAt(at, slab);
    } else {
      const EdgeEntry e = MakeEntry(peer, static_cast<TimestampMs>(rng() % 20), rng() % 2);
      a.Insert(e, order, slab);
      ref.insert(std::upper_bound(ref.begin(), ref.end(), order.KeyOf(e)), order.KeyOf(e));
    }
    REQUIRE(a.size() == ref.size());
    if (step % 97 == 0) {
      for (size_t i = 0; i < ref.size(); ++i) REQUIRE(order.KeyOf(a[i]) == ref[i]);
      const EntryKey probe{static_cast<TimestampMs>(rng() % 20), rng()};
      REQUIRE(a.Rank(probe, order) ==
              static_cast<size_t>(std::lower_bound(ref.begin(), ref.end(), probe) - ref.begin()));
    }
  }
  a.Clear(slab);
  CHECK(a.empty());
}

}  // namespace
}  // namespace relgraph
