// Graph mutations: follow, unfollow, remove_user, and the bookkeeping that keeps both copies of
// an edge, their kMutual bits and the three counters exact. Queries live in graph_lists.cpp.
//
// Invariants (checked by tests/engine/graph/graph_differential_test.cpp after every batch):
//   * a -> b is in a's following list iff (a, ts) is in b's fan list, with the same ts;
//   * both copies of a -> b carry kMutual iff b -> a exists;
//   * friends(a) = number of mutual entries in a's following list; edge_count = sum of lists.
#include "engine/graph/graph.h"

#include <algorithm>
#include <string>

#include <xxhash.h>

#include "engine/graph/clock.h"
#include "engine/graph/write_ahead.h"
#include "engine/graph/graph_image.h"

namespace relgraph {

Status Graph::CheckUserId(UserId u, const char* role) {
  if (u == 0)
    return Status(Code::kInvalidUserId, std::string(role) + " id 0 is invalid (ids start at 1)");
  return Status::OK();
}

Status CheckTimestamp(TimestampMs ts, const char* what) {
  if (ts >= 0 && ts <= kMaxTimestampMs) return Status::OK();
  return Status::InvalidArgument(std::string(what) + " " + std::to_string(ts) + " is outside [0, " +
                                 std::to_string(kMaxTimestampMs) + "] ms");
}

Status ValidateGraphOptions(const GraphOptions& o) {
  if (o.max_following < 1 || o.max_following > kMaxFollowingLimit) {
    return Status::InvalidArgument("max_following must be in [1, " +
                                   std::to_string(kMaxFollowingLimit) + "], got " +
                                   std::to_string(o.max_following));
  }
  if (o.rate_limit.enabled) {
    if (!(o.rate_limit.capacity >= 1 && o.rate_limit.capacity <= 1e9)) {
      return Status::InvalidArgument("rate limit capacity must be in [1, 1e9] tokens");
    }
    if (!(o.rate_limit.refill_per_second >= 0.001 && o.rate_limit.refill_per_second <= 1e6)) {
      return Status::InvalidArgument("rate limit refill must be in [0.001, 1e6] tokens per second");
    }
  }
  if (o.fan_chunk_entries < 4 || o.fan_chunk_entries > 1024) {
    return Status::InvalidArgument("fan_chunk_entries must be in [4, 1024]");
  }
  if (o.time_resolution_ms != 1 && o.time_resolution_ms != 1000) {
    return Status::InvalidArgument("time_resolution_ms must be 1 or 1000, got " +
                                   std::to_string(o.time_resolution_ms));
  }
  if (o.id_growth_step == 1 || o.id_growth_step > (1u << 20)) {
    return Status::InvalidArgument("id_growth_step must be 0 or in [2, 1048576], got " +
                                   std::to_string(o.id_growth_step));
  }
  if (o.max_users < 1 || o.max_users > kMaxUsersLimit) {
    return Status::InvalidArgument("max_users must be in [1, " + std::to_string(kMaxUsersLimit) +
                                   "], got " + std::to_string(o.max_users));
  }
  return Status::OK();
}

Graph::Graph(const GraphOptions& options)
    : options_(options),
      time_(options.time_resolution_ms),
      clock_(options.clock != nullptr ? options.clock : SystemClock::Default()),
      limiter_(options.rate_limit) {
  if (options.id_growth_step != 0) ids_.set_growth_step(options.id_growth_step);
}

Graph::~Graph() {
  blocks_.Clear(slab_);
  requests_.Clear(slab_);
  for (size_t i = 0; i < users_.size(); ++i) {
    users_[i].following.Clear(slab_);
    users_[i].fans.Clear(slab_);
  }
}

void Graph::Reserve(size_t users) {
  ids_.Reserve(users);
}

void Graph::PrefaultEdges(uint64_t edges) {
  // Both copies of every edge at 7 bytes each: below what packed lists take (8-10 B a copy
  // at 1 ms, ~8 at 1 s), because the whole mapping is resident until EndPrefault gives the
  // unused part back: an estimate above the need raised a 500M-edge restart's peak RSS by
  // 1 GiB over its steady state. What it leaves out is faulted in as the load goes.
  slab_.BeginPrefault(static_cast<size_t>(static_cast<double>(edges) * 2 * 7));
}

void Graph::EndPrefaultEdges() {
  slab_.EndPrefault();
}

Status Graph::CheckRoomFor(UserId a, UserId b) const {
  // Room for every named user to be new is room enough: no lookups on the common path (a
  // replayed or replicated follow calls this for each record).
  if (ids_.size() + (a != 0) + (b != 0) <= options_.max_users) [[likely]]
    return Status::OK();
  const bool a_new = a != 0 && ids_.Find(a) == kNoInternalId;
  const bool b_new = b != 0 && b != a && ids_.Find(b) == kNoInternalId;
  return CheckRoom(a_new ? a : 0, b_new ? b : 0);
}

Status Graph::CheckRoom(UserId first_new, UserId second_new) const {
  const size_t fresh = (first_new != 0) + (second_new != 0);
  if (ids_.size() + fresh <= options_.max_users) [[likely]]
    return Status::OK();
  return Status(
      Code::kResourceExhausted,
      "the graph holds " + std::to_string(ids_.size()) + " users, the most it may (max_users " +
          std::to_string(options_.max_users) +
          (options_.max_users == kMaxUsersLimit ? ", what 4-byte internal ids allow" : "") +
          "): user " + std::to_string(first_new != 0 ? first_new : second_new) +
          " would be a new one");
}

InternalId Graph::Intern(UserId user) {
  return ids_.Intern(user);
}

// ---- follow -----------------------------------------------------------------------------------

Result<FollowOutcome> Graph::Follow(UserId a, UserId b, const InternalId* known) {
  return FollowImpl(a, b, 0, /*engine_time=*/true, /*rate_limited=*/true, known);
}

Result<FollowOutcome> Graph::FollowAt(UserId a, UserId b, TimestampMs ts, const InternalId* known) {
  return FollowImpl(a, b, ts, /*engine_time=*/false, /*rate_limited=*/true, known);
}

Result<ImportStats> Graph::Import(std::span<const ImportEdge> edges) {
  ImportStats stats;
  WriteAhead ahead(*this);
  for (size_t i = 0; i < edges.size(); ++i) {
    ahead.Advance(i, edges.size(), [&](size_t j) {
      return std::pair{edges[j].follower, edges[j].followee};
    });
    const ImportEdge& e = edges[i];
    if (e.follower == e.followee && e.follower != 0) {
      ++stats.self_loops;
      continue;
    }
    auto r = FollowImpl(e.follower, e.followee, e.ts, /*engine_time=*/false,
                        /*rate_limited=*/false, ahead.Known(i));
    if (r.ok()) {
      (r->created ? stats.added : stats.duplicates)++;
    } else if (r.status().code() == Code::kFollowLimit) {
      ++stats.over_cap;
    } else if (r.status().code() == Code::kBlocked) {
      ++stats.blocked;
    } else {
      return Status(r.status().code(),
                    "import edge " + std::to_string(i) + ": " + r.status().message(),
                    static_cast<int64_t>(i));
    }
  }
  return stats;
}

void Graph::PrefetchLists(const InternalId ids[2]) const {
  if (ids[0] != kNoInternalId) users_[ids[0]].following.PrefetchForInsert();
  if (ids[1] != kNoInternalId) {
    __builtin_prefetch(users_[ids[1]].following.peers_address());
    users_[ids[1]].fans.PrefetchHead();
  }
}

void Graph::PrefetchNewestTimes(const InternalId ids[2]) const {
  if (ids[0] != kNoInternalId) users_[ids[0]].following.PrefetchNewestTime();
}

void Graph::PrefetchNewestGaps(const InternalId ids[2]) const {
  if (ids[0] != kNoInternalId) users_[ids[0]].following.PrefetchNewestGaps();
}

Result<FollowOutcome> Graph::FollowImpl(UserId a, UserId b, TimestampMs ts, bool engine_time,
                                        bool rate_limited, const InternalId* known) {
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(a, "user"));
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(b, "user"));
  if (a == b)
    return Status(Code::kSelfFollow, "user " + std::to_string(a) + " cannot follow itself");
  if (!engine_time) {
    RELGRAPH_RETURN_IF_ERROR(CheckTimestamp(ts, "timestamp"));
    ts = time_.Stored(ts);  // from here on as the lists keep it; answers convert back
  }

  // Look up without interning: a refused call must not create users.
  InternalId ai = known != nullptr && known[0] != kNoInternalId ? known[0] : ids_.Find(a);
  InternalId bi = known != nullptr && known[1] != kNoInternalId ? known[1] : ids_.Find(b);
  RELGRAPH_RETURN_IF_ERROR(SettleIds(ai, bi, /*client=*/true));
  // A follow of a private account asks instead; an import (not rate limited) loads follows
  // that exist elsewhere, so it links directly. Blocks hold for both.
  const bool request = rate_limited && bi != kNoInternalId && IsPrivateInternal(bi);
  if (ai != kNoInternalId) {
    const FollowingList& following = users_[ai].following;
    const bool access = (users_[ai].access & kHasAccessBit) != 0;
    if (bi != kNoInternalId) {
      const size_t i = following.FindPeer(bi);
      if (i < following.size()) {
        return FollowOutcome{false, EdgeRelation(ai, bi, following.MutualAt(i)),
                             time_.Answered(following.TsAt(i))};
      }
      if (access && (blocks_.Contains(ai, bi) || blocks_.Contains(bi, ai))) {
        // The same words whichever side blocks (docs/access.md).
        return Status(Code::kBlocked, "user " + std::to_string(a) + " may not follow user " +
                                          std::to_string(b) + ": a block stands between them");
      }
      if (access && request) {
        if (const auto asked = requests_.Find(bi, ai)) {
          return FollowOutcome{false, RelationOf(ai, bi), time_.Answered(*asked)};
        }
      }
    }
    const uint32_t pending = PendingSent(ai);
    if (following.size() + pending >= options_.max_following) {
      std::string m = "user " + std::to_string(a) + " already follows " +
                      std::to_string(following.size()) + " users";
      if (pending > 0) m += " and has " + std::to_string(pending) + " follow requests pending";
      return Status(Code::kFollowLimit, m + " (the maximum)");
    }
  }
  const bool limit = rate_limited && limiter_.enabled();
  TimestampMs now = 0;
  if (engine_time || limit) {
    now = std::clamp<TimestampMs>(clock_->NowMs(), 0, kMaxTimestampMs);
    now = std::max(now, last_engine_ts_);  // the engine's time never goes backwards
  }
  if (ai == kNoInternalId || bi == kNoInternalId) [[unlikely]] {
    RELGRAPH_RETURN_IF_ERROR(CheckRoom(ai == kNoInternalId ? a : 0, bi == kNoInternalId ? b : 0));
  }
  if (const int64_t wait = limit ? limiter_.TryAcquire(a, now) : 0; wait > 0) {
    return Status(Code::kRateLimited,
                  "user " + std::to_string(a) + " is following too fast; retry in " +
                      std::to_string(wait) + " ms",
                  wait);
  }
  if (engine_time) {
    ts = time_.Stored(now);
    last_engine_ts_ = now;
  }
  if (ai == kNoInternalId) ai = Intern(a);
  if (bi == kNoInternalId) bi = Intern(b);
  if (request) {
    AddPair(requests_, bi, ai, ts);
    return FollowOutcome{true, RelationOf(ai, bi), time_.Answered(ts)};
  }
  const bool mutual = Link(ai, bi, ts, a, b);
  // An import's edge answers a pending request of the same pair.
  if ((users_[ai].access & kHasAccessBit) != 0) RemovePair(requests_, bi, ai);
  return FollowOutcome{true, EdgeRelation(ai, bi, mutual), time_.Answered(ts)};
}

