// Feed reads: timelines (merge of inbox, own ring and celebrity rings), inbox builds by pull,
// and author pages.
#include <algorithm>
#include <string>

#include <boost/container/small_vector.hpp>

#include "engine/feed/feed_internal.h"

namespace relgraph {

namespace {

Status CheckRequest(UserId u, const FeedPageRequest& r) {
  RELGRAPH_RETURN_IF_ERROR(CheckUser(u, "user"));
  if (r.limit < 1 || r.limit > kMaxFeedPageLimit) {
    return Status::InvalidArgument("limit " + std::to_string(r.limit) + " is out of range 1.." +
                                   std::to_string(kMaxFeedPageLimit));
  }
  if (r.after) RELGRAPH_RETURN_IF_ERROR(CheckTimestamp(r.after->ts, "cursor time"));
  return Status::OK();
}

bool KindWanted(uint64_t kinds, uint8_t kind) {
  return kinds == 0 || ((kinds >> kind) & 1) != 0;
}

}  // namespace

// One author's ring as a source of a merge, consumed from index `pos - 1` downwards.
struct Feed::Stream {
  const PostBuffer* buf;
  uint32_t pos;
  InternalId author;
};

namespace {

// Max-heap of stream heads by key.
struct Head {
  PostEntry e;
  uint32_t stream;
  InternalId author;
};
bool HeadBefore(const Head& a, const Head& b) {
  return PostEntry::Less(a.e, b.e);
}

}  // namespace

void Feed::RefreshCelebrities(const Graph& g, InternalId reader, InboxCold& c) {
  boost::container::small_vector<InternalId, 8> found;
  ForEachVisibleCelebrity(g, reader, [&](InternalId f) { found.push_back(f); });
  inboxes_.SetCelebrities(c, {found.data(), found.size()}, audience_.EpochTag());
}

// Builds the reader's inbox by pull: the newest R posts of its visible ordinary followees;
// the watermark is the newest post left out, so the inbox is exact above it. An inbox that
// comes out empty becomes a mark, when the reader qualifies.
const Feed::Inbox& Feed::BuildInbox(const Graph& g, InternalId reader) {
  inboxes_.Free(reader);  // a rebuild is not a drop
  Inbox& in = inboxes_.New(reader, g.user_count());
  ++rebuilds_;
  std::vector<Stream> streams;
  const FollowingList& following = g.FollowingOf(reader);
  for (size_t i = 0; i < following.size(); ++i) {
    const InternalId f = following.PeerAt(i);
    const PostBuffer* posts = posts_.RingOf(f);
    if (posts == nullptr || posts->empty() || audience_.IsCelebrity(f) ||
        !audience_.Visible(reader, f))
      continue;
    streams.push_back({posts, posts->size(), f});
  }
  std::vector<Head> heap;
  heap.reserve(streams.size());
  for (uint32_t s = 0; s < streams.size(); ++s) {
    heap.push_back({(*streams[s].buf)[streams[s].pos - 1], s, streams[s].author});
  }
  std::make_heap(heap.begin(), heap.end(), HeadBefore);
  const uint32_t r = options_.timeline_length;
  std::vector<InboxEntry> newest_first;
  newest_first.reserve(std::min<size_t>(r, 1024));
  std::optional<PostEntry> left_out;  // the newest post left out: the watermark
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), HeadBefore);
    const Head h = heap.back();
    heap.pop_back();
    if (newest_first.size() == r) {
      left_out = h.e;
      break;
    }
    newest_first.push_back(InboxEntry::Of(posts_.RingSlot(h.author), h.e));
    Stream& s = streams[h.stream];
    if (--s.pos > 0) {
      heap.push_back({(*s.buf)[s.pos - 1], h.stream, s.author});
      std::push_heap(heap.begin(), heap.end(), HeadBefore);
    }
  }
  inboxes_.Fill(reader, in, newest_first, left_out ? &*left_out : nullptr);
  RefreshCelebrities(g, reader, inboxes_.ColdOf(reader));
  const uint32_t now_tick = inboxes_.ActivityTick(Now());
  inboxes_.Touch(reader, now_tick);
  return inboxes_.MarkIfEmpty(reader, now_tick) ? Inboxes::kEmpty : in;
}

const Feed::Inbox& Feed::PrepareInbox(const Graph& g, InternalId reader) {
  const uint32_t now_tick = inboxes_.ActivityTick(Now());
  if (Inboxes::IsMark(inboxes_.SlotOf(reader))) {
    // Nothing to reconcile or refresh: a change of the reader's view gives it a header.
    if (inboxes_.TouchMark(reader, now_tick)) return Inboxes::kEmpty;
    inboxes_.MaterializeMark(reader, audience_.EpochTag());  // past what a mark holds
  }
  Inbox* in = inboxes_.Find(reader);
  const Inbox* out = in;
  if (in == nullptr) {
    out = &BuildInbox(g, reader);
  } else {
    __builtin_prefetch(in);  // read after the cold part: fetch both at once
    InboxCold& c = inboxes_.ColdOf(reader);
    if (inboxes_.HasPending(c)) {
      for (InternalId author : inboxes_.TakePending(c)) Reconcile(g, reader, *in, author);
    }
    // A pending author staled the list too (Inboxes::AddPending).
    if (c.celebrities_epoch != audience_.EpochTag()) RefreshCelebrities(g, reader, c);
    inboxes_.Touch(reader, now_tick);
    if (inboxes_.MarkIfEmpty(reader, now_tick)) out = &Inboxes::kEmpty;
  }
  inboxes_.EnforceBudget(reader);
  return *out;
}

