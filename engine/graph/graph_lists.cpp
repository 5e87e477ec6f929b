// Graph queries: relations, the three paged lists, counts and known followers.
//
// Following and fans pages share BuildPage: a cursor or offset becomes an end rank in the
// ascending list, and the page is the `limit` entries before it, read backwards (newest first).
// Friends are derived from the following list (they are its kMutual entries, so at most the
// follow cap): the friendship time needs the reverse edge's time, read from the user's own
// fan list when it is short beside the friends, else looked up in each friend's following
// list, then the page is selected from those keys.
#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "engine/graph/graph.h"

namespace relgraph {
namespace {

// A friends page reads the friends' times from the user's fan list while it holds at most
// this many entries per friend: the scan decodes a few ns an entry, a lookup in a friend's
// own list costs a cache miss or two and a gap decode (~100 ns or more).
constexpr uint32_t kFriendTimesFromFansRatio = 32;

}  // namespace

Status Graph::CheckPageRequest(UserId a, const PageRequest& r) {
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(a, "user"));
  if (r.limit < 1 || r.limit > kMaxPageLimit) {
    return Status::InvalidArgument("page limit must be in [1, " + std::to_string(kMaxPageLimit) +
                                   "], got " + std::to_string(r.limit));
  }
  if (r.viewer) RELGRAPH_RETURN_IF_ERROR(CheckUserId(*r.viewer, "viewer"));
  if (r.after) RELGRAPH_RETURN_IF_ERROR(CheckTimestamp(r.after->ts, "cursor time"));
  return Status::OK();
}

// ---- relations --------------------------------------------------------------------------------

// Inlined into RelationOf: a call per relation costs batches of 100 about 8%.
[[gnu::always_inline]] inline Relation Graph::FollowRelationOf(InternalId a, InternalId b) const {
  if (a == b) return Relation::kNone;
  const UserRecord& ua = users_[a];
  // "Does b follow a?" is answered by a's own fan list when it is short (most users: one block,
  // often already in cache), else by b's following list, fetched while a's list is scanned.
  const bool own_fans = ua.fans.IsShort();
  if (!own_fans) __builtin_prefetch(users_[b].following.peers_address());
  const size_t i = ua.following.FindPeer(b);
  if (i < ua.following.size()) {
    return ua.following.MutualAt(i) ? Relation::kMutual : Relation::kFollowing;
  }
  if (own_fans) return ua.fans.ShortContainsPeer(b) ? Relation::kFollowedBy : Relation::kNone;
  const FollowingList& fb = users_[b].following;
  return fb.FindPeer(a) < fb.size() ? Relation::kFollowedBy : Relation::kNone;
}

Relation Graph::RelationOf(InternalId a, InternalId b) const {
  return WithAccess(a, b, FollowRelationOf(a, b));
}

Relation Graph::ViewerRelation(InternalId viewer, InternalId other) const {
  if (viewer == kNoInternalId) return Relation::kNone;
  return RelationOf(viewer, other);
}

TimestampMs Graph::FollowTimeOf(InternalId a, InternalId b) const {
  const FollowingList& f = users_[a].following;
  return f.TsAt(f.FindPeer(b));
}

Result<Relation> Graph::GetRelation(UserId a, UserId b) const {
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(a, "user"));
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(b, "other user"));
  const InternalId ai = ids_.Find(a);
  const InternalId bi = ids_.Find(b);
  if (ai == kNoInternalId || bi == kNoInternalId) return Relation::kNone;
  return RelationOf(ai, bi);
}

Result<std::vector<Relation>> Graph::GetRelations(UserId a, std::span<const UserId> others) const {
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(a, "user"));
  if (others.empty() || others.size() > kMaxBatchSize) {
    return Status::InvalidArgument("a relations batch holds 1 to " + std::to_string(kMaxBatchSize) +
                                   " ids, got " + std::to_string(others.size()));
  }
  for (size_t i = 0; i < others.size(); ++i) {
    if (others[i] == 0) {
      return Status(Code::kInvalidUserId, "id 0 at position " + std::to_string(i) + " is invalid");
    }
  }
  std::vector<Relation> out(others.size(), Relation::kNone);
  const InternalId ai = ids_.Find(a);
  if (ai == kNoInternalId) return out;
  // Software pipeline: fetch every id's slot; then the record it points to, which confirms it;
  // then resolve every id and fetch every list, so the cache misses of the batch overlap
  // instead of following one another.
  InternalId ids[kMaxBatchSize];
  for (size_t i = 0; i < others.size(); ++i) ids_.Prefetch(others[i]);
  for (size_t i = 0; i < others.size(); ++i) ids[i] = ids_.PrefetchCandidate(others[i]);
  for (size_t i = 0; i < others.size(); ++i) {
    ids[i] = ids_.Confirm(ids[i], others[i]);
    if (ids[i] != kNoInternalId) __builtin_prefetch(users_[ids[i]].following.peers_address());
  }
  for (size_t i = 0; i < others.size(); ++i) {
    if (ids[i] != kNoInternalId) out[i] = RelationOf(ai, ids[i]);
  }
  return out;
}

