#include "engine/feed/id_list_pair.h"

#include <doctest.h>

#include <random>
#include <utility>
#include <vector>

namespace relgraph {
namespace {

struct Model {
  std::vector<InternalId> first, second;
};

bool Same(const IdListPair& p, const Model& m) {
  return std::vector<InternalId>(p.first().begin(), p.first().end()) == m.first &&
         std::vector<InternalId>(p.second().begin(), p.second().end()) == m.second &&
         p.empty() == (m.first.empty() && m.second.empty());
}

// Random operations on many pairs sharing one pool, against two vectors per pair. Sizes run
// past the pool's largest block (128 ids) into malloc'd blocks and back.
TEST_CASE("id list pair: matches two vectors under random operations") {
  BlockPool pool(IdListPair::kEntryBytes);
  std::mt19937 rng(11);
  constexpr size_t kPairs = 64;
  std::vector<IdListPair> pairs(kPairs);
  std::vector<Model> models(kPairs);
  for (int step = 0; step < 200'000; ++step) {
    const size_t k = rng() % kPairs;
    IdListPair& p = pairs[k];
    Model& m = models[k];
    const InternalId id = static_cast<InternalId>(rng());
    switch (rng() % 16) {
      case 0:
        p.ClearFirst();
        m.first.clear();
        break;
      case 1:
        p.ClearSecond();
        m.second.clear();
        break;
      case 2:
        if (rng() % 8 == 0) {
          p.Clear(pool);
          m = Model{};
        }
        break;
      case 3: {  // moves keep the lists and the block
        IdListPair moved(std::move(p));
        CHECK(p.empty());
        p = std::move(moved);
        break;
      }
      default:
        if (rng() % 3 == 0 && m.second.size() < IdListPair::kMaxSecond) {
          p.AddSecond(id, pool);
          m.second.push_back(id);
        } else if (m.first.size() < 300) {
          p.AddFirst(id, pool);
          m.first.push_back(id);
        }
    }
    REQUIRE(Same(p, m));
    REQUIRE(p.BlockBytes() >= (m.first.size() + m.second.size()) * sizeof(InternalId));
  }
  for (size_t k = 0; k < kPairs; ++k) REQUIRE(Same(pairs[k], models[k]));  // no block overlaps
  size_t pooled = 0;
  for (const IdListPair& p : pairs) {
    if (p.BlockBytes() <= 2 * BlockPool::kMaxBlockEntries * sizeof(InternalId))
      pooled += p.BlockBytes();
  }
  CHECK(pool.LiveBytes() == pooled);
  for (IdListPair& p : pairs) p.Clear(pool);
  CHECK(pool.LiveBytes() == 0);
}

TEST_CASE("id list pair: one or two ids take one 8-byte block") {
  BlockPool pool(IdListPair::kEntryBytes);
  IdListPair p;
  p.AddFirst(7, pool);
  CHECK(p.BlockBytes() == 8);
  p.AddSecond(9, pool);
  CHECK(p.BlockBytes() == 8);
  CHECK(pool.LiveBytes() == 8);
  CHECK(sizeof(IdListPair) == 16);
  p.Clear(pool);
}

}  // namespace
}  // namespace relgraph