Result<FeedPage> Feed::Timeline(const Graph& g, UserId user, const FeedPageRequest& request) {
  RELGRAPH_RETURN_IF_ERROR(CheckRequest(user, request));
  const InternalId u = g.FindUser(user);
  if (u == kNoInternalId) return FeedPage{};  // follows nobody, has posted nothing
  bool need_rebuild = false;
  auto page = Merge(g, u, PrepareInbox(g, u), request, /*allow_rebuild=*/true, &need_rebuild);
  if (!need_rebuild) return page;
  ++fallbacks_;
  return Merge(g, u, BuildInbox(g, u), request, /*allow_rebuild=*/false, &need_rebuild);
}

// The merge. The timeline is the newest R entries of all streams; `rank` counts the entries
// newer than the one being looked at, so a page at a cursor starts at the cursor's rank and
// stops at R. The inbox stream is exact only above its watermark: when the merge would need an
// entry at or below it, the caller rebuilds the inbox by pull and merges again.
Result<FeedPage> Feed::Merge(const Graph& g, InternalId reader, const Inbox& in,
                             const FeedPageRequest& request, bool allow_rebuild,
                             bool* need_rebuild) {
  FeedPage page;
  const uint32_t r = options_.timeline_length;
  const std::optional<PostKey>& after = request.after;
  if (after && inboxes_.Below(in, reader, *after)) {
    // The cursor is at or below the watermark: after a rebuild the inbox alone holds R
    // entries above it, so the page is empty.
    if (allow_rebuild) *need_rebuild = true;
    return page;
  }
  const InboxBuffer& inbox = in.entries();
  uint32_t inbox_pos =
      after ? inbox.LowerBound(*after, [this](const InboxEntry& x) { return posts_.IdOfEntry(x); })
            : inbox.size();
  // Each inbox entry on the page costs a lookup in its author's ring (for the post's id and
  // author), a chain of two loads: the ring header, then the entry (with the author's
  // external id). The two links are fetched for the likely entries now and after the setup
  // below, so their misses overlap with each other and with that work.
  const uint32_t ahead = std::min(request.limit + 1, inbox_pos);
  auto prefetch_page = [&](int stage) {
    for (uint32_t i = 0; i < ahead; ++i) posts_.PrefetchRing(g, inbox[inbox_pos - 1 - i], stage);
  };
  prefetch_page(0);
  auto start = [&](const PostBuffer& b) { return after ? b.LowerBound(*after) : b.size(); };
  // Streams: the reader's own ring, then the celebrities'. Most readers follow a few
  // celebrities at most: no allocation for the merge's state.
  // A marked reader follows no celebrity (kMarkBit).
  const uint32_t slot = inboxes_.SlotOf(reader);
  const std::span<const InternalId> celebrities =
      Inboxes::IsPoolSlot(slot) ? inboxes_.CelebritiesOf(inboxes_.ColdAt(slot))
                                : std::span<const InternalId>{};
  boost::container::small_vector<Stream, 8> streams;
  // Sized once and filled by index: push_back's out-of-line growth path cost 1.5% of a
  // heavy reader's time.
  streams.resize(1 + celebrities.size());
  uint32_t n_streams = 0;
  auto add_stream = [&](const PostBuffer* posts, InternalId author) {
    if (posts != nullptr && !posts->empty()) streams[n_streams++] = {posts, start(*posts), author};
  };
  add_stream(posts_.RingOf(reader), reader);
  for (InternalId c : celebrities) add_stream(posts_.RingOf(c), c);
  streams.resize(n_streams);
  prefetch_page(1);
  // Inbox heads carry stream number kInbox; the rings' are their index in `streams`.
  constexpr uint32_t kInbox = ~uint32_t{0};

  // Rank of the cursor: entries above it in every stream, less inbox entries whose post is
  // leaving (looked up from whichever side is smaller: the set, or the inbox above the cursor).
  size_t rank = inbox.size() - inbox_pos;
  for (const Stream& s : streams) rank += s.buf->size() - s.pos;
  const uint32_t inbox_above = inbox.size() - inbox_pos;
  const size_t leaving = posts_.leaving_count();
  if (leaving != 0 && leaving <= inbox_above) {
    posts_.ForEachLeaving([&](PostId, const PostStore::Leaving& l) {
      if (after && !(*after < l.entry.key())) return;
      if (inbox.Find(InboxEntry::Of(l.ring, l.entry)) < inbox.size()) --rank;
    });
  } else if (leaving != 0) {
    for (uint32_t i = inbox_pos; i < inbox.size(); ++i) {
      if (posts_.LeavingIdOf(inbox[i]) != 0) --rank;
    }
  }
  if (rank >= r) return page;

  boost::container::small_vector<Head, 10> heap;
  heap.reserve(streams.size() + 1);
  // Puts the inbox's next entry whose post is still in its ring on the heap; the others are
  // leaving, and the rank above already left them out.
  bool inbox_in_heap = false;
  // Inlined: it runs once per entry on the page, and GCC left it out of line.
  auto next_inbox = [&]() __attribute__((always_inline)) {
    while (inbox_pos > 0) {
      const InboxEntry& x = inbox[--inbox_pos];
      if (const PostEntry* e = posts_.RingEntry(x); e != nullptr) {
        heap.push_back({*e, kInbox, posts_.RingAt(x.ring).owner});
        std::push_heap(heap.begin(), heap.end(), HeadBefore);
        inbox_in_heap = true;
        return;
      }
    }
  };
  for (uint32_t s = 0; s < streams.size(); ++s) {
    if (streams[s].pos > 0)
      heap.push_back({(*streams[s].buf)[streams[s].pos - 1], s, streams[s].author});
  }
  std::make_heap(heap.begin(), heap.end(), HeadBefore);
  next_inbox();
  page.entries.reserve(request.limit);
  while (rank < r) {
    if (!inbox_in_heap && in.has_watermark() &&
        (heap.empty() || inboxes_.Below(in, reader, heap.front().e.key()))) {
      // The inbox is exhausted, and older posts of ordinary followees may exist below its
      // watermark.
      if (allow_rebuild) {
        *need_rebuild = true;
        return page;
      }
      break;
    }
    if (heap.empty()) break;
    std::pop_heap(heap.begin(), heap.end(), HeadBefore);
    const Head h = heap.back();
    heap.pop_back();
    if (h.stream == kInbox) {
      inbox_in_heap = false;
      next_inbox();
    } else if (Stream& s = streams[h.stream]; --s.pos > 0) {
      heap.push_back({(*s.buf)[s.pos - 1], h.stream, s.author});
      std::push_heap(heap.begin(), heap.end(), HeadBefore);
    }
    ++rank;
    if (page.entries.size() == request.limit) {
      page.next = PostKey{page.entries.back().ts, page.entries.back().post};
      break;
    }
    if (!KindWanted(request.kinds, h.e.kind())) continue;
    page.entries.push_back({h.e.id, h.author, h.e.ts(), h.e.kind()});  // internal id for now
  }
  // Authors' external ids, fetched together.
  for (const FeedEntry& e : page.entries) g.PrefetchExternal(static_cast<InternalId>(e.author));
  for (FeedEntry& e : page.entries) e.author = g.ExternalOf(static_cast<InternalId>(e.author));
  return page;
}

