// PostIndex against std::unordered_map under random inserts and erases (backward-shift
// deletion must never lose an entry of a probe run).
#include <doctest.h>

#include <random>
#include <unordered_map>

#include "engine/post_index.h"

namespace relgraph {

TEST_CASE("post index: random inserts and erases match a map") {
  std::mt19937_64 rng(11);
  PostIndex index;
  std::unordered_map<PostId, InternalId> want;
  for (int op = 0; op < 300000; ++op) {
    // A small id space makes long probe runs and many erases of present ids.
    const PostId id = rng() % 20000 + 1;
    if (rng() % 3 != 0) {
      if (want.count(id) == 0) {
        const InternalId a = static_cast<InternalId>(rng() % 1000);
        index.Insert(id, a);
        want[id] = a;
      }
    } else {
      CHECK(index.Erase(id) == (want.erase(id) == 1));
    }
    if (op % 1000 == 0) {
      for (const auto& [k, a] : want) REQUIRE(index.Find(k) == a);
    }
  }
  CHECK(index.size() == want.size());
  for (PostId id = 1; id <= 20000; ++id) {
    auto it = want.find(id);
    CHECK(index.Find(id) == (it == want.end() ? kNoInternalId : it->second));
  }
}
}  // namespace relgraph
