// FlatHashMap against std::unordered_map: random inserts, finds and erases, including keys
// chosen to share a home slot (long runs that wrap around the array's end), where backward-
// shift deletion must keep every other key reachable.
#include "engine/mem/flat_hash_map.h"

#include <doctest.h>

#include <random>
#include <unordered_map>

namespace relgraph {
namespace {

struct Value {
  int64_t ts;
  uint32_t pos;
};

void CheckSame(const FlatHashMap<Value>& got, const std::unordered_map<uint64_t, Value>& want) {
  REQUIRE(got.size() == want.size());
  size_t seen = 0;
  got.ForEach([&](uint64_t key, const Value& v) {
    ++seen;
    auto it = want.find(key);
    REQUIRE(it != want.end());
    CHECK(it->second.ts == v.ts);
  });
  CHECK(seen == want.size());
  for (const auto& [key, v] : want) {
    const Value* found = got.Find(key);
    REQUIRE(found != nullptr);
    CHECK(found->ts == v.ts);
    CHECK(found->pos == v.pos);
  }
}

TEST_CASE("flat hash map: random operations match std::unordered_map") {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    FlatHashMap<Value> got;
    std::unordered_map<uint64_t, Value> want;
    // Small key spaces force collisions and long runs; seed 3+ also uses keys that differ only
    // in bits the hash mixes into the same home.
    const uint64_t space = seed <= 2 ? 64 : (seed <= 4 ? 5'000 : ~uint64_t{0} - 1);
    for (int op = 0; op < 200'000; ++op) {
      const uint64_t key = rng() % space;
      const int dice = static_cast<int>(rng() % 10);
      if (dice < 5) {
        const Value v{static_cast<int64_t>(rng() % 1000), static_cast<uint32_t>(op)};
        auto [slot, added] = got.Insert(key, v);
        const bool want_added = want.emplace(key, v).second;
        REQUIRE(added == want_added);
        CHECK(slot->ts == want.at(key).ts);
        if (!added && rng() % 2) {  // update in place through the returned pointer
          slot->pos = static_cast<uint32_t>(op);
          want.at(key).pos = static_cast<uint32_t>(op);
        }
      } else if (dice < 8) {
        Value removed{-1, 0};
        auto it = want.find(key);
        REQUIRE(got.Erase(key, &removed) == (it != want.end()));
        if (it != want.end()) {
          CHECK(removed.ts == it->second.ts);
          CHECK(removed.pos == it->second.pos);
          want.erase(it);
        }
      } else {
        const Value* f = got.Find(key);
        auto it = want.find(key);
        REQUIRE((f != nullptr) == (it != want.end()));
        if (f != nullptr) CHECK(f->pos == it->second.pos);
      }
      if (op % 20'000 == 0) CheckSame(got, want);
    }
    CheckSame(got, want);
    // Emptied key by key, it finds nothing and keeps its capacity.
    const size_t capacity = got.capacity();
    for (const auto& [key, v] : want) REQUIRE(got.Erase(key));
    CHECK(got.size() == 0);
    CHECK(got.capacity() == capacity);
    CHECK(got.Find(0) == nullptr);
  }
}

TEST_CASE("flat hash map: a run that wraps past the last slot survives erasing its head") {
  FlatHashMap<Value> map;
  // Keys whose homes are the last slots of a 16-slot array: insert enough of them to wrap.
  std::vector<uint64_t> keys;
  for (uint64_t k = 0; keys.size() < 6; ++k) {
    if (((k * 0x9E3779B97F4A7C15ULL) >> 60) >= 14) keys.push_back(k);
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    REQUIRE(map.Insert(keys[i], Value{static_cast<int64_t>(i), 0}).second);
  }
  REQUIRE(map.capacity() == 16);
  for (size_t i = 0; i < keys.size(); ++i) {
    REQUIRE(map.Erase(keys[i]));
    for (size_t j = i + 1; j < keys.size(); ++j) {
      const Value* v = map.Find(keys[j]);
      REQUIRE(v != nullptr);
      CHECK(v->ts == static_cast<int64_t>(j));
    }
  }
  CHECK(map.size() == 0);
}

TEST_CASE("flat hash map: grows at 7/8 load and clears to nothing") {
  FlatHashMap<Value> map;
  for (uint64_t k = 0; k < 14; ++k) map.Insert(k * 977, Value{1, 0});
  CHECK(map.capacity() == 16);
  map.Insert(99'999, Value{1, 0});
  CHECK(map.capacity() == 32);
  CHECK(map.MemoryBytes() == 32 * 24);
  map.Clear();
  CHECK(map.size() == 0);
  CHECK(map.MemoryBytes() == 0);
  CHECK(map.Find(977) == nullptr);
  CHECK(!map.Erase(977));
}

}  // namespace
}  // namespace relgraph
