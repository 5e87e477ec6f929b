// Feed reads: timelines (merge of inbox, own ring and celebrity rings), inbox builds by pull,
// and author pages.
#include <algorithm>
#include <string>

#include <boost/container/small_vector.hpp>

#include "engine/feed_internal.h"

namespace relgraph {

namespace {

Status CheckRequest(UserId u, const FeedPageRequest& r) {
  RELGRAPH_RETURN_IF_ERROR(CheckUser(u, "user"));
  if (r.limit < 1 || r.limit > kMaxFeedPageLimit) {
    return Status::InvalidArgument("limit " + std::to_string(r.limit) + " is out of range 1.." +
                                   std::to_string(kMaxFeedPageLimit));
  }
  if (r.after && (r.after->ts < 0 || r.after->ts > kMaxTimestampMs))
    return Status::InvalidArgument("cursor timestamp is out of range");
  return Status::OK();
}

bool KindWanted(uint64_t kinds, uint8_t kind) {
  return kinds == 0 || ((kinds >> kind) & 1) != 0;
}

}  // namespace

// One sorted source of a merge, consumed from index `pos - 1` downwards.
struct Feed::Stream {
  const PostBuffer* buf;
  uint32_t pos;
  InternalId author;  // kNoInternalId for the inbox (entries of many authors)
};

namespace {

// Max-heap of stream heads by key.
struct Head {
  PostEntry e;
  uint32_t stream;
};
bool HeadBefore(const Head& a, const Head& b) {
  return PostEntry::Less(a.e, b.e);
}

}  // namespace

void Feed::RefreshCelebrities(const Graph& g, InternalId reader, Inbox& in) {
  if (InboxSide* side = SideOf(in); side != nullptr) side->celebrities.clear();
  const FollowingList& following = g.FollowingOf(reader);
  for (size_t i = 0; i < following.size(); ++i) {
    const InternalId f = following.PeerAt(i);
    if (IsCelebrity(f) && Visible(reader, f)) EnsureSide(in).celebrities.push_back(f);
  }
  in.celebrities_epoch = EpochTag();
}

// Builds the reader's inbox by pull: the newest R posts of its visible ordinary followees;
// the watermark is the newest post left out, so the inbox is exact above it.
Feed::Inbox& Feed::BuildInbox(const Graph& g, InternalId reader) {
  FreeInbox(reader);  // a rebuild is not a drop
  Inbox& in = NewInbox(reader, g.user_count());
  ++rebuilds_;
  std::vector<Stream> streams;
  const FollowingList& following = g.FollowingOf(reader);
  for (size_t i = 0; i < following.size(); ++i) {
    const InternalId f = following.PeerAt(i);
    const PostBuffer* posts = RingOf(f);
    if (posts == nullptr || posts->empty() || IsCelebrity(f) || !Visible(reader, f)) continue;
    streams.push_back({posts, posts->size(), f});
  }
  std::vector<Head> heap;
  heap.reserve(streams.size());
  for (uint32_t s = 0; s < streams.size(); ++s) {
    heap.push_back({(*streams[s].buf)[streams[s].pos - 1], s});
  }
  std::make_heap(heap.begin(), heap.end(), HeadBefore);
  const uint32_t r = options_.timeline_length;
  std::vector<PostEntry> newest_first;
  newest_first.reserve(std::min<size_t>(r, 1024));
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), HeadBefore);
    const Head h = heap.back();
    heap.pop_back();
    if (newest_first.size() == r) {
      in.set_watermark(h.e.key());
      break;
    }
    newest_first.push_back(h.e);
    Stream& s = streams[h.stream];
    if (--s.pos > 0) {
      heap.push_back({(*s.buf)[s.pos - 1], h.stream});
      std::push_heap(heap.begin(), heap.end(), HeadBefore);
    }
  }
  for (auto it = newest_first.rbegin(); it != newest_first.rend(); ++it)
    in.entries.Insert(*it, r, inbox_slab_);
  inbox_entries_ += in.entries.size();
  RefreshCelebrities(g, reader, in);
  inbox_bytes_ += InboxBytes(in);
  in.last_read = Now();
  return in;
}

