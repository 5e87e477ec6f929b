#include <doctest.h>

#include <random>
#include <unordered_map>

#include "engine/id_map.h"

namespace relgraph {
namespace {

TEST_CASE("id_map: interning is dense, stable and agrees with a hash map through growth") {
  IdMap map;
  std::unordered_map<UserId, InternalId> ref;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200'000; ++i) {
    // Mix of fresh random ids, repeats, and sequential ids that collide in low bits.
    const UserId u = i % 3 == 0   ? (rng() | 1)
                     : i % 3 == 1 ? UserId(i) * 4096 + 1
                                  : UserId(1 + rng() % 5000);
    const InternalId id = map.Intern(u);
    auto [it, inserted] = ref.try_emplace(u, static_cast<InternalId>(ref.size()));
    REQUIRE(id == it->second);
    REQUIRE(map.External(id) == u);
  }
  CHECK(map.size() == ref.size());
  for (const auto& [u, id] : ref) REQUIRE(map.Find(u) == id);
  CHECK(map.Find(10'002) == kNoInternalId);  // even and > 5000: no generator above makes it
}

TEST_CASE("id_map: id 0 is never found, even though 0 marks empty slots") {
  IdMap map;
  CHECK(map.Find(0) == kNoInternalId);
  for (UserId u = 1; u <= 1000; ++u) map.Intern(u);
  CHECK(map.Find(0) == kNoInternalId);
}

TEST_CASE("id_map: reserve keeps lookups right and memory is accounted") {
  IdMap map;
  map.Intern(42);
  map.Reserve(100'000);
  CHECK(map.Find(42) == 0);
  CHECK(map.MemoryBytes() >= 100'000 * (sizeof(UserId) + 12));
}

}  // namespace
}  // namespace relgraph