Result<FeedPage> Feed::UserPosts(const Graph& g, UserId author,
                                 const FeedPageRequest& request) const {
  RELGRAPH_RETURN_IF_ERROR(CheckRequest(author, request));
  FeedPage page;
  const InternalId a = g.FindUser(author);
  const PostBuffer* ring = a == kNoInternalId ? nullptr : posts_.RingOf(a);
  if (ring == nullptr) return page;
  const PostBuffer& posts = *ring;
  uint32_t pos = request.after ? posts.LowerBound(*request.after) : posts.size();
  while (pos > 0) {
    const PostEntry& e = posts[--pos];
    if (page.entries.size() == request.limit) {
      page.next = PostKey{page.entries.back().ts, page.entries.back().post};
      break;
    }
    if (KindWanted(request.kinds, e.kind()))
      page.entries.push_back({e.id, author, e.ts(), e.kind()});
  }
  return page;
}

// The external ids of one of `owner`'s sets (mutes or hides), in id order.
Result<std::vector<UserId>> Feed::ExternalSet(const Graph& g, UserId owner, bool mutes) const {
  RELGRAPH_RETURN_IF_ERROR(CheckUser(owner, mutes ? "user" : "author"));
  std::vector<UserId> out;
  const InternalId o = g.FindUser(owner);
  const IdSet* set = o == kNoInternalId ? nullptr : audience_.ListOf(o, mutes);
  if (set == nullptr) return out;
  for (InternalId m : *set) out.push_back(g.ExternalOf(m));
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<UserId>> Feed::MutesOf(const Graph& g, UserId user) const {
  return ExternalSet(g, user, /*mutes=*/true);
}

Result<std::vector<UserId>> Feed::HidesOf(const Graph& g, UserId author) const {
  return ExternalSet(g, author, /*mutes=*/false);
}

}  // namespace relgraph
