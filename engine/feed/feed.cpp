// Feed writes, graph hooks, inbox maintenance and replay (the fan-out is feed_fanout.cpp).
#include <algorithm>
#include <bit>
#include <limits>
#include <string>

#include "engine/feed/feed_internal.h"

namespace relgraph {

namespace {

constexpr size_t kMaxPendingPerInbox = 64;  // past this, dropping the inbox is cheaper

}  // namespace

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
      tick_base_(clock_->NowMs()),
      tick_shift_(std::bit_width(static_cast<uint64_t>(
                      std::max<TimestampMs>(1, options.active_reader_ms / 1024))) -
                  1),
      active_ticks_(static_cast<uint32_t>(options.active_reader_ms >> tick_shift_)) {}

uint32_t Feed::ActivityTick(TimestampMs now) const {
  if (now <= tick_base_) return 0;
  return static_cast<uint32_t>(std::min<TimestampMs>((now - tick_base_) >> tick_shift_,
                                                     std::numeric_limits<uint32_t>::max()));
}

Feed::~Feed() = default;

size_t Feed::ExactWatermarkBytes() const {
  constexpr size_t kNode = sizeof(void*) + sizeof(std::pair<const uint32_t, PostId>) + 8;
  return exact_watermarks_.size() * kNode + exact_watermarks_.bucket_count() * sizeof(void*);
}

void Feed::SetCelebrity(InternalId u, bool on) {
  if (audience_.SetCelebrity(u, on)) BumpCelebrityEpoch();
}

void Feed::BumpCelebrityEpoch() {
  // Inboxes keep the epoch's tag, which may just have wrapped: then mark every list stale.
  if (!audience_.BumpEpoch()) return;
  for (size_t slot = 0; slot < inbox_cold_.size(); ++slot) inbox_cold_[slot].celebrities_epoch = 0;
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
  if (o == kNoInternalId) o = g.InternUser(owner);
  if (x == kNoInternalId) x = g.InternUser(other);
  auto changed = audience_.Set(o, x, on, mute, /*enforce_cap=*/!replay, owner);
  if (!changed.ok() || !*changed) return changed;
  // The reader whose view changed: the muter, or the user hidden from.
  if (mute)
    AddPending(o, x);
  else
    AddPending(x, o);
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
  AddPending(follower, followee);
  CheckCelebrity(g, followee);
}

void Feed::OnUnfollow(const Graph& g, InternalId follower, InternalId followee) {
  AddPending(follower, followee);
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
  DropInbox(u);
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
  // Marks keep no epoch: their readers get theirs again by pull.
  for (size_t u = 0; u < inbox_of_.size(); ++u) {
    if (IsMark(inbox_of_[u])) DropInbox(static_cast<InternalId>(u));
  }
}

// ---- inbox maintenance ------------------------------------------------------------------------

size_t Feed::InboxBytes(const Inbox& in, const InboxCold& c) const {
  const InboxSide* side = SideOf(c);
  return sizeof(Inbox) + sizeof(InboxCold) + in.entries().MemoryBytes() +
         (side != nullptr ? side->MemoryBytes() : 0);
}

const Feed::InboxSide* Feed::SideOf(const InboxCold& c) const {
  return c.one_celebrity || c.side == kNoSlot ? nullptr : &sides_[c.side];
}

Feed::InboxSide& Feed::EnsureSide(InboxCold& c) {
  const InternalId one = c.one_celebrity ? c.side : kNoInternalId;
  if (one != kNoInternalId) {
    c.one_celebrity = 0;
    c.side = kNoSlot;
  }
  if (c.side == kNoSlot) {
    if (!free_sides_.empty()) {
      c.side = free_sides_.back();
      free_sides_.pop_back();
    } else {
      c.side = static_cast<uint32_t>(sides_.size());
      // Grow by a quarter, not double: unused capacity here is counted as inbox memory.
      if (sides_.size() == sides_.capacity())
        sides_.reserve(sides_.size() + sides_.size() / 4 + 16);
      sides_.emplace_back();
    }
  }
  if (one != kNoInternalId) sides_[c.side].AddFirst(one, side_pool_);
  return sides_[c.side];
}

void Feed::FreeSide(InboxCold& c) {
  if (c.one_celebrity) {
    c.one_celebrity = 0;
    c.side = kNoSlot;
    return;
  }
  if (c.side == kNoSlot) return;
  sides_[c.side].Clear(side_pool_);
  free_sides_.push_back(c.side);
  c.side = kNoSlot;
}

void Feed::ReleaseSideIfEmpty(InboxCold& c) {
  const InboxSide* side = SideOf(c);
  if (side != nullptr && side->empty()) FreeSide(c);
}

Feed::Inbox& Feed::NewInbox(InternalId reader, size_t users) {
  static_assert(sizeof(Inbox) == 32 && sizeof(InboxCold) == 12);
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(inbox_pool_.size());
    inbox_pool_.emplace_back();
    inbox_cold_.emplace_back();
  }
  GrowSlotArray(inbox_of_, reader, users);
  inbox_of_[reader] = slot;
  ++inboxes_;
  InboxCold& c = inbox_cold_[slot];
  c.reader = reader;
  c.referenced = 1;
  return inbox_pool_[slot];
}

