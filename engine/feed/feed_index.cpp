// The feed's use of its post index: answering "who holds this id" with the rings' help, and
// growing the index.
//
// Why this design: the index holds no ids (post_index.h), so it can only grow by being filled
// again from the authors' rings, which costs a few cache misses per post: 0.1-0.2 s at 2M
// posts. Doing that inside a publish would stall every writer for as long. So growth is
// incremental: a larger table is filled author by author, by the background fan-out with what
// is left of its batch budget, while authors below the cursor live in the new table and the
// rest in the old one. Each post of an author sits in exactly one table, so routing by author
// keeps inserts and erases exact, and lookups consult both. If writes outrun the mover (no
// background fan-out, as in the embedded bench's publish phase), the old table fills past what
// cuckoo hashing handles cheaply, and the rest is done at once. Recovery loads with the index
// doubling and rebuilds it once at the end (BeginBulkLoad / EndBulkLoad).
#include <algorithm>

#include "engine/feed/feed_internal.h"

namespace relgraph {

namespace {

// The old table during growth keeps taking the posts of authors not yet moved. Past this load
// (or once a slot is stashed) its cuckoo walks grow long, and the growth is finished at once.
constexpr double kMaxLoadWhileGrowing = 0.94;

// Visits the posts of users [from, ...) whole user by whole user, until stop(next user, posts
// visited) is true; returns the first user not visited and adds the posts visited to *posts.
// `ring_of` gives each user's slot in `rings` (or kNoSlot). Each visit is a chain of misses
// (the ring header, its entries, index buckets), so each link is fetched a different distance
// ahead: headers and entries by user, and the buckets of a batch of posts (prefetch) before the
// batch is applied.
template <typename Rings, typename Stop, typename Prefetch, typename Apply>
size_t WalkRingPosts(const std::vector<uint32_t>& ring_of, const Rings& rings, size_t from,
                     Stop&& stop, Prefetch&& prefetch, Apply&& apply, size_t* visited) {
  constexpr uint32_t kNone = ~uint32_t{0};
  constexpr size_t kUserAhead = 16, kRingAhead = 8, kBatch = 32;
  struct Pending {
    PostId post;
    InternalId author;
  };
  Pending batch[kBatch];
  size_t n = 0;
  auto flush = [&] {
    for (size_t i = 0; i < n; ++i) prefetch(batch[i].post);
    for (size_t i = 0; i < n; ++i) apply(batch[i].post, batch[i].author);
    n = 0;
  };
  const size_t users = ring_of.size();
  size_t u = from, posts = 0;
  for (; u < users && !stop(u, posts); ++u) {
    if (u + kUserAhead < users && ring_of[u + kUserAhead] != kNone)
      __builtin_prefetch(&rings[ring_of[u + kUserAhead]]);
    if (u + kRingAhead < users && ring_of[u + kRingAhead] != kNone)
      rings[ring_of[u + kRingAhead]].PrefetchOldest();
    if (ring_of[u] == kNone) continue;
    const auto& ring = rings[ring_of[u]];
    for (uint32_t i = 0; i < ring.size(); ++i) {
      batch[n++] = {ring[i].id, static_cast<InternalId>(u)};
      if (n == kBatch) flush();
    }
    posts += ring.size();
  }
  flush();
  *visited += posts;
  return u;
}

bool Overfull(const PostIndex& index) {
  return index.stashed() > 0 ||
         static_cast<double>(index.size()) >
             kMaxLoadWhileGrowing *
                 static_cast<double>(index.buckets() * PostIndex::kSlotsPerBucket);
}

}  // namespace

bool Feed::RingHolds(InternalId author, PostId post) const {
  const PostBuffer* posts = RingOf(author);
  return posts != nullptr && posts->FindId(post) < posts->size();
}

InternalId Feed::HolderOf(PostId post) const {
  InternalId holder = kNoInternalId;
  ForEachCandidate(post, [&](InternalId a) {
    if (!RingHolds(a, post)) return false;  // a fingerprint match, not the post
    holder = a;
    return true;
  });
  return holder;
}

void Feed::IndexInsert(PostId post, InternalId author) {
  IndexOf(author).Insert(post, author);
  if (bulk_loading_) {  // RebuildIndex leaves the table needing no growth
    if (index_.NeedsGrowth())
      RebuildIndex(std::max(PostIndex::BucketsFor(2 * index_.size()), index_.GrownBuckets()));
    return;
  }
  if (!index_growing_) {
    if (index_.NeedsGrowth()) {  // start moving; the background fan-out does the work
      // Sized for the posts now, at 82%: what is published while it fills takes it up to 93%.
      grown_index_.Reset(PostIndex::BucketsFor(index_.size()));
      index_moved_ = 0;
      index_growing_ = true;
    }
    return;
  }
  if (Overfull(index_) || grown_index_.NeedsGrowth())
    RebuildIndex(PostIndex::BucketsFor(IndexedPosts()));
}

size_t Feed::GrowIndexStep(size_t budget) {
  constexpr size_t kUsersPerPost = 64;  // empty user slots are cheap to pass over
  size_t moved = 0;
  const size_t from = index_moved_;
  // Authors are taken whole, and index_moved_ passes them only at the end, when their posts
  // have moved.
  const size_t end = WalkRingPosts(
      ring_of_, rings_, from,
      [&](size_t u, size_t posts) { return posts >= budget || u - from >= kUsersPerPost * budget; },
      [&](PostId post) {
        index_.Prefetch(post);
        grown_index_.Prefetch(post);
      },
      [&](PostId post, InternalId author) {
        index_.Erase(post, author);
        grown_index_.Insert(post, author);
      },
      &moved);
  index_moved_ = end;                // from here on, these authors route to grown_index_
  if (grown_index_.NeedsGrowth()) {  // more was published than the headroom allowed
    RebuildIndex(PostIndex::BucketsFor(IndexedPosts()));
  } else if (index_moved_ >= ring_of_.size()) {
    std::swap(index_, grown_index_);
    grown_index_.Reset(0);  // the smallest table: the old one's memory goes back
    index_growing_ = false;
    index_moved_ = 0;
  }
  return moved + (end - from) / kUsersPerPost;
}

void Feed::EndBulkLoad() {
  bulk_loading_ = false;
  // Loading kept the table from needing growth; shrink it to the usual load if it doubled past.
  const size_t buckets = PostIndex::BucketsFor(index_.size());
  if (buckets < index_.buckets()) RebuildIndex(buckets);
}

void Feed::RebuildIndex(size_t buckets) {
  index_growing_ = false;
  index_moved_ = 0;
  grown_index_.Reset(0);
  index_.Reset(buckets);
  size_t posts = 0;
  WalkRingPosts(
      ring_of_, rings_, 0, [](size_t, size_t) { return false; },
      [&](PostId post) { index_.Prefetch(post); },
      [&](PostId post, InternalId author) { index_.Insert(post, author); }, &posts);
  while (index_.NeedsGrowth()) RebuildIndex(index_.GrownBuckets());
}

}  // namespace relgraph