TimestampMs Graph::TakeEngineTime() {
  TimestampMs now = std::clamp<TimestampMs>(clock_->NowMs(), 0, kMaxTimestampMs);
  now = std::max(now, last_engine_ts_);
  last_engine_ts_ = now;
  return time_.Stored(now);
}

bool Graph::Link(InternalId a, InternalId b, TimestampMs ts, UserId a_external, UserId b_external) {
  BeforeChange(a);
  BeforeChange(b);
  UserRecord& ua = users_[a];
  UserRecord& ub = users_[b];
  const size_t back = ub.following.FindPeer(a);
  const bool mutual = back < ub.following.size();
  const FanContext ctx = fan_context(order().WithKnown(a, a_external, b, b_external));
  ua.following.Insert(MakeEntry(b, ts, mutual), ctx.order, slab_);
  ChangeFans(ub.fans, [&] { ub.fans.Insert(MakeEntry(a, ts, mutual), ctx); });
  if (mutual) {
    ub.following.SetMutual(back, true);
    ua.fans.SetMutual({ub.following.TsAt(back), b_external}, true, ctx.order);
    ++ua.friends;
    ++ub.friends;
  }
  ++edge_count_;
  return mutual;
}

// ---- unfollow and remove_user -----------------------------------------------------------------

Result<bool> Graph::Unfollow(UserId a, UserId b) {
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(a, "user"));
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(b, "user"));
  const InternalId ai = ids_.Find(a);
  const InternalId bi = ids_.Find(b);
  if (ai == kNoInternalId || bi == kNoInternalId) return false;
  RELGRAPH_RETURN_IF_ERROR(SettleIds(ai, bi, /*client=*/true));
  const size_t i = users_[ai].following.FindPeer(bi);
  if (i == users_[ai].following.size()) return false;
  Unlink(ai, i);
  return true;
}

