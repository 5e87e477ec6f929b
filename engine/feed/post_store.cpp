// PostStore (post_store.h): rings, the post index and posts leaving timelines.
//
// Why the index grows as it does: the index holds no ids (post_index.h), so it can only grow by
// being filled again from the authors' rings, which costs a few cache misses per post: 0.1-0.2 s at
// 2M posts. Doing that inside a publish would stall every writer for as long. So growth is
// incremental: a larger table is filled author by author, by the background fan-out with what
// is left of its batch budget, while authors below the cursor live in the new table and the
// rest in the old one. Each post of an author sits in exactly one table, so routing by author
// keeps inserts and erases exact, and lookups consult both. If writes outrun the mover (no
// background fan-out, as in the embedded bench's publish phase), the old table fills past what
// cuckoo hashing handles cheaply, and the rest is done at once. Recovery loads with the index
// doubling and rebuilds it once at the end (BeginBulkLoad / EndBulkLoad).
#include "engine/feed/post_store.h"

#include <algorithm>
#include <string>

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

InternalId PostStore::HolderOf(PostId post) const {
  InternalId holder = kNoInternalId;
  bool found = false;
  auto check = [&](InternalId a) {
    if (!RingHolds(a, post)) return false;  // a fingerprint match, not the post
    holder = a;
    return found = true;
  };
  index_.ForEachCandidate(post, check);
  if (!found && index_growing_) grown_index_.ForEachCandidate(post, check);
  return holder;
}

void PostStore::IndexInsert(PostId post, InternalId author) {
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
  if (Overfull(index_) || grown_index_.NeedsGrowth()) RebuildIndex(PostIndex::BucketsFor(posts()));
}

size_t PostStore::GrowIndexStep(size_t budget) {
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
    RebuildIndex(PostIndex::BucketsFor(posts()));
  } else if (index_moved_ >= ring_of_.size()) {
    std::swap(index_, grown_index_);
    grown_index_.Reset(0);  // the smallest table: the old one's memory goes back
    index_growing_ = false;
    index_moved_ = 0;
  }
  return moved + (end - from) / kUsersPerPost;
}

void PostStore::EndBulkLoad() {
  bulk_loading_ = false;
  // Loading kept the table from needing growth; shrink it to the usual load if it doubled past.
  const size_t buckets = PostIndex::BucketsFor(index_.size());
  if (buckets < index_.buckets()) RebuildIndex(buckets);
}