void Graph::PrefetchUsers(const InternalId* ids, size_t n) const {
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] != kNoInternalId) __builtin_prefetch(&users_[ids[i]]);
  }
  for (size_t i = 0; i < n; ++i) {
    if (ids[i] != kNoInternalId) __builtin_prefetch(users_[ids[i]].following.peers_address());
  }
}

// ---- pages ------------------------------------------------------------------------------------

template <typename List>
Page Graph::BuildPage(const List& list, const PageRequest& request, InternalId viewer) const {
  const EntryOrder ord = order();
  size_t end;
  if (request.after) {
    end = list.Rank(time_.StoredKey(EntryKey{request.after->ts, request.after->user}), ord);
  } else {
    end = request.offset >= list.size() ? 0 : list.size() - request.offset;
  }
  EdgeEntry buffer[kMaxPageLimit];
  const uint32_t n = list.CopyDescending(end, request.limit, buffer);
  InternalId peers[kMaxPageLimit];
  for (uint32_t i = 0; i < n; ++i) {
    peers[i] = buffer[i].peer;
    ids_.PrefetchRecord(peers[i]);
  }
  if (viewer != kNoInternalId && !users_[viewer].fans.IsShort()) PrefetchUsers(peers, n);
  Page page;
  page.entries.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    page.entries[i] = ListEntry{ids_.External(buffer[i].peer), time_.Answered(EntryTs(buffer[i])),
                                ViewerRelation(viewer, buffer[i].peer), EntryMutual(buffer[i])};
  }
  if (end > n) page.next = Cursor{page.entries.back().ts, page.entries.back().user};
  return page;
}

InternalId Graph::FindViewer(const PageRequest& request) const {
  if (!request.viewer) return kNoInternalId;
  const InternalId v = ids_.Find(*request.viewer);
  PrefetchUsers(&v, 1);  // the viewer's list is scanned once per entry
  return v;
}

template <typename List>
Result<Page> Graph::ListPage(UserId a, const PageRequest& request, List UserRecord::*list) const {
  RELGRAPH_RETURN_IF_ERROR(CheckPageRequest(a, request));
  const InternalId ai = ids_.Find(a);
  const InternalId viewer = FindViewer(request);
  if (ai == kNoInternalId) return Page{};
  return BuildPage(users_[ai].*list, request, viewer);
}

Result<Page> Graph::Following(UserId a, const PageRequest& request) const {
  return ListPage(a, request, &UserRecord::following);
}

Result<Page> Graph::Fans(UserId a, const PageRequest& request) const {
  return ListPage(a, request, &UserRecord::fans);
}

Result<Page> Graph::PairPage(UserId a, const PageRequest& request, const PairLists& lists) const {
  RELGRAPH_RETURN_IF_ERROR(CheckPageRequest(a, request));
  const InternalId ai = ids_.Find(a);
  const InternalId viewer = FindViewer(request);
  const FanList* list = ai == kNoInternalId ? nullptr : lists.ListOf(ai);
  if (list == nullptr) return Page{};
  return BuildPage(*list, request, viewer);
}

Result<Page> Graph::Blocks(UserId a, const PageRequest& request) const {
  return PairPage(a, request, blocks_);
}

Result<Page> Graph::Requests(UserId a, const PageRequest& request) const {
  return PairPage(a, request, requests_);
}

Result<Page> Graph::Friends(UserId a, const PageRequest& request) const {
  RELGRAPH_RETURN_IF_ERROR(CheckPageRequest(a, request));
  const InternalId ai = ids_.Find(a);
  if (ai == kNoInternalId) return Page{};
  const UserRecord& ua = users_[ai];

  struct Friend {
    EntryKey key;
    InternalId id;
  };
  std::vector<Friend> candidates;
  candidates.reserve(ua.friends);
  const EntryKey after = request.after
                             ? time_.StoredKey(EntryKey{request.after->ts, request.after->user})
                             : EntryKey{kMaxTimestampMs + 1, 0};
  // When each friend followed a back: from a's own fan list when it is short beside the
  // friends (read in order, sorted by peer here: no other user's list is touched), else from
  // each friend's following list (a scan of up to 1,000 peers and a decode of up to 15 gaps,
  // in a list of its own: a cache miss or more each). Both sides keep the same time.
  std::vector<std::pair<InternalId, TimestampMs>> fan_times;
  const bool from_fans = ua.fans.size() <= kFriendTimesFromFansRatio * ua.friends;
  if (from_fans) {
    fan_times.reserve(ua.friends);
    ua.fans.ForEach([&](const EdgeEntry& f) {
      if (EntryMutual(f)) fan_times.emplace_back(f.peer, EntryTs(f));
    });
    std::sort(fan_times.begin(), fan_times.end());
  }
  const auto followed_back = [&](InternalId friend_id) {
    if (from_fans) {
      const auto it =
          std::lower_bound(fan_times.begin(), fan_times.end(),
                           std::pair{friend_id, std::numeric_limits<TimestampMs>::min()});
      if (it != fan_times.end() && it->first == friend_id) return it->second;
    }
    return FollowTimeOf(friend_id, ai);
  };
  ua.following.ForEach([&](const EdgeEntry& e) {
    if (!EntryMutual(e)) return;
    const TimestampMs since = std::max(EntryTs(e), followed_back(e.peer));
    const EntryKey key{since, ids_.External(e.peer)};
    if (key < after) candidates.push_back({key, e.peer});
  });
  const size_t skip = request.after ? 0 : std::min<size_t>(request.offset, candidates.size());
  const size_t take = std::min<size_t>(request.limit, candidates.size() - skip);
  const auto newer = [](const Friend& x, const Friend& y) { return y.key < x.key; };
  std::partial_sort(candidates.begin(), candidates.begin() + static_cast<ptrdiff_t>(skip + take),
                    candidates.end(), newer);
  const InternalId viewer = FindViewer(request);
  Page page;
  page.entries.reserve(take);
  for (size_t i = skip; i < skip + take; ++i) {
    const Friend& f = candidates[i];
    page.entries.push_back(
        {f.key.user, time_.Answered(f.key.ts), ViewerRelation(viewer, f.id), true});
  }
  if (skip + take < candidates.size() && take > 0) {
    page.next = Cursor{page.entries.back().ts, page.entries.back().user};
  }
  return page;
}