void Graph::Unlink(InternalId a, size_t following_index) {
  UserRecord& ua = users_[a];
  const EdgeEntry e = ua.following.EntryAt(following_index);
  const InternalId b = e.peer;
  BeforeChange(a);
  BeforeChange(b);
  UserRecord& ub = users_[b];
  const FanContext ctx = fan_context();
  ua.following.EraseAt(following_index, slab_);
  ChangeFans(ub.fans, [&] { ub.fans.Erase({EntryTs(e), ids_.External(a)}, ctx); });
  if (EntryMutual(e)) {
    const size_t back = ub.following.FindPeer(a);
    ub.following.SetMutual(back, false);
    ua.fans.SetMutual({ub.following.TsAt(back), ids_.External(b)}, false, ctx.order);
    --ua.friends;
    --ub.friends;
  }
  --edge_count_;
}

Result<uint64_t> Graph::RemoveUser(UserId a) {
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(a, "user"));
  const InternalId ai = ids_.Find(a);
  limiter_.Forget(a);
  if (ai == kNoInternalId) return uint64_t{0};
  // An unfinished operation of `a` ends first; one of another user goes on.
  SettleFor(ai);
  uint64_t removed = 0;
  // Out-edges first, through the ordinary path: it clears every kMutual bit, so the in-edges
  // left afterwards are all one-way.
  while (!users_[ai].following.empty()) {
    Unlink(ai, users_[ai].following.size() - 1);
    ++removed;
  }
  BeforeChange(ai);
  UserRecord& ua = users_[ai];
  ua.fans.ForEach([&](const EdgeEntry& fan_entry) {
    BeforeChange(fan_entry.peer);
    FollowingList& theirs = users_[fan_entry.peer].following;
    theirs.EraseAt(theirs.FindPeer(ai), slab_);
    ++removed;
  });
  edge_count_ -= ua.fans.size();
  ChangeFans(ua.fans, [&] { ua.fans.Clear(slab_); });
  ForgetAccess(ai);
  return removed;
}

