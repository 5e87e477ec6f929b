// PairLists against a std::map of pairs: random adds and removes where a few peers are named by
// hundreds of owners (their reverse sets spill into vectors, then shrink back inline), checking
// finds, counts both ways, owners naming a peer, each owner's list, and CheckConsistent.
#include "engine/graph/pair_lists.h"

#include <doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "engine/graph/id_map.h"

namespace relgraph {
namespace {

TEST_CASE("pair lists: random adds and removes match a map, popular peers included") {
  constexpr uint32_t kUsers = 600;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    IdMap ids;
    for (UserId u = 1; u <= kUsers; ++u) ids.Intern(u * 7919);
    SlabAllocator slab;
    const FanContext ctx{slab, EntryOrder(ids), 8};
    PairLists lists;
    std::map<std::pair<InternalId, InternalId>, TimestampMs> want;  // (owner, peer) -> ts
    auto pick = [&]() -> InternalId {
      // One draw in three is one of five popular users.
      return static_cast<InternalId>(rng() % 3 == 0 ? rng() % 5 : rng() % kUsers);
    };
    for (int step = 0; step < 60'000; ++step) {
      const InternalId owner = pick(), peer = pick();
      if (owner == peer) continue;
      // Phases of growth and shrinkage take popular peers' sets up to hundreds and back.
      const bool grow = (step / 10'000) % 2 == 0;
      const bool present = want.contains({owner, peer});
      if (!present && (grow || rng() % 3 == 0)) {
        const TimestampMs ts = static_cast<TimestampMs>(rng() % 1000);
        lists.Add(owner, peer, ts, ctx);
        want[{owner, peer}] = ts;
      } else {
        REQUIRE(lists.Remove(owner, peer, ctx) == present);
        want.erase({owner, peer});
      }
      REQUIRE(lists.size() == want.size());
      if (step % 997 == 0) {
        REQUIRE(lists.CheckConsistent(ctx.order, "pairs").ok());
        for (InternalId u = 0; u < kUsers; u += 1 + static_cast<InternalId>(rng() % 40)) {
          std::multiset<InternalId> owners_want, peers_want;
          for (const auto& [pair, ts] : want) {
            if (pair.second == u) owners_want.insert(pair.first);
            if (pair.first == u) peers_want.insert(pair.second);
          }
          const std::vector<InternalId> owners = lists.OwnersNaming(u);
          const std::vector<InternalId> peers = lists.PeersOf(u);
          CHECK(std::multiset<InternalId>(owners.begin(), owners.end()) == owners_want);
          CHECK(std::multiset<InternalId>(peers.begin(), peers.end()) == peers_want);
          CHECK(lists.CountNaming(u) == owners_want.size());
          CHECK(lists.CountOwnedBy(u) == peers_want.size());
        }
      }
      if (step % 7 == 0) {
        const auto found = lists.Find(owner, peer);
        auto it = want.find({owner, peer});
        REQUIRE(found.has_value() == (it != want.end()));
        if (found) CHECK(*found == it->second);
      }
    }
    REQUIRE(lists.CheckConsistent(ctx.order, "pairs").ok());
    for (const auto& [pair, ts] : want) REQUIRE(lists.Remove(pair.first, pair.second, ctx));
    CHECK(lists.size() == 0);
    CHECK(lists.CountNaming(0) == 0);
    lists.Clear(slab);
  }
}

}  // namespace
}  // namespace relgraph