void PostStore::RebuildIndex(size_t buckets) {
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

// ---- rings ------------------------------------------------------------------------------------

PostBuffer& PostStore::EnsureRing(InternalId a, size_t users) {
  GrowSlotArray(ring_of_, a, users);
  if (ring_of_[a] == kNoSlot) {
    ring_of_[a] = static_cast<uint32_t>(rings_.size());
    rings_.emplace_back().owner = a;
  }
  return rings_[ring_of_[a]];
}

std::optional<uint16_t> PostStore::NextSeq(InternalId author, const PostBuffer& posts,
                                           TimestampMs ts) const {
  // Counting up from the newest post's number, a number is taken only if a post at the same
  // millisecond holds it: the loop nearly always ends at its first step.
  uint16_t seq = posts.SeqAfterNewest();
  for (uint32_t tries = 0; tries <= 0xffff; ++tries, ++seq) {
    if (posts.FindSeq(ts, seq) < posts.size()) continue;
    if (LeavingIdOf(InboxEntry::Of(RingSlot(author), PostEntry::Make(0, ts, 0, seq))) != 0)
      continue;
    return seq;
  }
  return std::nullopt;
}

Result<PostStore::Added> PostStore::Add(InternalId a, PostId post, TimestampMs ts, uint8_t kind,
                                        size_t users, UserId author) {
  Added out;
  PostBuffer& posts = EnsureRing(a, users);
  if (posts.size() >= k_ && PostEntry::Make(post, ts, 0, 0).LessThan(posts.oldest().key())) {
    out.retained = false;  // older than every one of the newest K: it would leave at once
    return out;
  }
  const std::optional<uint16_t> seq = NextSeq(a, posts, ts);
  if (!seq) {
    return Status(Code::kLimitExceeded, "user " + std::to_string(author) +
                                            " has 65536 posts at time " + std::to_string(ts));
  }
  out.entry = PostEntry::Make(post, ts, kind, *seq);
  const size_t before = posts.MemoryBytes();
  posts.Insert(out.entry, k_, ring_blocks_.For(RingSlot(a)));
  IndexInsert(post, a);
  if (posts.size() > k_) {
    out.trimmed = posts.oldest();
    posts.PopOldest();
    IndexOf(a).Erase(out.trimmed.id, a);
  }
  ring_bytes_ += posts.MemoryBytes() - before;
  return out;
}

Status PostStore::Replay(InternalId a, PostId post, TimestampMs ts, uint8_t kind, PostId evicted,
                         size_t users) {
  PostBuffer& posts = EnsureRing(a, users);
  const size_t before = posts.MemoryBytes();
  if (evicted != post && HolderOf(post) == kNoInternalId) {
    // At most K posts share a time, and replay leaves nothing leaving: a number is free.
    const std::optional<uint16_t> seq = NextSeq(a, posts, ts);
    if (!seq) return Status::Corruption("publish record: no sequence number is free");
    posts.Insert(PostEntry::Make(post, ts, kind, *seq), k_, ring_blocks_.For(RingSlot(a)));
    IndexInsert(post, a);
  }
  ring_bytes_ += posts.MemoryBytes() - before;
  if (evicted != 0 && Holds(a, evicted)) Remove(a, evicted);
  return Status::OK();
}

PostEntry PostStore::Remove(InternalId author, PostId post) {
  PostBuffer& posts = MutableRing(author);
  const size_t before = posts.MemoryBytes();
  const uint32_t i = posts.FindId(post);
  PostEntry e{post, 0};
  if (i < posts.size()) {
    e = posts[i];
    posts.EraseAt(i);
  }
  IndexOf(author).Erase(post, author);
  ring_bytes_ += posts.MemoryBytes() - before;
  return e;
}

void PostStore::Forget(InternalId author) {
  if (RingOf(author) == nullptr) return;
  PostBuffer& posts = MutableRing(author);
  for (uint32_t i = 0; i < posts.size(); ++i) IndexOf(author).Erase(posts[i].id, author);
  ring_bytes_ -= posts.MemoryBytes();
  posts.Clear(ring_blocks_.For(RingSlot(author)));
}

size_t PostStore::MoveRings(size_t limit) {
  return ring_blocks_.MoveSome(
      rings_.size(), [&](size_t slot) -> PostBuffer& { return rings_[slot]; }, &ring_bytes_, limit);
}

// ---- posts leaving timelines ------------------------------------------------------------------

void PostStore::AddLeaving(InternalId author, const PostEntry& e) {
  const uint32_t ring = RingSlot(author);
  leaving_[e.id] = Leaving{ring, e};
  leaving_by_seq_.emplace(LeavingKey(ring, e.seq()), e.id);
}

void PostStore::EraseLeaving(PostId post) {
  const auto it = leaving_.find(post);
  if (it == leaving_.end()) return;
  auto [first, last] =
      leaving_by_seq_.equal_range(LeavingKey(it->second.ring, it->second.entry.seq()));
  for (; first != last; ++first) {
    if (first->second == post) {
      leaving_by_seq_.erase(first);
      break;
    }
  }
  leaving_.erase(it);
}

PostId PostStore::LeavingIdOf(const InboxEntry& x) const {
  if (leaving_by_seq_.empty()) return 0;
  // (ring, time, sequence number) name a post; the kind is not part of the name, and NextSeq
  // asks with none.
  auto [first, last] = leaving_by_seq_.equal_range(LeavingKey(x.ring, x.seq()));
  for (; first != last; ++first) {
    if (leaving_.at(first->second).entry.ts() == x.ts()) return first->second;
  }
  return 0;
}

// ---- checks -----------------------------------------------------------------------------------

Status PostStore::CheckInvariants(const Graph& g) const {
  const auto broken = [](const std::string& what) {
    return Status::Corruption("feed invariant: " + what);
  };
  const auto name = [&](InternalId u) { return std::to_string(g.ExternalOf(u)); };
  // Rings: sorted, no two posts of a time with one sequence number, each post held by exactly
  // its author in the index.
  size_t ring_posts = 0;
  size_t rings = 0;
  CompactingPool::Tally ring_blocks(ring_blocks_);
  for (size_t i = 0; i < ring_of_.size(); ++i) {
    const auto u = static_cast<InternalId>(i);
    const PostBuffer* ring = RingOf(u);
    if (ring == nullptr) continue;
    ++rings;
    if (RingAt(ring_of_[u]).owner != u)
      return broken("the ring of user " + name(u) + " names another owner");
    if (!ring_blocks.Add(ring_of_[u], ring->pool_block(), ring->MemoryBytes()))
      return broken("the ring of user " + name(u) + " has its block in the wrong pool");
    for (uint32_t k = 0; k < ring->size(); ++k) {
      const PostEntry& e = (*ring)[k];
      if (k > 0 && !PostEntry::Less((*ring)[k - 1], e))
        return broken("posts of user " + name(u) + " are out of order at " + std::to_string(k));
      if (ring->FindSeq(e.ts(), e.seq()) != k) {
        return broken("post " + std::to_string(e.id) + " of user " + name(u) +
                      " shares its time and sequence number");
      }
      if (HolderOf(e.id) != u) {
        return broken("the post index does not name user " + name(u) + " for its post " +
                      std::to_string(e.id));
      }
    }
    ring_posts += ring->size();
  }
  if (rings != rings_.size()) return broken("a ring slot belongs to no user");
  if (!ring_blocks.Balanced())
    return broken("the rings' blocks disagree with their pools' live bytes");
  if (posts() != ring_posts) {
    return broken("the post index holds " + std::to_string(posts()) + " posts, the rings " +
                  std::to_string(ring_posts));
  }
  for (const auto& [post, leaving] : leaving_) {
    if (HolderOf(post) != kNoInternalId)
      return broken("post " + std::to_string(post) + " is retained and also leaving timelines");
    if (LeavingIdOf(InboxEntry::Of(leaving.ring, leaving.entry)) != post)
      return broken("post " + std::to_string(post) + " is leaving but not found by its entry");
    if (RingEntry(InboxEntry::Of(leaving.ring, leaving.entry)) != nullptr) {
      return broken("post " + std::to_string(post) +
                    " is leaving, and a retained post has its time and sequence number");
    }
  }
  if (leaving_by_seq_.size() != leaving_.size())
    return broken("the two maps of posts leaving timelines differ in size");
  return Status::OK();
}

}  // namespace relgraph
