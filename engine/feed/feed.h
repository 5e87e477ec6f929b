// Feed: posts, home timelines, mute and hide, over a Graph (docs/feed.md has the exact
// semantics and the design).
//
// Why this design: a timeline is "the newest R retained posts of me and the people I follow,
// minus muted and hiding authors". Each author keeps a sorted ring of their newest K posts;
// reading a timeline merges, newest first, three kinds of sorted streams:
//   - the reader's materialized inbox: posts of ordinary (non-celebrity) followees, pushed by a
//     background fan-out, exact above the inbox's watermark;
//   - the reader's own ring (an author sees their post at once, before any fan-out);
//   - the rings of the celebrities the reader follows (pulled: no fan-out to millions).
// Inboxes exist only for readers who read: the first read builds one by pull, a reader idle
// for active_reader_ms or evicted by the memory budget loses it and gets it rebuilt, exactly,
// on the next read. Changes that alter who a reader sees (follow, unfollow, mute, hide) are
// queued per (reader, author) pair, coalesced, and applied to the inbox before the reader's
// next read, so they show at once. Deleted (and, when K < R, trimmed) posts are retracted by
// the fan-out, and hidden from reads until it has run. Inboxes are derived: posts, mutes and
// hides are the state that the WAL and snapshots keep.
//
// Thread-safety: not thread-safe. Every method needs the feed serialized (Db holds a feed
// mutex) and the graph locked: shared for reads and fan-out, exclusive for writes and hooks.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/feed/audience.h"
#include "engine/feed/feed_types.h"
#include "engine/feed/inboxes.h"
#include "engine/feed/post_buffer.h"
#include "engine/feed/post_index.h"
#include "engine/feed/post_store.h"
#include "engine/graph/clock.h"
#include "engine/graph/graph.h"
#include "storage/status.h"

namespace relgraph {

// Checks ranges of every option; the Feed constructor REQUIRES this to be OK.
Status ValidateFeedOptions(const FeedOptions& options);

class Feed {
 public:
  // REQUIRES: ValidateFeedOptions(options).ok(). clock: not owned; nullptr = the system clock.
  Feed(const FeedOptions& options, Clock* clock);
  ~Feed();
  Feed(const Feed&) = delete;
  Feed& operator=(const Feed&) = delete;

  // ---- writes (graph held exclusively) --------------------------------------------------------
  // Errors: kInvalidUserId (author 0), kInvalidArgument (post id 0, kind > kMaxPostKind, ts out
  // of range), kAlreadyExists (the engine holds a post with this id, or is still retracting a
  // deleted one). A post older than the author's newest K is accepted but not retained.
  Result<PublishOutcome> Publish(Graph& g, UserId author, PostId post, uint32_t kind,
                                 std::optional<TimestampMs> ts);
  // kNotFound when `author` holds no post `post`.
  Status DeletePost(Graph& g, UserId author, PostId post);
  // user stops (mute) or resumes (unmute) seeing `other`'s posts; true when it changed.
  // kInvalidArgument for user == other, kLimitExceeded past max_mutes.
  Result<bool> Mute(Graph& g, UserId user, UserId other, bool on);
  // author's posts are (hide) or are again (unhide) kept from `from`; true when it changed.
  // kInvalidArgument for author == from, kLimitExceeded past max_hides.
  Result<bool> Hide(Graph& g, UserId author, UserId from, bool on);

  // Graph hooks, called under the same exclusive lock right after the graph changed.
  void OnFollow(const Graph& g, InternalId follower, InternalId followee);
  void OnUnfollow(const Graph& g, InternalId follower, InternalId followee);
  // Account deletion: call Before while the user's edges still exist (forgets the user's
  // posts, mutes, hides and inbox; returns its followees), then After once the graph removed
  // them (re-checks those followees' celebrity state).
  std::vector<InternalId> BeforeRemoveUser(const Graph& g, UserId user);
  void AfterRemoveUser(const Graph& g, std::span<const InternalId> former_followees);