void Feed::InboxInsert(Inbox& in, InternalId reader, uint32_t ring, const PostEntry& e) {
  if (Below(in, reader, e.key())) return;  // below the exact range
  const size_t bytes = in.entries().MemoryBytes();
  if (!in.entries().Insert(InboxEntry::Of(ring, e), e.id, options_.timeline_length,
                           inbox_blocks_.For(SlotOf(reader)),
                           [this](const InboxEntry& x) { return posts_.IdOfEntry(x); }))
    return;
  ++fanout_inserts_;
  ++inbox_entries_;
  if (in.entries().size() > options_.timeline_length) TrimOldest(in, reader);
  inbox_bytes_ += in.entries().MemoryBytes() - bytes;
}

// The oldest entry goes with every other entry of its millisecond, and the watermark rises to
// the top of that millisecond. The dropped entry's exact key would need its id, a ring lookup
// (two cache misses) for every insert into a full inbox; the few more entries this drops are
// rare, and a read that needs them falls back to pull.
void Feed::TrimOldest(Inbox& in, InternalId reader) {
  const PostKey dropped{in.entries().oldest().ts(), ~PostId{0}};
  do {
    in.entries().PopOldest();
    --inbox_entries_;
  } while (!in.entries().empty() && in.entries().oldest().ts() == dropped.ts);
  // Every entry is above the watermark, so it rises: an exact one becomes a top one.
  if (in.has_exact_watermark()) exact_watermarks_.erase(SlotOf(reader));
  in.RaiseToTopOf(dropped.ts);
}

void Feed::InboxErase(Inbox& in, InternalId reader, uint32_t ring, const PostEntry& e) {
  if (Below(in, reader, e.key())) return;  // nothing is kept there
  const uint32_t at = in.entries().Find(InboxEntry::Of(ring, e));
  if (at < in.entries().size()) {
    in.entries().EraseAt(at);
    --inbox_entries_;
  }
}

void Feed::AddPending(InternalId reader, InternalId author) {
  const uint32_t word = SlotOf(reader);
  if (word == kNoSlot) return;
  Inbox* in = IsMark(word) ? &MaterializeMark(reader) : &inbox_pool_[word];
  InboxCold& c = ColdOf(reader);
  c.celebrities_epoch = 0;
  if (const InboxSide* side = SideOf(c); side != nullptr) {
    if (std::ranges::find(side->pending(), author) != side->pending().end()) return;
    if (side->pending().size() >= kMaxPendingPerInbox) {
      DropInbox(reader);
      return;
    }
  }
  const size_t bytes = InboxBytes(*in, c);
  EnsureSide(c).AddSecond(author, side_pool_);
  inbox_bytes_ += InboxBytes(*in, c) - bytes;
}

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
  inbox_entries_ -= in.entries().RemoveIf([&](const InboxEntry& x) { return x.ring == ring; });
  if (!wanted) return;
  const PostBuffer& posts = posts_.RingAt(ring);
  for (uint32_t i = posts.size(); i-- > 0;) {
    const PostEntry& e = posts[i];
    if (Below(in, reader, e.key())) break;  // older ones are below it too
    InboxInsert(in, reader, ring, e);
  }
}

