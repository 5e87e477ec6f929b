// PostIndex against a map of id -> author under random inserts, erases and the owner's
// rebuilds. The index may name extra candidates (fingerprint matches) but never miss the true
// author, and erasing by (id, author) must never take away the slot another post relies on.
#include <doctest.h>

#include <random>
#include <unordered_map>

#include "engine/feed/post_index.h"

namespace relgraph {

namespace {

bool HasCandidate(const PostIndex& index, PostId id, InternalId author) {
  bool found = false;
  index.ForEachCandidate(id, [&](InternalId a) { return found = (a == author); });
  return found;
}

size_t CandidateCount(const PostIndex& index, PostId id) {
  size_t n = 0;
  index.ForEachCandidate(id, [&](InternalId) {
    ++n;
    return false;
  });
  return n;
}

// What Feed does when the index asks for growth: a larger table, every post again.
void Rebuild(PostIndex& index, const std::unordered_map<PostId, InternalId>& posts) {
  index.Reset(index.GrownBuckets());
  for (const auto& [id, a] : posts) index.Insert(id, a);
}

void RunRandom(uint64_t seed, PostId id_space, InternalId authors, int ops) {
  std::mt19937_64 rng(seed);
  PostIndex index;
  std::unordered_map<PostId, InternalId> want;
  size_t rebuilds = 0;
  for (int op = 0; op < ops; ++op) {
    const PostId id = rng() % id_space + 1;
    const auto it = want.find(id);
    if (rng() % 3 != 0) {
      if (it == want.end()) {
        const auto a = static_cast<InternalId>(rng() % authors);
        index.Insert(id, a);
        want[id] = a;
        if (index.NeedsGrowth()) {
          Rebuild(index, want);
          ++rebuilds;
          REQUIRE_FALSE(index.NeedsGrowth());
        }
      }
    } else if (it != want.end()) {
      REQUIRE(index.Erase(id, it->second));
      want.erase(it);
    } else {
      // Erasing an absent post may only succeed by chance (fingerprint match), never for an
      // author with no post at all.
      CHECK_FALSE(index.Erase(id, authors + 1));
    }
    REQUIRE(index.size() == want.size());
    if (op % 997 == 0) {
      for (const auto& [k, a] : want) REQUIRE(HasCandidate(index, k, a));
    }
  }
  for (const auto& [k, a] : want) REQUIRE(HasCandidate(index, k, a));
  CHECK(rebuilds > 0);
  // Fingerprints keep false candidates rare: about 2 * 4 * load / 255 per absent id.
  size_t extra = 0, probes = 0;
  for (PostId id = id_space + 1; id <= id_space + 20000; ++id, ++probes)
    extra += CandidateCount(index, id);
  CHECK(static_cast<double>(extra) / static_cast<double>(probes) < 0.05);
}

}  // namespace

TEST_CASE("post index: random inserts and erases keep every author among the candidates") {
  RunRandom(11, 20000, 1000, 300000);      // many authors
  RunRandom(12, 5000, 2, 200000);          // two authors: slots of one author share fingerprints
  RunRandom(13, 1 << 30, 100000, 200000);  // sparse ids, mostly inserts: many rebuilds
}

TEST_CASE("post index: load stays high and bounded across growth") {
  PostIndex index;
  std::unordered_map<PostId, InternalId> posts;
  std::mt19937_64 rng(5);
  double min_load_after_first_rebuilds = 1.0;
  for (int i = 0; i < 400000; ++i) {
    const PostId id = rng() | 1;
    if (posts.count(id) != 0) continue;
    posts[id] = static_cast<InternalId>(i);
    index.Insert(id, static_cast<InternalId>(i));
    if (index.NeedsGrowth()) Rebuild(index, posts);
    const double load = static_cast<double>(index.size()) /
                        static_cast<double>(index.buckets() * PostIndex::kSlotsPerBucket);
    REQUIRE(load <= 0.93);
    if (i > 10000) min_load_after_first_rebuilds = std::min(min_load_after_first_rebuilds, load);
  }
  CHECK(min_load_after_first_rebuilds > 0.8);
  // 20 bytes a bucket of four: under 6.3 bytes a post at the lowest load seen.
  CHECK(static_cast<double>(index.MemoryBytes()) / static_cast<double>(index.size()) < 7.0);
  for (const auto& [id, a] : posts) REQUIRE(HasCandidate(index, id, a));
}

}  // namespace relgraph