  // ---- replay: idempotent "ensure" forms, outcome already decided --------------------------
  // Ensures `post` is retained (unless evicted == post) and `evicted` (when nonzero) is not.
  Status ApplyPublish(Graph& g, UserId author, PostId post, TimestampMs ts, uint32_t kind,
                      PostId evicted);
  Status ApplyDeletePost(Graph& g, UserId author, PostId post);  // ensures it is gone
  Status ApplyMute(Graph& g, UserId user, UserId other, bool on);
  Status ApplyHide(Graph& g, UserId author, UserId from, bool on);
  // ---- copies of other cluster shards' authors (docs/cluster.md, "Feeds") ------------------
  // A shard keeps the retained posts of each author of another shard whom its users follow,
  // applied in the author's shard's order. Each has a live form (live: fan-out and inboxes
  // kept as for a local call, for a shard serving reads) and a replay form (recovery), with
  // the same resulting posts. A post id another author holds here is skipped (post ids are
  // unique across a cluster; a collision is the client's error): false, or counted.
  //
  // Ensures `author` retains `post` (unless its ring keeps newer ones only) and not `evicted`.
  Result<bool> EnsurePublished(Graph& g, UserId author, PostId post, TimestampMs ts, uint32_t kind,
                               PostId evicted, bool live);
  Status EnsureDeleted(Graph& g, UserId author, PostId post, bool live);
  // Ensures the author's retained posts are exactly `posts` (oldest first, ordered by (ts,
  // id)); returns how many were skipped for an id another author holds. Empty `posts` clears
  // them (a first fan here: the copies start over until the author's shard sends them back).
  Result<uint32_t> ReplacePosts(Graph& g, UserId author, std::span<const FeedEntry> posts,
                                bool live);
  // The author's retained posts, oldest first (a back-fill to another shard).
  std::vector<FeedEntry> RetainedPosts(const Graph& g, UserId author) const;

  // True while a deleted or trimmed post's removal from timelines is under way (a publish
  // of its id is refused until the fan-out finishes it).
  bool post_leaving(PostId post) const;
  // Recomputes every author's celebrity state from fan counts (after recovery, bulk loads).
  void RecomputeCelebrities(const Graph& g);
  // Around a load of many posts (recovery): the post index grows by doubling in between, and
  // is rebuilt once at its usual load at the end. A rebuild is O(posts), and growth by the
  // usual 13% would rebuild about 8 times the posts loaded.
  void BeginBulkLoad() { posts_.BeginBulkLoad(); }
  void EndBulkLoad() { posts_.EndBulkLoad(); }

  // ---- reads (graph held shared at least) ---------------------------------------------------
  // Not const: a read builds or refreshes the reader's inbox. limit 1..kMaxFeedPageLimit.
  Result<FeedPage> Timeline(const Graph& g, UserId user, const FeedPageRequest& request);
  Result<FeedPage> UserPosts(const Graph& g, UserId author, const FeedPageRequest& request) const;
  // The mutes of `user` / the users `author` hides from, as external ids in id order.
  // kInvalidUserId for id 0.
  Result<std::vector<UserId>> MutesOf(const Graph& g, UserId user) const;
  Result<std::vector<UserId>> HidesOf(const Graph& g, UserId author) const;

  // ---- background fan-out (graph held shared) -------------------------------------------------
  // True while fan-out is queued, the post index is moving to a larger table, or buffers are
  // moving into a fresh pool.
  bool fanout_pending() const { return !tasks_.empty() || posts_.busy() || inboxes_.moving(); }
  // Starts moving the rings' and inboxes' blocks into fresh pools that pack them (the
  // fan-out starts it itself when a pool's free space passes both 16 MiB and a quarter of its
  // live bytes, compacting_pool.h); RunFanout moves them a bounded step at a time.
  void BeginPoolCompaction() {
    posts_.BeginRingMove();
    inboxes_.BeginMove();
  }
  // Runs queued fan-out, visiting at most options.fanout_batch fans, then, with what is left
  // of that budget, moves posts to the growing index and, once no fan-out is queued, buffers
  // to fresh pools (starting such a move when a pool is fragmented); returns the budget used.
  size_t RunFanout(const Graph& g);
  // Milliseconds from publish (or delete) to the end of its fan-out, for finished tasks since
  // the last call.
  std::vector<double> TakeFanoutDelays();

  FeedStats Stats() const;
  // FeedStats::inbox_bytes by part. O(inboxes): for benchmarks and checks.
  InboxMemory InboxMemoryBreakdown() const;
  // Walks all state against the feed's rules (sorted rings and inboxes, the post index naming
  // every retained post, each inbox entry retained or still leaving, counters equal to a
  // recount); kCorruption naming the first rule broken. O(posts + inbox entries).
  Status CheckInvariants(const Graph& g) const;
  const FeedOptions& options() const { return options_; }

