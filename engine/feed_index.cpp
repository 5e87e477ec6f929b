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

#include "engine/feed_internal.h"

namespace relgraph {

namespace {

// The old table during growth keeps taking the posts of authors not yet moved. Past this load
// (or once a slot is stashed) its cuckoo walks grow long, and the growth is finished at once.
constexpr double kMaxLoadWhileGrowing = 0.94;

bool Overfull(const PostIndex& index) {
  return index.stashed() > 0 ||
         static_cast<double>(index.size()) >
             kMaxLoadWhileGrowing *
                 static_cast<double>(index.buckets() * PostIndex::kSlotsPerBucket);
}

}  // namespace

bool Feed::RingHolds(InternalId author, PostId post) const {
  const FeedUser* fu = Find(author);
  return fu != nullptr && fu->posts.FindId(post) < fu->posts.size();
}

bool Feed::RingHoldsKey(InternalId author, const PostKey& k) const {
  const FeedUser* fu = Find(author);
  return fu != nullptr && fu->posts.Find(k) < fu->posts.size();
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

InternalId Feed::AuthorOfEntry(const PostEntry& e) const {
  // The entry's 16-bit tag of its author filters the fingerprint matches: two candidates
  // survive it about once in 2^24 lookups, and then the ring holding the key decides.
  InternalId found = kNoInternalId;
  bool ambiguous = false;
  ForEachCandidate(e.id, [&](InternalId a) {
    if (TagOf(a) != e.tag() || a == found) return false;
    ambiguous = found != kNoInternalId;
    found = a;
    return ambiguous;
  });
  if (!ambiguous) return found;
  found = kNoInternalId;
  ForEachCandidate(e.id, [&](InternalId a) {
    if (TagOf(a) != e.tag() || !RingHoldsKey(a, e.key())) return false;
    found = a;
    return true;
  });
  return found;
}

void Feed::IndexInsert(PostId post, InternalId author) {
  IndexOf(author).Insert(post, author);
  if (bulk_loading_) {
    while (index_.NeedsGrowth()) {
      RebuildIndex(std::max(PostIndex::BucketsFor(2 * index_.size()), index_.GrownBuckets()));
    }
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
  if (Overfull(index_) || grown_index_.NeedsGrowth()) {
    const size_t posts = index_.size() + grown_index_.size();
    RebuildIndex(PostIndex::BucketsFor(posts));
  }
}

size_t Feed::GrowIndexStep(size_t budget) {
  constexpr size_t kUsersPerPost = 64;  // empty user slots are cheap to pass over
  constexpr size_t kUserAhead = 16, kRingAhead = 8, kBatch = 32;
  struct Pending {
    PostId post;
    InternalId author;
  };
  Pending batch[kBatch];
  size_t n = 0;
  // Both tables' buckets of a batch are fetched together, as RebuildIndex does. Authors are
  // taken whole, and index_moved_ passes them only at the end, when their posts have moved.
  auto flush = [&] {
    for (size_t i = 0; i < n; ++i) {
      index_.Prefetch(batch[i].post);
      grown_index_.Prefetch(batch[i].post);
    }
    for (size_t i = 0; i < n; ++i) {
      index_.Erase(batch[i].post, batch[i].author);
      grown_index_.Insert(batch[i].post, batch[i].author);
    }
    n = 0;
  };
  const size_t users = users_.size();
  size_t moved = 0, u = index_moved_;
  for (; u < users && moved < budget && u - index_moved_ < kUsersPerPost * budget; ++u) {
    if (u + kUserAhead < users && users_[u + kUserAhead])
      __builtin_prefetch(users_[u + kUserAhead].get());
    if (u + kRingAhead < users && users_[u + kRingAhead])
      users_[u + kRingAhead]->posts.PrefetchOldest();
    const FeedUser* fu = users_[u].get();
    if (fu == nullptr) continue;
    for (uint32_t i = 0; i < fu->posts.size(); ++i) {
      batch[n++] = {fu->posts[i].id, static_cast<InternalId>(u)};
      if (n == kBatch) flush();
    }
    moved += fu->posts.size();
  }
  flush();
  const size_t scanned = u - index_moved_;
  index_moved_ = u;                  // from here on, these authors route to grown_index_
  if (grown_index_.NeedsGrowth()) {  // more was published than the headroom allowed
    const size_t posts = index_.size() + grown_index_.size();
    RebuildIndex(PostIndex::BucketsFor(posts));
  } else if (index_moved_ >= users) {
    std::swap(index_, grown_index_);
    grown_index_.Reset(0);  // the smallest table: the old one's memory goes back
    index_growing_ = false;
    index_moved_ = 0;
  }
  return moved + scanned / kUsersPerPost;
}

void Feed::EndBulkLoad() {
  bulk_loading_ = false;
  const size_t buckets = PostIndex::BucketsFor(index_.size());
  if (buckets < index_.buckets()) RebuildIndex(buckets);
  while (index_.NeedsGrowth()) RebuildIndex(index_.GrownBuckets());
}

// The walk is a chain of misses per author (record, ring, bucket), so each link is prefetched
// a different distance ahead and the buckets of a batch of posts before it is inserted.
void Feed::RebuildIndex(size_t buckets) {
  constexpr size_t kUserAhead = 16, kRingAhead = 8, kBatch = 32;
  index_growing_ = false;
  index_moved_ = 0;
  grown_index_.Reset(0);
  index_.Reset(buckets);
  struct Pending {
    PostId post;
    InternalId author;
  };
  Pending batch[kBatch];
  size_t n = 0;
  auto flush = [&] {
    for (size_t i = 0; i < n; ++i) index_.Prefetch(batch[i].post);
    for (size_t i = 0; i < n; ++i) index_.Insert(batch[i].post, batch[i].author);
    n = 0;
  };
  const size_t users = users_.size();
  for (size_t u = 0; u < users; ++u) {
    if (u + kUserAhead < users && users_[u + kUserAhead])
      __builtin_prefetch(users_[u + kUserAhead].get());
    if (u + kRingAhead < users && users_[u + kRingAhead])
      users_[u + kRingAhead]->posts.PrefetchOldest();
    const FeedUser* fu = users_[u].get();
    if (fu == nullptr) continue;
    for (uint32_t i = 0; i < fu->posts.size(); ++i) {
      batch[n++] = {fu->posts[i].id, static_cast<InternalId>(u)};
      if (n == kBatch) flush();
    }
  }
  flush();
  while (index_.NeedsGrowth()) RebuildIndex(index_.GrownBuckets());
}

}  // namespace relgraph
