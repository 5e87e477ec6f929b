// Feed statistics, digest and the copy of its durable state (posts, mutes, hides) that
// snapshots write.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "engine/feed_internal.h"

namespace relgraph {

FeedStats Feed::Stats() const {
  FeedStats s;
  s.posts = IndexedPosts();
  // Free slab blocks and the untouched rest of each slab count against their side.
  s.post_index_bytes = index_.MemoryBytes() + grown_index_.MemoryBytes();
  s.post_bytes =
      ring_bytes_ + (ring_slab_.MemoryBytes() - ring_slab_.LiveBytes()) + s.post_index_bytes;
  s.feed_user_bytes = feed_users_ * sizeof(FeedUser) +
                      users_.capacity() * sizeof(std::unique_ptr<FeedUser>);
  s.inboxes = inboxes_;
  s.inbox_entries = inbox_entries_;
  const size_t live_sides = sides_.size() - free_sides_.size();
  s.inbox_bytes =
      inbox_bytes_ + (inbox_slab_.MemoryBytes() - inbox_slab_.LiveBytes()) +
      (inbox_pool_.MemoryBytes() - inboxes_ * sizeof(Inbox)) +
      (sides_.capacity() - live_sides) * sizeof(InboxSide) +
      (inbox_of_.capacity() + free_slots_.capacity() + free_sides_.capacity()) * sizeof(uint32_t);
  s.celebrities = celebrities_;
  s.fanout_queue = tasks_.size();
  s.fanout_inserts = fanout_inserts_;
  s.inbox_rebuilds = rebuilds_;
  s.inbox_drops = drops_;
  s.watermark_fallbacks = fallbacks_;
  return s;
}

void Feed::CopyUsers(const Graph& g, size_t begin, size_t end, std::vector<UserState>* out) const {
  end = std::min(end, users_.size());
  for (size_t u = begin; u < end; ++u) {
    const FeedUser* fu = users_[u].get();
    if (fu == nullptr || (fu->posts.empty() && fu->mutes.empty() && fu->hides.empty())) continue;
    UserState st;
    st.user = g.ExternalOf(static_cast<InternalId>(u));
    for (uint32_t i = 0; i < fu->posts.size(); ++i) {
      const PostEntry& e = fu->posts[i];
      st.posts.push_back({e.id, st.user, e.ts(), e.kind()});
    }
    for (InternalId m : fu->mutes) st.mutes.push_back(g.ExternalOf(m));
    for (InternalId h : fu->hides) st.hides.push_back(g.ExternalOf(h));
    out->push_back(std::move(st));
  }
}

uint64_t Feed::Digest(const Graph& g) const {
  uint64_t sum = 0;
  auto add = [&](uint64_t tag, uint64_t a, uint64_t b, uint64_t c) {
    const uint64_t words[4] = {tag, a, b, c};
    sum += XXH3_64bits(words, sizeof words);
  };
  for (size_t u = 0; u < users_.size(); ++u) {
    const FeedUser* fu = users_[u].get();
    if (fu == nullptr) continue;
    const UserId user = g.ExternalOf(static_cast<InternalId>(u));
    for (uint32_t i = 0; i < fu->posts.size(); ++i) {
      const PostEntry& e = fu->posts[i];
      add(1, user, e.id, (static_cast<uint64_t>(e.ts()) << 8) | e.kind());
    }
    for (InternalId m : fu->mutes) add(2, user, g.ExternalOf(m), 0);
    for (InternalId h : fu->hides) add(3, user, g.ExternalOf(h), 0);
  }
  return sum;
}

}  // namespace relgraph