  // ---- whole-feed access (snapshots) --------------------------------------------------------
  // Calls fn(author, posts oldest first) for every author with posts among internal users
  // [begin, end); likewise mutes and hides (ids in id order).
  struct UserState {
    UserId user = 0;
    std::vector<FeedEntry> posts;  // oldest first
    std::vector<UserId> mutes;
    std::vector<UserId> hides;
  };
  void CopyUsers(const Graph& g, size_t begin, size_t end, std::vector<UserState>* out) const;
  // An order-independent digest of posts, mutes and hides (equal state, equal digest).
  uint64_t Digest(const Graph& g) const;

 private:
  static constexpr uint32_t kNoSlot = PostStore::kNoSlot;
  using Inbox = Inboxes::Inbox;
  using InboxCold = Inboxes::Cold;
  struct Task {
    InternalId author;
    uint32_t ring;  // the author's ring slot, saved here so the fan-out need not load it
    PostEntry post;
    bool retract;
    // A publish that trimmed the author's oldest post also removes that post from the fans'
    // inboxes (id 0: none). Riding on the publish costs no second walk of the fans.
    PostEntry evicted;
    std::optional<EntryKey> cursor;  // the last fan visited
    std::chrono::steady_clock::time_point enqueued;
    bool cancelled = false;  // its author was removed (and its fans' inboxes dropped)
  };
  struct Stream;

  using IdSet = Audience::IdSet;
  // Audience's celebrity and epoch changes, plus what a wrapped epoch tag needs: every
  // inbox's celebrity list marked stale.
  void SetCelebrity(InternalId u, bool on);
  void BumpCelebrityEpoch();
  TimestampMs Now() const { return clock_->NowMs(); }

  // Both return the reader's header, or Inboxes::kEmpty when the reader has a mark.
  const Inbox& BuildInbox(const Graph& g, InternalId reader);
  const Inbox& PrepareInbox(const Graph& g, InternalId reader);
  // Lists the reader's visible celebrity followees again (Inboxes::SetCelebrities).
  void RefreshCelebrities(const Graph& g, InternalId reader, InboxCold& c);
  // Calls fn(f) for each celebrity f that the reader follows and may see, in the order of its
  // following list (feed_internal.h).
  template <typename Fn>
  void ForEachVisibleCelebrity(const Graph& g, InternalId reader, Fn&& fn) const;
  // The same ids sorted, for checks.
  std::vector<InternalId> ScanCelebrities(const Graph& g, InternalId reader) const;
  // Makes the inbox agree with the reader's current view of `author`.
  void Reconcile(const Graph& g, InternalId reader, Inbox& in, InternalId author);
  void DropFanInboxes(const Graph& g, InternalId author);

  struct FanRun {  // fans[begin, end) of a batch belong to *task
    const Task* task;
    uint32_t begin, end;
  };
  // Pushes (or retracts) each run's post to its fans, in order.
  void PushToFans(const EdgeEntry* fans, const FanRun* runs, uint32_t n_runs, uint32_t now_tick);

  // Moves rings and inboxes into their fresh pools, for about `budget` fans' worth of work;
  // returns the budget used.
  size_t CompactStep(size_t budget);
  void Retract(InternalId author, const PostEntry& e);
  void EnqueueFanout(InternalId author, const PostEntry& e, bool retract,
                     const PostEntry& evicted = PostEntry{0, 0});
  void CheckCelebrity(const Graph& g, InternalId author);
  Result<bool> SetMembership(Graph& g, UserId owner, UserId other, bool on, bool mute, bool replay);
  Result<std::vector<UserId>> ExternalSet(const Graph& g, UserId owner, bool mutes) const;
  Result<FeedPage> Merge(const Graph& g, InternalId reader, const Inbox& in,
                         const FeedPageRequest& request, bool allow_rebuild, bool* need_rebuild);

  const FeedOptions options_;
  Clock* const clock_;
  PostStore posts_;    // rings, post index, posts leaving (engine/feed/post_store.h)
  Audience audience_;  // mutes, hides, celebrities (engine/feed/audience.h)
  Inboxes inboxes_;    // readers' inboxes and their budget (engine/feed/inboxes.h)
  std::deque<Task> tasks_;
  std::vector<double> fanout_delays_;
  uint64_t rebuilds_ = 0, fallbacks_ = 0;
};

}  // namespace relgraph
