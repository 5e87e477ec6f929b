// Copies of other cluster shards' authors' posts (docs/cluster.md, "Feeds"): a shard holds
// the retained posts of each remote author its users follow, so that their timelines merge
// them like any author's, by push or pull.
//
// Why whole replacement for a back-fill: the author's shard sends a remote author's posts
// only while it sees fans of it here, so copies may miss changes from before the first fan.
// A first fan clears them, and the author's shard answers that follow with all of them;
// replacing (not merging) makes the copy equal to the author's whatever came in between. A
// live replacement drops the fans' inboxes instead of retracting posts one by one (as a
// removal does): they are rebuilt exactly on the next read.
#include <algorithm>

#include "engine/feed/feed_internal.h"

namespace relgraph {

Result<bool> Feed::EnsurePublished(Graph& g, UserId author, PostId post, TimestampMs ts,
                                   uint32_t kind, PostId evicted, bool live) {
  const InternalId holder = posts_.HolderOf(post);
  if (!live || holder != kNoInternalId) {
    // The replay form skips a post any author holds, and removes `evicted` either way.
    RELGRAPH_RETURN_IF_ERROR(ApplyPublish(g, author, post, ts, kind, evicted));
    return holder == kNoInternalId || holder == g.FindUser(author);
  }
  // A post of this id that left this author's copies is still being retracted: finish that.
  while (posts_.IsLeaving(post) && fanout_pending()) RunFanout(g);
  auto out = Publish(g, author, post, kind, ts);
  if (!out.ok()) return out.status();
  if (evicted != 0 && posts_.Holds(g.FindUser(author), evicted)) {
    RELGRAPH_RETURN_IF_ERROR(DeletePost(g, author, evicted));
  }
  return true;
}

Status Feed::EnsureDeleted(Graph& g, UserId author, PostId post, bool live) {
  RELGRAPH_RETURN_IF_ERROR(CheckUser(author, "author"));
  const InternalId a = g.FindUser(author);
  if (a == kNoInternalId || !posts_.Holds(a, post)) return Status::OK();
  return live ? DeletePost(g, author, post) : ApplyDeletePost(g, author, post);
}

Result<uint32_t> Feed::ReplacePosts(Graph& g, UserId author, std::span<const FeedEntry> posts,
                                    bool live) {
  RELGRAPH_RETURN_IF_ERROR(CheckUser(author, "author"));
  for (const FeedEntry& p : posts) {  // all checked before anything changes
    if (p.post == 0 || p.kind > kMaxPostKind || p.ts < 0 || p.ts > kMaxTimestampMs)
      return Status::InvalidArgument("post " + std::to_string(p.post) + " out of range");
  }
  InternalId a = g.FindUser(author);
  if (a == kNoInternalId && posts.empty()) return 0u;
  if (a == kNoInternalId) {
    RELGRAPH_RETURN_IF_ERROR(g.CheckRoomFor(author));
    a = g.InternUser(author);
  }
  const PostBuffer* ring = posts_.RingOf(a);
  const uint32_t held = ring == nullptr ? 0 : ring->size();
  bool same = held == posts.size();
  for (uint32_t i = 0; same && i < held; ++i) {
    const PostEntry& e = (*ring)[i];
    same = e.id == posts[i].post && e.ts() == posts[i].ts && e.kind() == posts[i].kind;
  }
  if (same) return 0u;  // the copy is already exact (a back-fill after no change)
  if (live) {
    // Fans' inboxes lack the posts coming in and hold those going: rebuilt on their next read.
    if (!audience_.IsCelebrity(a)) DropFanInboxes(g, a);
    for (Task& t : tasks_) t.cancelled |= t.author == a;
  }
  if (held > 0) posts_.Forget(a);
  if (live) {
    for (const FeedEntry& p : posts) {
      while (posts_.IsLeaving(p.post) && fanout_pending()) RunFanout(g);
    }
  }
  uint32_t skipped = 0;
  for (const FeedEntry& p : posts) {
    if (posts_.HolderOf(p.post) != kNoInternalId) {
      ++skipped;
      continue;
    }
    RELGRAPH_RETURN_IF_ERROR(posts_.Replay(a, p.post, p.ts, p.kind, 0, g.user_count()));
  }
  return skipped;
}

std::vector<FeedEntry> Feed::RetainedPosts(const Graph& g, UserId author) const {
  std::vector<FeedEntry> out;
  const InternalId a = g.FindUser(author);
  const PostBuffer* ring = a == kNoInternalId ? nullptr : posts_.RingOf(a);
  if (ring == nullptr) return out;
  out.reserve(ring->size());
  for (uint32_t i = 0; i < ring->size(); ++i) {
    const PostEntry& e = (*ring)[i];
    out.push_back({e.id, author, e.ts(), e.kind()});
  }
  return out;
}

}  // namespace relgraph