Feed::Inbox& Feed::PrepareInbox(const Graph& g, InternalId reader) {
  Inbox* in = InboxOf(reader);
  if (in == nullptr) {
    in = &BuildInbox(g, reader);
  } else {
    InboxSide* side = SideOf(*in);
    const bool pending = side != nullptr && !side->pending.empty();
    if (pending || in->celebrities_epoch != EpochTag()) {
      const size_t bytes = InboxBytes(*in);
      if (pending) {
        std::vector<InternalId> authors;
        authors.swap(side->pending);
        for (InternalId author : authors) Reconcile(g, reader, *in, author);
      }
      if (in->celebrities_epoch != EpochTag()) RefreshCelebrities(g, reader, *in);
      ReleaseSideIfEmpty(*in);
      inbox_bytes_ += InboxBytes(*in) - bytes;
    }
    in->referenced = 1;
    in->last_read = Now();
  }
  EnforceBudget(reader);
  return *in;
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
Result<FeedPage> Feed::Merge(const Graph& g, InternalId reader, Inbox& in,
                             const FeedPageRequest& request, bool allow_rebuild,
                             bool* need_rebuild) {
  static const PostBuffer kNoPosts;
  FeedPage page;
  const uint32_t r = options_.timeline_length;
  const std::optional<PostKey>& after = request.after;
  if (after && in.Below(*after)) {
    // The cursor is at or below the watermark: after a rebuild the inbox alone holds R
    // entries above it, so the page is empty.
    if (allow_rebuild) *need_rebuild = true;
    return page;
  }
  auto start = [&](const PostBuffer& b) { return after ? b.LowerBound(*after) : b.size(); };
  const PostBuffer* own = RingOf(reader);
  const PostBuffer& own_posts = own != nullptr ? *own : kNoPosts;
  Stream streams[2] = {{&in.entries, start(in.entries), kNoInternalId},
                       {&own_posts, start(own_posts), reader}};
  // Each inbox entry on the page costs a post-index lookup (to name its author): start the
  // likely ones now, so their misses overlap with each other and with the celebrities' rings
  // and the rank below, instead of queueing one after another.
  for (uint32_t i = 0, pos = streams[0].pos; i <= request.limit && i < pos; ++i)
    PrefetchIndex(in.entries[pos - 1 - i].id);
  // Most readers follow a few celebrities at most: no allocation for the merge's state.
  boost::container::small_vector<Stream, 8> pulled;
  if (const InboxSide* side = SideOf(in); side != nullptr) {
    pulled.reserve(side->celebrities.size());
    for (InternalId c : side->celebrities) {
      const PostBuffer* posts = RingOf(c);
      if (posts != nullptr && !posts->empty()) pulled.push_back({posts, start(*posts), c});
    }
  }
  auto stream = [&](uint32_t s) -> Stream& { return s < 2 ? streams[s] : pulled[s - 2]; };
  const uint32_t n_streams = 2 + static_cast<uint32_t>(pulled.size());

  // Rank of the cursor: entries above it in every stream, less inbox entries being retracted
  // (looked up from whichever side is smaller: the set, or the inbox above the cursor).
  size_t rank = 0;
  for (uint32_t s = 0; s < n_streams; ++s) rank += stream(s).buf->size() - stream(s).pos;
  const uint32_t inbox_above = in.entries.size() - streams[0].pos;
  if (retracting_.size() <= inbox_above) {
    for (const auto& entry : retracting_) {
      const PostKey& key = entry.second;
      if (after && !(*after < key)) continue;
      if (in.entries.Find(key) < in.entries.size()) --rank;  // the key holds the id
    }
  } else {
    for (uint32_t i = streams[0].pos; i < in.entries.size(); ++i) {
      const PostEntry& e = in.entries[i];
      if ((!after || *after < e.key()) && retracting_.count(e.id) != 0) --rank;
    }
  }
  if (rank >= r) return page;

  boost::container::small_vector<Head, 10> heap;
  heap.reserve(n_streams);
  for (uint32_t s = 0; s < n_streams; ++s) {
    if (stream(s).pos > 0) heap.push_back({(*stream(s).buf)[stream(s).pos - 1], s});
  }
  std::make_heap(heap.begin(), heap.end(), HeadBefore);
  page.entries.reserve(request.limit);
  while (rank < r) {
    const bool inbox_exhausted = streams[0].pos == 0;
    if (inbox_exhausted && in.has_watermark() && (heap.empty() || in.Below(heap.front().e.key()))) {
      // Older posts of ordinary followees may exist below the watermark.
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
    Stream& s = stream(h.stream);
    if (--s.pos > 0) {
      heap.push_back({(*s.buf)[s.pos - 1], h.stream});
      std::push_heap(heap.begin(), heap.end(), HeadBefore);
    }
    InternalId author = s.author;
    if (h.stream == 0) {
      // An inbox entry whose post has left (deleted or trimmed, its removal from inboxes still
      // queued) is not part of the timeline. Every other inbox entry's post is retained.
      if (!retracting_.empty() && retracting_.count(h.e.id) != 0) continue;
      author = AuthorOfEntry(h.e);
      if (author == kNoInternalId) continue;
    }
    ++rank;
    if (page.entries.size() == request.limit) {
      page.next = PostKey{page.entries.back().ts, page.entries.back().post};
      break;
    }
    if (!KindWanted(request.kinds, h.e.kind())) continue;
    page.entries.push_back({h.e.id, author, h.e.ts(), h.e.kind()});  // internal id for now
  }
  // Authors' external ids, likewise fetched together.
  for (const FeedEntry& e : page.entries) g.PrefetchExternal(static_cast<InternalId>(e.author));
  for (FeedEntry& e : page.entries) e.author = g.ExternalOf(static_cast<InternalId>(e.author));
  return page;
}

Result<FeedPage> Feed::UserPosts(const Graph& g, UserId author,
                                 const FeedPageRequest& request) const {
  RELGRAPH_RETURN_IF_ERROR(CheckRequest(author, request));
  FeedPage page;
  const InternalId a = g.FindUser(author);
  const PostBuffer* ring = a == kNoInternalId ? nullptr : RingOf(a);
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
  const IdSet* set = o == kNoInternalId ? nullptr : ListOf(o, mutes);
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
