// Feed statistics, digest and the copy of its durable state (posts, mutes, hides) that
// snapshots write.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "engine/feed/feed_internal.h"

namespace relgraph {

FeedStats Feed::Stats() const {
  FeedStats s;
  s.posts = posts_.posts();
  // Free slab blocks and the untouched rest of each slab count against their side.
  s.post_index_bytes = posts_.index_bytes();
  s.post_bytes = posts_.entry_bytes() + posts_.block_slack_bytes() + s.post_index_bytes;
  s.feed_user_bytes = posts_.header_bytes() + audience_.ListBytes();
  s.inboxes = inboxes_.count();
  s.inbox_entries = inboxes_.entries();
  s.empty_inboxes = inboxes_.marks();
  s.inbox_bytes = inboxes_.MemoryBytes();
  s.celebrities = audience_.celebrities();
  s.fanout_queue = tasks_.size();
  s.fanout_inserts = inboxes_.inserts();
  s.inbox_rebuilds = rebuilds_;
  s.inbox_drops = inboxes_.drops();
  s.watermark_fallbacks = fallbacks_;
  return s;
}

InboxMemory Feed::InboxMemoryBreakdown() const {
  return inboxes_.MemoryBreakdown();
}

void Feed::CopyUsers(const Graph& g, size_t begin, size_t end, std::vector<UserState>* out) const {
  const size_t users = std::max(posts_.ring_user_bound(), audience_.ListUserBound());
  end = std::min(end, users);
  for (size_t i = begin; i < end; ++i) {
    const auto u = static_cast<InternalId>(i);
    const PostBuffer* posts = posts_.RingOf(u);
    const IdSet* mutes = audience_.ListOf(u, /*mute=*/true);
    const IdSet* hides = audience_.ListOf(u, /*mute=*/false);
    if ((posts == nullptr || posts->empty()) && mutes == nullptr && hides == nullptr) continue;
    UserState st;
    st.user = g.ExternalOf(u);
    for (uint32_t k = 0; posts != nullptr && k < posts->size(); ++k) {
      const PostEntry& e = (*posts)[k];
      st.posts.push_back({e.id, st.user, e.ts(), e.kind()});
    }
    if (mutes != nullptr)
      for (InternalId m : *mutes) st.mutes.push_back(g.ExternalOf(m));
    if (hides != nullptr)
      for (InternalId h : *hides) st.hides.push_back(g.ExternalOf(h));
    out->push_back(std::move(st));
  }
}

uint64_t Feed::Digest(const Graph& g) const {
  uint64_t sum = 0;
  auto add = [&](uint64_t tag, uint64_t a, uint64_t b, uint64_t c) {
    const uint64_t words[4] = {tag, a, b, c};
    sum += XXH3_64bits(words, sizeof words);
  };
  for (size_t u = 0; u < posts_.ring_user_bound(); ++u) {
    const PostBuffer* posts = posts_.RingOf(static_cast<InternalId>(u));
    if (posts == nullptr) continue;
    const UserId user = g.ExternalOf(static_cast<InternalId>(u));
    for (uint32_t i = 0; i < posts->size(); ++i) {
      const PostEntry& e = (*posts)[i];
      add(1, user, e.id, (static_cast<uint64_t>(e.ts()) << 8) | e.kind());
    }
  }
  for (const bool mute : {true, false}) {
    audience_.ForEachList(mute, [&](InternalId u, const IdSet& set) {
      for (InternalId x : set) add(mute ? 2 : 3, g.ExternalOf(u), g.ExternalOf(x), 0);
    });
  }
  return sum;
}

}  // namespace relgraph
