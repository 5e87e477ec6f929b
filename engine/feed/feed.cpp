// Feed writes, graph hooks and replay (the fan-out is feed_fanout.cpp, the inboxes inboxes.cpp).
#include <algorithm>
#include <string>

#include "engine/feed/feed_internal.h"

namespace relgraph {

Status ValidateFeedOptions(const FeedOptions& o) {
  // A snapshot writes an author's posts as one record of at most 1 MiB (17 bytes a post).
  if (o.posts_per_author < 1 || o.posts_per_author > 50'000)
    return Status::InvalidArgument("posts_per_author must be in 1..50000");
  if (o.timeline_length < 1 || o.timeline_length > 100'000)
    return Status::InvalidArgument("timeline_length must be in 1..100000");
  if (o.celebrity_fans < 1) return Status::InvalidArgument("celebrity_fans must be >= 1");
  if (o.active_reader_ms < 1) return Status::InvalidArgument("active_reader_ms must be >= 1");
  if (o.fanout_batch < 1) return Status::InvalidArgument("fanout_batch must be >= 1");
  if (o.max_mutes < 1 || o.max_mutes > 100'000 || o.max_hides < 1 || o.max_hides > 100'000)
    return Status::InvalidArgument("max_mutes and max_hides must be in 1..100000");
  return Status::OK();
}

Feed::Feed(const FeedOptions& options, Clock* clock)
    : options_(options),
      clock_(clock != nullptr ? clock : SystemClock::Default()),
      posts_(options.posts_per_author),
      audience_(options.max_mutes, options.max_hides),
      inboxes_(posts_, options.timeline_length, options.inbox_memory_budget,
               options.active_reader_ms, clock_->NowMs()) {}

Feed::~Feed() = default;

void Feed::SetCelebrity(InternalId u, bool on) {
  if (audience_.SetCelebrity(u, on)) BumpCelebrityEpoch();
}

void Feed::BumpCelebrityEpoch() {
  // Inboxes keep the epoch's tag, which may just have wrapped: then mark every list stale.
  if (!audience_.BumpEpoch()) return;
  inboxes_.StaleAllCelebrityLists();
}

// ---- posts ------------------------------------------------------------------------------------

Result<PublishOutcome> Feed::Publish(Graph& g, UserId author, PostId post, uint32_t kind,
                                     std::optional<TimestampMs> ts) {
  RELGRAPH_RETURN_IF_ERROR(CheckUser(author, "author"));
  if (post == 0) return Status::InvalidArgument("post id must be nonzero");
  if (kind > kMaxPostKind)
    return Status::InvalidArgument("kind " + std::to_string(kind) + " is out of range 0..63");
  if (ts) RELGRAPH_RETURN_IF_ERROR(CheckTimestamp(*ts, "timestamp"));
  if (posts_.HolderOf(post) != kNoInternalId)
    return Status(Code::kAlreadyExists, "post " + std::to_string(post) + " already exists");
  if (posts_.IsLeaving(post)) {
    return Status(Code::kAlreadyExists, "post " + std::to_string(post) +
                                            " was just removed and is still leaving timelines");
  }
  RELGRAPH_RETURN_IF_ERROR(g.CheckRoomFor(author));
  PublishOutcome out;
  out.ts = ts ? *ts : Now();
  const InternalId a = g.InternUser(author);
  auto added = posts_.Add(a, post, out.ts, static_cast<uint8_t>(kind), g.user_count(), author);
  if (!added.ok()) return added.status();
  out.retained = added->retained;
  if (!out.retained) return out;
  out.evicted = added->trimmed.id;
  if (audience_.IsCelebrity(a)) return out;  // pulled by readers: no fan-out
  // Fans' inboxes may hold the post this one trimmed: this publish's fan-out removes it.
  if (added->trimmed.id != 0) posts_.AddLeaving(a, added->trimmed);
  EnqueueFanout(a, added->entry, /*retract=*/false, added->trimmed);
  return out;
}

Status Feed::DeletePost(Graph& g, UserId author, PostId post) {
  RELGRAPH_RETURN_IF_ERROR(CheckUser(author, "author"));
  if (post == 0) return Status::InvalidArgument("post id must be nonzero");
  const InternalId a = g.FindUser(author);
  if (a == kNoInternalId || !posts_.Holds(a, post)) {
    return Status::NotFound("user " + std::to_string(author) + " has no post " +
                            std::to_string(post));
  }
  const PostEntry e = posts_.Remove(a, post);
  if (!audience_.IsCelebrity(a)) Retract(a, e);
  return Status::OK();
}

void Feed::Retract(InternalId author, const PostEntry& e) {
  posts_.AddLeaving(author, e);
  EnqueueFanout(author, e, /*retract=*/true);
}

// ---- mutes and hides --------------------------------------------------------------------------

Result<bool> Feed::SetMembership(Graph& g, UserId owner, UserId other, bool on, bool mute,
                                 bool replay) {
  RELGRAPH_RETURN_IF_ERROR(CheckUser(owner, "user"));
  RELGRAPH_RETURN_IF_ERROR(CheckUser(other, "other user"));
  if (owner == other) {
    return Status::InvalidArgument(mute ? "a user cannot mute themselves"
                                        : "a user cannot hide their posts from themselves");
  }
  InternalId o = g.FindUser(owner), x = g.FindUser(other);
  if (!on && (o == kNoInternalId || x == kNoInternalId)) return false;
  RELGRAPH_RETURN_IF_ERROR(g.CheckRoomFor(owner, other));
  if (o == kNoInternalId) o = g.InternUser(owner);
  if (x == kNoInternalId) x = g.InternUser(other);
  auto changed = audience_.Set(o, x, on, mute, /*enforce_cap=*/!replay, owner);
  if (!changed.ok() || !*changed) return changed;
  // The reader whose view changed: the muter, or the user hidden from.
  if (mute)
    inboxes_.AddPending(o, x);
  else
    inboxes_.AddPending(x, o);
  return true;
}

Result<bool> Feed::Mute(Graph& g, UserId user, UserId other, bool on) {
  return SetMembership(g, user, other, on, /*mute=*/true, /*replay=*/false);
}

Result<bool> Feed::Hide(Graph& g, UserId author, UserId from, bool on) {
  return SetMembership(g, author, from, on, /*mute=*/false, /*replay=*/false);
}

// ---- graph hooks ------------------------------------------------------------------------------

void Feed::OnFollow(const Graph& g, InternalId follower, InternalId followee) {
  inboxes_.AddPending(follower, followee);
  CheckCelebrity(g, followee);
}

void Feed::OnUnfollow(const Graph& g, InternalId follower, InternalId followee) {
  inboxes_.AddPending(follower, followee);
  CheckCelebrity(g, followee);
}

std::vector<InternalId> Feed::BeforeRemoveUser(const Graph& g, UserId user) {
  std::vector<InternalId> followees;
  const InternalId u = g.FindUser(user);
  if (u == kNoInternalId) return followees;
  const FollowingList& following = g.FollowingOf(u);
  for (size_t i = 0; i < following.size(); ++i) followees.push_back(following.PeerAt(i));
  if (const PostBuffer* posts = posts_.RingOf(u); posts != nullptr) {
    // Its fans' inboxes hold its posts; dropping them (rebuilt exactly on their next read) is
    // cheaper than retracting up to K posts one by one.
    if (!posts->empty() && !audience_.IsCelebrity(u)) DropFanInboxes(g, u);
    posts_.Forget(u);
    // Its queued tasks would push posts that are gone and not among the posts leaving.
    for (Task& t : tasks_) t.cancelled |= t.author == u;
  }
  audience_.Forget(u);
  inboxes_.Drop(u);
  if (audience_.IsCelebrity(u))
    SetCelebrity(u, false);  // its fans' pull lists go stale by the epoch
  BumpCelebrityEpoch();      // the user leaves its fans' following lists
  return followees;
}

void Feed::AfterRemoveUser(const Graph& g, std::span<const InternalId> former_followees) {
  for (InternalId b : former_followees) CheckCelebrity(g, b);
}

// Promotes past celebrity_fans, demotes below half of it. Both drop the fans' inboxes: on
// promotion they hold pushed posts that pulls would now return too, on demotion they lack the
// posts published while pulled. Rare, and bounded by the fan count at the threshold.
void Feed::CheckCelebrity(const Graph& g, InternalId author) {
  const uint32_t fans = g.FanCountOf(author);
  const bool celebrity = audience_.IsCelebrity(author);
  if (!celebrity && fans > options_.celebrity_fans) {
    SetCelebrity(author, true);
    DropFanInboxes(g, author);
  } else if (celebrity && fans < options_.celebrity_fans / 2) {
    SetCelebrity(author, false);
    DropFanInboxes(g, author);
  }
}

void Feed::RecomputeCelebrities(const Graph& g) {
  audience_.ClearCelebrities(g.user_count());
  for (size_t u = 0; u < g.user_count(); ++u) {
    if (g.FanCountOf(static_cast<InternalId>(u)) > options_.celebrity_fans)
      SetCelebrity(static_cast<InternalId>(u), true);
  }
  BumpCelebrityEpoch();  // stales every header's celebrity state
  inboxes_.DropMarks();  // marks keep no epoch: their readers get theirs again by pull
}

// ---- inboxes ----------------------------------------------------------------------------------

// Makes the inbox agree with the reader's current view of `author`: back-fill its retained
// posts when visible and pushed, purge its entries otherwise. Decided from the current state,
// so queued changes of one pair coalesce to the last one.
void Feed::Reconcile(const Graph& g, InternalId reader, Inbox& in, InternalId author) {
  const bool wanted = author != reader && !audience_.IsCelebrity(author) &&
                      g.FollowsInternal(reader, author) && audience_.Visible(reader, author);
  // The author's entries all go, and the wanted ones come back from the ring, in place. An
  // entry may be stale: a removal's fan-out walks the author's fans, which this reader may
  // have stopped being before it ran (and may be again now). Its (time, number) may even
  // have passed to a newer post of that millisecond since, with the entry sorted by the old
  // id; re-inserting sorts it by the right one.
  const uint32_t ring = posts_.RingSlot(author);
  if (ring == kNoSlot) return;  // it never posted: no entry names it
  inboxes_.EraseRing(in, ring);
  if (!wanted) return;
  const PostBuffer& posts = posts_.RingAt(ring);
  for (uint32_t i = posts.size(); i-- > 0;) {
    const PostEntry& e = posts[i];
    if (inboxes_.Below(in, reader, e.key())) break;  // older ones are below it too
    inboxes_.Insert(in, reader, ring, e);
  }
}

void Feed::DropFanInboxes(const Graph& g, InternalId author) {
  std::vector<EdgeEntry> fans(1024);
  std::optional<EntryKey> cursor;
  for (;;) {
    const uint32_t n =
        g.FansBefore(author, cursor, static_cast<uint32_t>(fans.size()), fans.data());
    for (uint32_t i = 0; i < n; ++i) inboxes_.Drop(fans[i].peer);
    if (n < fans.size()) return;
    cursor = g.KeyOf(fans[n - 1]);
  }
}

// ---- replay -----------------------------------------------------------------------------------

Status Feed::ApplyPublish(Graph& g, UserId author, PostId post, TimestampMs ts, uint32_t kind,
                          PostId evicted) {
  RELGRAPH_RETURN_IF_ERROR(CheckUser(author, "author"));
  if (post == 0 || kind > kMaxPostKind || ts < 0 || ts > kMaxTimestampMs)
    return Status::InvalidArgument("publish record out of range");
  RELGRAPH_RETURN_IF_ERROR(g.CheckRoomFor(author));
  const InternalId a = g.InternUser(author);
  return posts_.Replay(a, post, ts, static_cast<uint8_t>(kind), evicted, g.user_count());
}

bool Feed::post_leaving(PostId post) const {
  return posts_.IsLeaving(post);
}

Status Feed::ApplyDeletePost(Graph& g, UserId author, PostId post) {
  RELGRAPH_RETURN_IF_ERROR(CheckUser(author, "author"));
  const InternalId a = g.FindUser(author);
  if (a != kNoInternalId && posts_.Holds(a, post)) posts_.Remove(a, post);
  return Status::OK();
}

Status Feed::ApplyMute(Graph& g, UserId user, UserId other, bool on) {
  auto r = SetMembership(g, user, other, on, /*mute=*/true, /*replay=*/true);
  return r.ok() ? Status::OK() : r.status();
}

Status Feed::ApplyHide(Graph& g, UserId author, UserId from, bool on) {
  auto r = SetMembership(g, author, from, on, /*mute=*/false, /*replay=*/true);
  return r.ok() ? Status::OK() : r.status();
}

}  // namespace relgraph
