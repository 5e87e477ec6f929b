// PostStore against a model (per author, the newest K posts by (time, id)): random publishes,
// deletes, forgets and posts leaving, through index growth and a ring move, with every
// lookup and the invariants checked along the way.
#include "engine/feed/post_store.h"

#include <doctest.h>

#include <map>
#include <random>
#include <set>

namespace relgraph {
namespace {

using Key = std::pair<TimestampMs, PostId>;  // the ring order

TEST_CASE("post store: random writes agree with a model of the newest K per author") {
  constexpr uint32_t kK = 8;
  constexpr InternalId kAuthors = 300;
  Graph g;
  for (UserId u = 1; u <= kAuthors; ++u) g.InternUser(u);
  PostStore store(kK);
  std::map<InternalId, std::set<Key>> model;
  std::map<PostId, InternalId> holder;
  std::set<PostId> leaving;
  std::mt19937_64 rng(11);
  PostId next_post = 1;
  for (int step = 0; step < 60'000; ++step) {
    const auto a = static_cast<InternalId>(rng() % kAuthors);
    const int dice = static_cast<int>(rng() % 100);
    if (dice < 70) {
      // Few distinct times, so that sequence numbers share milliseconds.
      const TimestampMs ts = 1'000 + static_cast<TimestampMs>(rng() % 50);
      const PostId post = next_post++;
      auto added = store.Add(a, post, ts, static_cast<uint8_t>(rng() % 64), kAuthors, a + 1);
      REQUIRE(added.ok());
      auto& mine = model[a];
      const bool retained = mine.size() < kK || Key{ts, post} > *mine.begin();
      REQUIRE(added->retained == retained);
      if (!retained) continue;
      REQUIRE(added->entry.id == post);
      mine.insert({ts, post});
      holder[post] = a;
      PostId trimmed = 0;
      if (mine.size() > kK) {
        trimmed = mine.begin()->second;
        mine.erase(mine.begin());
        holder.erase(trimmed);
      }
      REQUIRE(added->trimmed.id == trimmed);
      if (trimmed != 0 && rng() % 2 == 0) {
        store.AddLeaving(a, added->trimmed);
        leaving.insert(trimmed);
      }
    } else if (dice < 85 && !model[a].empty()) {
      const Key victim = *std::next(model[a].begin(), rng() % model[a].size());
      REQUIRE(store.Holds(a, victim.second));
      const PostEntry e = store.Remove(a, victim.second);
      REQUIRE(e.id == victim.second);
      REQUIRE(e.ts() == victim.first);
      model[a].erase(victim);
      holder.erase(victim.second);
      store.AddLeaving(a, e);
      leaving.insert(e.id);
      REQUIRE(store.LeavingIdOf(InboxEntry::Of(store.RingSlot(a), e)) == e.id);
    } else if (dice < 95 && !leaving.empty()) {
      const PostId post = *leaving.begin();
      store.EraseLeaving(post);
      leaving.erase(post);
    } else if (dice < 96) {
      store.Forget(a);
      for (const Key& k : model[a]) holder.erase(k.second);
      model[a].clear();
    } else {
      // The background work: some index growth and, now and then, a move of the rings.
      if (store.index_growing()) store.GrowIndexStep(64);
      if (step % 5000 == 0) store.BeginRingMove();
      if (store.rings_moving()) store.MoveRings(16);
    }
    if (step % 2000 == 0)
      REQUIRE_MESSAGE(store.CheckInvariants(g).ok(), store.CheckInvariants(g).ToString());
  }
  REQUIRE(store.CheckInvariants(g).ok());
  CHECK(store.posts() == holder.size());
  CHECK(store.leaving_count() == leaving.size());
  for (const auto& [post, a] : holder) REQUIRE(store.HolderOf(post) == a);
  for (PostId post : leaving) CHECK(store.HolderOf(post) == kNoInternalId);
  for (const auto& [a, keys] : model) {
    const PostBuffer* ring = store.RingOf(a);
    REQUIRE(ring != nullptr);
    REQUIRE(ring->size() == keys.size());
    uint32_t i = 0;
    for (const Key& k : keys) {
      CHECK((*ring)[i].id == k.second);
      CHECK(store.IdOfEntry(InboxEntry::Of(store.RingSlot(a), (*ring)[i])) == k.second);
      ++i;
    }
  }
}

TEST_CASE("post store: replay is idempotent and honours the evicted post") {
  Graph g;
  g.InternUser(1);
  PostStore store(2);
  REQUIRE(store.Replay(0, 10, 100, 0, 0, 1).ok());
  REQUIRE(store.Replay(0, 10, 100, 0, 0, 1).ok());  // again: nothing changes
  REQUIRE(store.Replay(0, 11, 101, 0, 0, 1).ok());
  REQUIRE(store.Replay(0, 12, 102, 0, /*evicted=*/10, 1).ok());
  CHECK(store.posts() == 2);
  CHECK(store.HolderOf(10) == kNoInternalId);
  CHECK(store.HolderOf(12) == 0);
  REQUIRE(store.Replay(0, 13, 103, 0, /*evicted=*/13, 1).ok());  // published and trimmed at once
  CHECK(store.HolderOf(13) == kNoInternalId);
  CHECK(store.CheckInvariants(g).ok());
}

TEST_CASE("post store: the 65,537th post of one millisecond is refused while others leave") {
  Graph g;
  g.InternUser(1);
  PostStore store(50'000);
  for (PostId p = 1; p <= 50'000; ++p) REQUIRE(store.Add(0, p, 7, 0, 1, 1)->retained);
  // Delete 15,536 of them and keep them leaving: their numbers stay taken.
  for (PostId p = 1; p <= 15'536; ++p) store.AddLeaving(0, store.Remove(0, p));
  for (PostId p = 50'001; p <= 65'536; ++p) REQUIRE(store.Add(0, p, 7, 0, 1, 1)->retained);
  auto full = store.Add(0, 70'000, 7, 0, 1, 1);
  CHECK(full.status().code() == Code::kLimitExceeded);
  store.EraseLeaving(1);  // one number frees up
  CHECK(store.Add(0, 70'000, 7, 0, 1, 1).ok());
  CHECK(store.CheckInvariants(g).ok());
}

}  // namespace
}  // namespace relgraph