// ---- replay -----------------------------------------------------------------------------------

Status Graph::ApplyFollow(UserId a, UserId b, TimestampMs ts, ReplayMode mode) {
  InternalId ids[2] = {kNoInternalId, kNoInternalId};
  return ReplayFollow(a, b, ts, mode, ids);
}

Status Graph::ReplayFollow(UserId a, UserId b, TimestampMs ts, ReplayMode mode, InternalId ids[2]) {
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(a, "user"));
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(b, "user"));
  if (a == b)
    return Status(Code::kSelfFollow, "replayed follow of user " + std::to_string(a) + " by itself");
  if (ts < 0 || ts > kMaxTimestampMs)
    return Status::InvalidArgument("replayed timestamp out of range");
  RELGRAPH_RETURN_IF_ERROR(CheckReplayedUnit(ts, "follow"));
  ts = time_.Stored(ts);
  RELGRAPH_RETURN_IF_ERROR(CheckRoomFor(a, b));
  const InternalId ai = ids[0] != kNoInternalId ? ids[0] : Intern(a);
  const InternalId bi = ids[1] != kNoInternalId ? ids[1] : Intern(b);
  SettleIds(ai, bi, /*client=*/false).IgnoreError();  // refuses only a client's call
  ids[0] = ai;
  ids[1] = bi;
  FollowingList& following = users_[ai].following;
  const size_t i = mode == ReplayMode::kExact ? following.size() : following.FindPeer(bi);
  if (i < following.size()) {
    if (mode == ReplayMode::kChecked) {
      return Status(Code::kAlreadyExists, "follow of " + std::to_string(a) + " -> " +
                                              std::to_string(b) + ", an edge this graph holds");
    }
    if (following.TsAt(i) == ts) return Status::OK();
    Unlink(ai, i);  // same edge, another time: replace it
  }
  Link(ai, bi, ts, a, b);
  return Status::OK();
}

