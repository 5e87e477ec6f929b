// PostStore: every retained post, by author, and how to find one from an id or an inbox entry.
//   - Rings: each author's newest K posts, sorted by (time, sequence number), in a PostBuffer
//     whose blocks come from one compacting pool; 24-byte headers in a chunked array, found
//     through a 4-byte slot per user, so a user who never posts costs 4 bytes. A slot is kept
//     for the user's life: inbox entries name a post by (ring slot, time, sequence number).
//   - The post index: post id -> candidate authors (post_index.h), confirmed by the ring. It
//     grows incrementally, author by author, with the background fan-out's spare budget
//     (post_store.cpp says why).
//   - Leaving posts: deleted or trimmed posts whose removal from inboxes (their fan-out task)
//     has not run yet, found by id and by (ring slot, sequence number), so that an inbox entry
//     naming one still resolves to its id until then.
//
// Why a part of its own: publishing, deleting, replay, reads, snapshots and the fan-out all
// go through these three structures, which hold no inbox and no reader.
//
// Thread-safety: not thread-safe; Feed serializes it (engine/feed/feed.h).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "engine/feed/feed_types.h"
#include "engine/feed/inbox_buffer.h"
#include "engine/feed/post_buffer.h"
#include "engine/feed/post_index.h"
#include "engine/graph/graph.h"
#include "engine/mem/chunked_array.h"
#include "engine/mem/compacting_pool.h"
#include "engine/mem/slot_array.h"
#include "storage/status.h"

namespace relgraph {

class PostStore {
 public:
  static constexpr uint32_t kNoSlot = ~uint32_t{0};
  // An author's ring, with its owner: a read of an inbox entry needs the author too. The owner
  // fills the buffer's tail padding, so a header stays 24 bytes.
  struct Ring : PostBuffer {
    InternalId owner = kNoInternalId;
  };
  static_assert(sizeof(Ring) == 24 || sizeof(void*) != 8);
  struct Leaving {
    uint32_t ring;  // the author's ring slot
    PostEntry entry;
  };

  explicit PostStore(uint32_t posts_per_author) : k_(posts_per_author) {}

  // ---- rings ---------------------------------------------------------------------------------
  uint32_t RingSlot(InternalId a) const { return a < ring_of_.size() ? ring_of_[a] : kNoSlot; }
  const Ring& RingAt(uint32_t slot) const { return rings_[slot]; }
  size_t ring_count() const { return rings_.size(); }
  size_t ring_user_bound() const { return ring_of_.size(); }  // one past the last slot
  // An author's ring, or nullptr when it never had one.
  const PostBuffer* RingOf(InternalId a) const {
    const uint32_t slot = RingSlot(a);
    return slot == kNoSlot ? nullptr : &rings_[slot];
  }

  // ---- writes --------------------------------------------------------------------------------
  struct Added {
    bool retained = true;     // false: older than every one of the newest K; nothing stored
    PostEntry entry{0, 0};    // the post as stored
    PostEntry trimmed{0, 0};  // the oldest post this one pushed out (id 0: none)
  };
  // Stores post `post` of author a (its ring made if missing; `users`: the graph's user
  // count). kLimitExceeded when all 65,536 sequence numbers of that millisecond are taken
  // (by retained or leaving posts); `author` names it. REQUIRES: no author holds `post`.
  Result<Added> Add(InternalId a, PostId post, TimestampMs ts, uint8_t kind, size_t users,
                    UserId author);
  // Replay: ensures `post` is retained (unless evicted == post) and `evicted` (nonzero) is not.
  Status Replay(InternalId a, PostId post, TimestampMs ts, uint8_t kind, PostId evicted,
                size_t users);
  // Removes `post` from the author's ring and the index; returns its entry (the id alone when
  // the ring no longer had it). REQUIRES: Holds(author, post).
  PostEntry Remove(InternalId author, PostId post);
  void Forget(InternalId author);  // every post of the author goes (account deletion)

  // ---- lookups -------------------------------------------------------------------------------
  bool Holds(InternalId author, PostId post) const {
    return IndexOf(author).MayHold(post, author) && RingHolds(author, post);
  }
  InternalId HolderOf(PostId post) const;  // kNoInternalId when no author retains it
  size_t posts() const { return index_.size() + grown_index_.size(); }
  // The ring entry of an inbox entry's post; nullptr when the post has left the ring.
  const PostEntry* RingEntry(const InboxEntry& x) const {
    const PostBuffer& posts = RingAt(x.ring);
    const uint32_t i = posts.FindSeq(x.ts(), x.seq());
    return i < posts.size() ? &posts[i] : nullptr;
  }
  // The id of an inbox entry's post: from the ring, else from the posts leaving; 0 if neither
  // knows it (an entry of an author pending reconcile).
  PostId IdOfEntry(const InboxEntry& x) const {
    const PostEntry* e = RingEntry(x);
    return e != nullptr ? e->id : LeavingIdOf(x);
  }
  // Fetches, ahead of RingEntry(x), stage 0: the ring's header; 1: the entry where the
  // number predicts it, and the author's external id in g.
  void PrefetchRing(const Graph& g, const InboxEntry& x, int stage) const {
    const Ring& ring = RingAt(x.ring);
    if (stage == 0) {
      __builtin_prefetch(&ring);
      return;
    }
    g.PrefetchExternal(ring.owner);
    if (const uint32_t i = ring.SeqGuess(x.seq()); i < ring.size()) __builtin_prefetch(&ring[i]);
  }

