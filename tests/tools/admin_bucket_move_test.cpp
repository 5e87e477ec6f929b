// MoveBuckets' reading of a shard's INFO (tools/admin/bucket_move.h, InfoHoldsMap): a shard
// holds the map the tool wrote when its (generation, version) is at least that map's, so a
// shard still on a map from before a restore (a higher revision of a lower generation) is
// waited for; a shard without the generation field holds generation 1.
#include "tools/admin/bucket_move.h"

#include <doctest.h>

#include <random>

namespace relgraph::admin {
namespace {

TEST_CASE("a shard holds a map when its (generation, version) is at least the map's") {
  std::mt19937_64 rng(45);
  for (int i = 0; i < 5000; ++i) {
    const uint64_t gen = 1 + rng() % 3, ver = rng() % 20;
    const uint64_t held_gen = 1 + rng() % 3, held_ver = rng() % 20;
    std::map<std::string, uint64_t> f = {{"cluster_map_generation", held_gen},
                                         {"cluster_map_version", held_ver}};
    const bool want = held_gen > gen || (held_gen == gen && held_ver >= ver);
    CHECK(InfoHoldsMap(f, "cluster_map", gen, ver) == want);
    CHECK(!InfoHoldsMap(f, "cluster_outbox_map", gen, ver + 1));  // no such fields: version 0
  }
  // After a restore: generation 2 version 3 written; a shard still on generation 1 version 12.
  const std::map<std::string, uint64_t> stale = {{"cluster_map_generation", 1},
                                                 {"cluster_map_version", 12}};
  CHECK(!InfoHoldsMap(stale, "cluster_map", 2, 3));
  // A shard of a release without generations.
  const std::map<std::string, uint64_t> old = {{"cluster_outbox_map_version", 7}};
  CHECK(InfoHoldsMap(old, "cluster_outbox_map", 1, 7));
  CHECK(!InfoHoldsMap(old, "cluster_outbox_map", 2, 1));
}

}  // namespace
}  // namespace relgraph::admin