bool Feed::FreeInbox(InternalId reader) {
  const uint32_t slot = SlotOf(reader);
  if (slot == kNoSlot) return false;
  if (IsMark(slot)) {
    inbox_of_[reader] = kNoSlot;
    --inboxes_;
    --marks_;
    return true;
  }
  Inbox& in = inbox_pool_[slot];
  InboxCold& c = inbox_cold_[slot];
  inbox_bytes_ -= InboxBytes(in, c);
  inbox_entries_ -= in.entries().size();
  --inboxes_;
  FreeSide(c);
  if (in.has_exact_watermark()) exact_watermarks_.erase(slot);
  in.entries().Clear(inbox_blocks_.For(slot));
  in.Reset();
  c = InboxCold{};
  free_slots_.push_back(slot);
  inbox_of_[reader] = kNoSlot;
  return true;
}

Feed::Inbox& Feed::MaterializeMark(InternalId reader) {
  const uint32_t tick = MarkTick(inbox_of_[reader]);
  --inboxes_;  // NewInbox counts it again
  --marks_;
  Inbox& in = NewInbox(reader, inbox_of_.size());
  in.last_read = tick;
  InboxCold& c = ColdOf(reader);
  c.celebrities_epoch = audience_.EpochTag();  // no celebrity followee, which a mark keeps right
  inbox_bytes_ += InboxBytes(in, c);
  return in;
}

bool Feed::MarkIfEmpty(InternalId reader, uint32_t now_tick) {
  const uint32_t slot = SlotOf(reader);
  const Inbox& in = inbox_pool_[slot];
  // No side, and no celebrity in the cold part (one_celebrity keeps it in `side` too).
  if (!in.entries().empty() || in.has_watermark() || inbox_cold_[slot].side != kNoSlot ||
      now_tick > kMaxMarkTick)
    return false;
  FreeInbox(reader);
  inbox_of_[reader] = MarkOf(now_tick);
  ++inboxes_;
  ++marks_;
  return true;
}

void Feed::DropInbox(InternalId reader) {
  if (FreeInbox(reader)) ++drops_;
}

void Feed::DropFanInboxes(const Graph& g, InternalId author) {
  std::vector<EdgeEntry> fans(1024);
  std::optional<EntryKey> cursor;
  for (;;) {
    const uint32_t n =
        g.FansBefore(author, cursor, static_cast<uint32_t>(fans.size()), fans.data());
    for (uint32_t i = 0; i < n; ++i) DropInbox(fans[i].peer);
    if (n < fans.size()) return;
    cursor = g.KeyOf(fans[n - 1]);
  }
}

// CLOCK: the hand sweeps the pool; an inbox read since the hand's last pass loses its mark
// and stays, one not read since is dropped. Two passes visit every inbox with its mark clear,
// so the loop ends having reached the target or dropped all but `keep`.
void Feed::EnforceBudget(InternalId keep) {
  if (inbox_bytes_ <= options_.inbox_memory_budget) return;
  const size_t target = options_.inbox_memory_budget / 10 * 9;
  for (size_t steps = 2 * inbox_cold_.size(); steps > 0 && inbox_bytes_ > target; --steps) {
    if (clock_hand_ >= inbox_cold_.size()) clock_hand_ = 0;
    InboxCold& c = inbox_cold_[clock_hand_++];
    if (c.reader == kNoInternalId || c.reader == keep) continue;
    if (c.referenced != 0) {
      c.referenced = 0;
    } else {
      DropInbox(c.reader);
    }
  }
}

// ---- replay -----------------------------------------------------------------------------------

Status Feed::ApplyPublish(Graph& g, UserId author, PostId post, TimestampMs ts, uint32_t kind,
                          PostId evicted) {
  RELGRAPH_RETURN_IF_ERROR(CheckUser(author, "author"));
  if (post == 0 || kind > kMaxPostKind || ts < 0 || ts > kMaxTimestampMs)
    return Status::InvalidArgument("publish record out of range");
  const InternalId a = g.InternUser(author);
  return posts_.Replay(a, post, ts, static_cast<uint8_t>(kind), evicted, g.user_count());
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