  // ---- posts leaving timelines ---------------------------------------------------------------
  void AddLeaving(InternalId author, const PostEntry& e);
  void EraseLeaving(PostId post);  // its fan-out has removed it from every inbox
  bool IsLeaving(PostId post) const { return leaving_.count(post) != 0; }
  size_t leaving_count() const { return leaving_.size(); }
  // The id of the leaving post with x's ring, time and sequence number (its kind aside); 0
  // when none is leaving.
  PostId LeavingIdOf(const InboxEntry& x) const;
  template <typename Fn>
  void ForEachLeaving(Fn&& fn) const {  // fn(post id, const Leaving&)
    for (const auto& [id, leaving] : leaving_) fn(id, leaving);
  }

  // ---- background work -----------------------------------------------------------------------
  // True while the index moves into a larger table or the rings into a fresh pool.
  bool busy() const { return index_growing_ || ring_blocks_.moving(); }
  bool index_growing() const { return index_growing_; }
  size_t GrowIndexStep(size_t budget);  // moves about `budget` posts; returns posts moved
  // Around a load of many posts (recovery): the index grows by doubling in between and is
  // rebuilt once at its usual load at the end. A rebuild is O(posts), and growth by the usual
  // 13% would rebuild about 8 times the posts loaded.
  void BeginBulkLoad() { bulk_loading_ = true; }
  void EndBulkLoad();
  bool RingsFragmented() const { return ring_blocks_.Fragmented(); }
  void BeginRingMove() { ring_blocks_.BeginMove(); }
  bool rings_moving() const { return ring_blocks_.moving(); }
  size_t MoveRings(size_t limit);  // moves up to `limit` rings; returns the moves made

  // ---- memory and checks ---------------------------------------------------------------------
  size_t entry_bytes() const { return ring_bytes_; }  // the rings' entries, in their blocks
  size_t block_slack_bytes() const { return ring_blocks_.MemoryBytes() - ring_blocks_.LiveBytes(); }
  size_t index_bytes() const { return index_.MemoryBytes() + grown_index_.MemoryBytes(); }
  size_t header_bytes() const {
    return rings_.MemoryBytes() + ring_of_.capacity() * sizeof(uint32_t);
  }
  // Rings sorted with unique (time, sequence number) and in the right pool, each post named
  // by the index for exactly its author, the index's count, and the leaving posts' two maps;
  // kCorruption naming the first rule broken (users by their id in g).
  Status CheckInvariants(const Graph& g) const;

 private:
  PostBuffer& EnsureRing(InternalId a, size_t users);
  PostBuffer& MutableRing(InternalId a) { return rings_[ring_of_[a]]; }
  // A sequence number for the author's new post at time ts that no retained or leaving post
  // of the author at that time has; nullopt when all 65,536 are taken.
  std::optional<uint16_t> NextSeq(InternalId author, const PostBuffer& posts, TimestampMs ts) const;
  bool RingHolds(InternalId author, PostId post) const {
    const PostBuffer* posts = RingOf(author);
    return posts != nullptr && posts->FindId(post) < posts->size();
  }
  // While the index grows, authors below index_moved_ are in grown_index_.
  PostIndex& IndexOf(InternalId a) {
    return index_growing_ && a < index_moved_ ? grown_index_ : index_;
  }
  const PostIndex& IndexOf(InternalId a) const {
    return index_growing_ && a < index_moved_ ? grown_index_ : index_;
  }
  void IndexInsert(PostId post, InternalId author);  // grows the index when it asks
  void RebuildIndex(size_t buckets);                 // at once, from the rings
  static uint64_t LeavingKey(uint32_t ring, uint16_t seq) { return (uint64_t{ring} << 16) | seq; }

  const uint32_t k_;               // posts kept per author
  std::vector<uint32_t> ring_of_;  // by internal id: slot in rings_, or kNoSlot
  ChunkedArray<Ring> rings_;
  // Rings' blocks by ring slot. Rings grow tight: a ring grows at a publish, once per post,
  // where a copy is cheap beside the publish (inboxes, which grow in the fan-out, do not).
  CompactingPool ring_blocks_{sizeof(PostEntry), BlockPool::Growth::kTight};
  size_t ring_bytes_ = 0;
  PostIndex index_;
  PostIndex grown_index_;   // while index_growing_: the larger table being filled
  size_t index_moved_ = 0;  // authors [0, index_moved_) are in grown_index_
  bool index_growing_ = false;
  bool bulk_loading_ = false;
  std::unordered_map<PostId, Leaving> leaving_;
  std::unordered_multimap<uint64_t, PostId> leaving_by_seq_;  // keyed by LeavingKey
};

}  // namespace relgraph
