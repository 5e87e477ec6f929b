// The feed's post index while it grows (engine/feed/feed_index.cpp): posts are moved to a larger
// table a few at a time by RunFanout, and every answer that depends on the index (duplicate
// ids, deletes, trims, author pages) must stay exact in the middle of a move, against a plain
// map of retained posts.
#include <doctest.h>

#include <deque>
#include <random>
#include <unordered_map>

#include "engine/feed/feed.h"
#include "engine/graph/graph.h"

namespace relgraph {

namespace {

struct Model {
  std::unordered_map<PostId, UserId> author_of;          // retained posts
  std::unordered_map<UserId, std::deque<PostId>> posts;  // per author, oldest first
};

void RunGrowth(uint64_t seed, bool fanout_between_writes) {
  CAPTURE(seed);
  GraphOptions go;
  go.rate_limit.enabled = false;
  Graph g(go);
  FeedOptions fo;
  fo.posts_per_author = 20;  // trims erase from both tables
  fo.fanout_batch = 64;      // a slow mover: both tables stay in use for long stretches
  Feed feed(fo, nullptr);
  std::mt19937_64 rng(seed);
  Model m;
  PostId next = 1;
  TimestampMs ts = 1'000;
  uint64_t growth_only_batches = 0;
  constexpr UserId kAuthors = 3'000;
  for (int op = 0; op < 120'000; ++op) {
    const uint32_t x = rng() % 100;
    const UserId a = 1 + rng() % kAuthors;
    if (x < 70) {
      const PostId id = next++;
      auto r = feed.Publish(g, a, id, 0, ++ts);
      REQUIRE(r.ok());
      auto& mine = m.posts[a];
      mine.push_back(id);
      m.author_of[id] = a;
      PostId evicted = 0;
      if (mine.size() > fo.posts_per_author) {
        evicted = mine.front();
        mine.pop_front();
        m.author_of.erase(evicted);
      }
      REQUIRE(r->evicted == evicted);
    } else if (x < 80 && !m.author_of.empty()) {
      // A held id is refused for any author.
      auto it = m.author_of.begin();
      std::advance(it,
                   static_cast<std::ptrdiff_t>(rng() % std::min<size_t>(m.author_of.size(), 64)));
      REQUIRE(feed.Publish(g, a, it->first, 0, ts).status().code() == Code::kAlreadyExists);
    } else if (x < 90) {
      const PostId id = 1 + rng() % next;
      const auto it = m.author_of.find(id);
      const UserId who = it != m.author_of.end() && rng() % 2 == 0 ? it->second : a;
      const bool held = it != m.author_of.end() && it->second == who;
      const Status s = feed.DeletePost(g, who, id);
      REQUIRE(s.ok() == held);
      if (held) {
        auto& mine = m.posts[who];
        mine.erase(std::find(mine.begin(), mine.end(), id));
        m.author_of.erase(it);
      }
    }
    if (fanout_between_writes && rng() % 4 == 0 && feed.fanout_pending()) {
      if (feed.Stats().fanout_queue == 0) ++growth_only_batches;
      feed.RunFanout(g);
    }
    if (op % 5'000 == 0) {
      REQUIRE(feed.Stats().posts == m.author_of.size());
      const Status s = feed.CheckInvariants(g);
      REQUIRE_MESSAGE(s.ok(), s.message());
    }
  }
  REQUIRE(feed.Stats().posts == m.author_of.size());
  // Every author's page equals the model, and no id is lost or duplicated.
  for (UserId a = 1; a <= kAuthors; ++a) {
    FeedPageRequest req;
    req.limit = kMaxFeedPageLimit;
    auto page = feed.UserPosts(g, a, req);
    REQUIRE(page.ok());
    const auto& want = m.posts[a];
    REQUIRE(page->entries.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i)
      CHECK(page->entries[i].post == want[want.size() - 1 - i]);
  }
  while (feed.fanout_pending()) feed.RunFanout(g);
  const FeedStats s = feed.Stats();
  CHECK(static_cast<double>(s.post_index_bytes) / static_cast<double>(s.posts) < 7.0);
  if (fanout_between_writes) CHECK(growth_only_batches > 0);  // the mover ran on its own
}

}  // namespace

TEST_CASE("feed index: exact answers while the index grows under the background mover") {
  RunGrowth(1, /*fanout_between_writes=*/true);
  RunGrowth(2, /*fanout_between_writes=*/true);
}

TEST_CASE("feed index: exact answers when writes outrun the mover (growth finished at once)") {
  RunGrowth(3, /*fanout_between_writes=*/false);
}

}  // namespace relgraph