Status Graph::CheckReplayedUnit(TimestampMs ts, const char* what) const {
  if (ts % time_.unit_ms() == 0) return Status::OK();
  return Status(Code::kUnsupported,
                std::string("a replayed ") + what + " at " + std::to_string(ts) +
                    " ms, a time this node (--follow-time-resolution=" +
                    TimeResolutionName(time_.unit_ms()) +
                    ") never logs: the record was written at another resolution");
}

Status Graph::ApplyUnfollow(UserId a, UserId b, ReplayMode mode) {
  InternalId ids[2] = {kNoInternalId, kNoInternalId};
  return ReplayUnfollow(a, b, mode, ids);
}

Status Graph::ReplayUnfollow(UserId a, UserId b, ReplayMode mode, InternalId ids[2]) {
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(a, "user"));
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(b, "user"));
  if (ids[0] == kNoInternalId) ids[0] = ids_.Find(a);
  if (ids[1] == kNoInternalId) ids[1] = ids_.Find(b);
  SettleIds(ids[0], ids[1], /*client=*/false).IgnoreError();  // refuses only a client's call
  const bool known = ids[0] != kNoInternalId && ids[1] != kNoInternalId;
  const size_t i = known ? users_[ids[0]].following.FindPeer(ids[1]) : 0;
  if (!known || i == users_[ids[0]].following.size()) {
    if (mode != ReplayMode::kChecked) return Status::OK();
    return Status(Code::kNotFound, "unfollow of " + std::to_string(a) + " -> " + std::to_string(b) +
                                       ", an edge this graph lacks");
  }
  Unlink(ids[0], i);
  return Status::OK();
}

Status Graph::ApplyBatch(std::span<const ReplayOp> ops, ReplayMode mode,
                         const AppliedEdgeHook& on_applied) {
  WriteAhead ahead(*this);
  for (size_t i = 0; i < ops.size(); ++i) {
    ahead.Advance(i, ops.size(), [&](size_t j) { return std::pair{ops[j].a, ops[j].b}; });
    const ReplayOp& op = ops[i];
    const InternalId* known = ahead.Known(i);  // ids looked up ahead, skipping the lookups
    InternalId ids[2] = {known[0], known[1]};
    const ReplayMode m = op.remote ? ReplayMode::kEnsure : mode;
    Status s = op.kind == ReplayOp::kFollow ? (op.remote ? CrossingFollow(op.a, op.b, op.ts, ids)
                                                         : ReplayFollow(op.a, op.b, op.ts, m, ids))
               : op.kind == ReplayOp::kUnfollow ? ReplayUnfollow(op.a, op.b, m, ids)
                                                : ApplyRemoveUser(op.a);
    if (!s.ok()) return Status(s.code(), s.message(), static_cast<int64_t>(i));
    if (on_applied && op.kind != ReplayOp::kRemoveUser && ids[0] != kNoInternalId &&
        ids[1] != kNoInternalId) {
      on_applied(op, ids[0], ids[1]);
    }
  }
  return Status::OK();
}

Status Graph::ApplyRemoveUser(UserId a) {
  return RemoveUser(a).status();
}

// ---- whole-graph access -----------------------------------------------------------------------

uint64_t Graph::Digest() const {
  uint64_t sum = 0;
  ForEachEdge([&](UserId a, UserId b, TimestampMs ts) {
    const uint64_t edge[3] = {a, b, static_cast<uint64_t>(ts)};
    sum += XXH3_64bits(edge, sizeof edge);
  });
  return sum + AccessDigest();
}

void Graph::ForEachEdge(const std::function<void(UserId, UserId, TimestampMs)>& fn) const {
  for (InternalId a = 0; a < users_.size(); ++a) {
    const FollowingList& f = users_[a].following;
    f.ForEach([&](const EdgeEntry& e) {
      fn(ids_.External(a), ids_.External(e.peer), time_.Answered(EntryTs(e)));
    });
  }
}

MemoryUsage Graph::Memory() const {
  MemoryUsage m;
  m.id_map = ids_.MemoryBytes();
  m.user_records = users_.MemoryBytes();
  m.edge_blocks = slab_.MemoryBytes();
  m.edge_blocks_live = slab_.LiveBytes();
  m.fan_index = fan_index_bytes_;  // kept as lists change; CheckInvariants recounts it
  m.rate_limiter = limiter_.MemoryBytes();
  m.access = blocks_.MemoryBytes() + requests_.MemoryBytes();
  return m;
}

}  // namespace relgraph