// ---- counts and known followers ---------------------------------------------------------------

Result<Counts> Graph::GetCounts(UserId a) const {
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(a, "user"));
  const InternalId ai = ids_.Find(a);
  if (ai == kNoInternalId) return Counts{};
  const UserRecord& u = users_[ai];
  Counts c{u.following.size(), u.fans.size(), u.friends};
  if ((u.access & kHasAccessBit) != 0) {
    c.blocks = blocks_.CountOwnedBy(ai);
    c.requests = requests_.CountOwnedBy(ai);
  }
  return c;
}

Result<KnownFollowers> Graph::GetKnownFollowers(UserId viewer, UserId target,
                                                uint32_t limit) const {
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(viewer, "viewer"));
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(target, "target"));
  if (limit > kMaxPageLimit) {
    return Status::InvalidArgument("limit must be in [0, " + std::to_string(kMaxPageLimit) +
                                   "], got " + std::to_string(limit));
  }
  KnownFollowers out;
  const InternalId vi = ids_.Find(viewer);
  const InternalId ti = ids_.Find(target);
  if (vi == kNoInternalId || ti == kNoInternalId) return out;
  const FollowingList& mine = users_[vi].following;
  const FanList& theirs = users_[ti].fans;

  // Matches are positions in the viewer's following list (oldest first).
  std::vector<uint32_t> matches;
  if (theirs.size() < mine.size()) {
    // Few fans: look each one up in a sorted copy of the viewer's following list.
    std::vector<std::pair<InternalId, uint32_t>> by_peer(mine.size());
    for (uint32_t i = 0; i < mine.size(); ++i) by_peer[i] = {mine.PeerAt(i), i};
    std::sort(by_peer.begin(), by_peer.end());
    theirs.ForEach([&](const EdgeEntry& fan) {
      auto it = std::lower_bound(by_peer.begin(), by_peer.end(),
                                 std::pair<InternalId, uint32_t>{InternalId{fan.peer}, 0});
      if (it != by_peer.end() && it->first == fan.peer) matches.push_back(it->second);
    });
    std::sort(matches.begin(), matches.end());
  } else {
    // Many fans (a celebrity): ask each followee whether it follows the target.
    for (uint32_t i = 0; i < mine.size(); ++i) {
      const FollowingList& f = users_[mine.PeerAt(i)].following;
      if (f.FindPeer(ti) < f.size()) matches.push_back(i);
    }
  }
  out.total = static_cast<uint32_t>(matches.size());
  for (auto it = matches.rbegin(); it != matches.rend() && out.users.size() < limit; ++it) {
    out.users.push_back(ids_.External(mine.PeerAt(*it)));
  }
  return out;
}

void Graph::PrefetchFans(InternalId a, int stage) const {
  if (stage == 0)
    __builtin_prefetch(&users_[a]);
  else
    users_[a].fans.PrefetchHead();
}

uint32_t Graph::FansBefore(InternalId a, const std::optional<EntryKey>& before, uint32_t limit,
                           EdgeEntry* out) const {
  const FanList& fans = users_[a].fans;
  const size_t end = before ? fans.Rank(*before, order()) : fans.size();
  return fans.CopyDescending(end, limit, out);
}

bool Graph::AnyFan(InternalId a, const std::function<bool(InternalId)>& pred) const {
  // The answer is often among the newest few: a short first read, longer ones after.
  EdgeEntry buf[256];
  std::optional<EntryKey> before;
  for (uint32_t limit = 8, n; (n = FansBefore(a, before, limit, buf)) > 0; limit = 256) {
    for (uint32_t k = 0; k < n; ++k) {
      if (pred(buf[k].peer)) return true;
    }
    before = KeyOf(buf[n - 1]);
  }
  return false;
}

}  // namespace relgraph
