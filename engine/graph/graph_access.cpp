// Graph: blocks, private accounts and follow requests (docs/access.md). Pages of blocks and
// requests live in graph_lists.cpp beside the other lists.
//
// Invariants (checked by CheckAccessInvariants, run by CheckInvariants):
//   * no edge and no request joins two users one of whom blocks the other;
//   * a request r -> t exists only while t is private (or t's switch to public, or its
//     removal, is running in steps: graph_steps.cpp) and r does not follow t;
//   * a user's kHasAccessBit is set iff it is in a block or a request, on either side.
#include <algorithm>
#include <string>

#include <xxhash.h>

#include "engine/graph/graph.h"

namespace relgraph {

namespace {

std::string Pair(UserId a, UserId b) {
  return std::to_string(a) + " -> " + std::to_string(b);
}

}  // namespace

void Graph::MarkPrivate(InternalId a, bool on) {
  UserRecord& u = users_[a];
  u.access = on ? (u.access | kPrivateBit) : (u.access & ~kPrivateBit);
  if (on) {
    private_users_.insert(a);
  } else {
    private_users_.erase(a);
  }
}

Relation Graph::AccessRelation(InternalId a, InternalId b) const {
  Relation r = Relation::kNone;
  if (blocks_.Contains(a, b)) r = r | Relation::kBlocking;
  if (!options_.hide_blocked_by && blocks_.Contains(b, a)) r = r | Relation::kBlockedBy;
  if (r != Relation::kNone) return r;  // a block leaves no request
  if (requests_.Contains(b, a)) r = r | Relation::kRequested;
  if (requests_.Contains(a, b)) r = r | Relation::kRequestedBy;
  return r;
}

bool Graph::InAnyPair(InternalId a) const {
  return blocks_.CountOwnedBy(a) + blocks_.CountNaming(a) + requests_.CountOwnedBy(a) +
             requests_.CountNaming(a) >
         0;
}

void Graph::RefreshAccessBit(InternalId a) {
  UserRecord& u = users_[a];
  u.access = InAnyPair(a) ? (u.access | kHasAccessBit) : (u.access & ~kHasAccessBit);
}

void Graph::AddPair(PairLists& lists, InternalId owner, InternalId peer, TimestampMs ts) {
  lists.Add(owner, peer, ts, fan_context());
  users_[owner].access |= kHasAccessBit;
  users_[peer].access |= kHasAccessBit;
}

void Graph::EnsurePair(PairLists& lists, InternalId owner, InternalId peer, TimestampMs ts) {
  if (const auto since = lists.Find(owner, peer)) {
    if (*since == ts) return;
    lists.Remove(owner, peer, fan_context());
  }
  AddPair(lists, owner, peer, ts);
}

bool Graph::RemovePair(PairLists& lists, InternalId owner, InternalId peer) {
  if (!lists.Remove(owner, peer, fan_context())) return false;
  RefreshAccessBit(owner);
  RefreshAccessBit(peer);
  return true;
}

// ---- blocks ---------------------------------------------------------------------------------

void Graph::SeverPair(InternalId a, InternalId b, BlockOutcome* outcome, const EdgeHook& on_edge) {
  if (const size_t i = users_[a].following.FindPeer(b); i < users_[a].following.size()) {
    Unlink(a, i);
    outcome->unfollowed = true;
    if (on_edge) on_edge(a, b, false);
  }
  if (const size_t i = users_[b].following.FindPeer(a); i < users_[b].following.size()) {
    Unlink(b, i);
    outcome->lost_follower = true;
    if (on_edge) on_edge(b, a, false);
  }
  const bool asked = RemovePair(requests_, b, a);
  const bool was_asked = RemovePair(requests_, a, b);
  outcome->requests_removed = asked || was_asked;
}

Result<BlockOutcome> Graph::Block(UserId a, UserId b, const EdgeHook& on_edge) {
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(a, "user"));
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(b, "blocked user"));
  if (a == b) return Status::InvalidArgument("user " + std::to_string(a) + " cannot block itself");
  InternalId ai = ids_.Find(a);
  InternalId bi = ids_.Find(b);
  RELGRAPH_RETURN_IF_ERROR(SettleIds(ai, bi, /*client=*/true));
  if (ai != kNoInternalId) {
    if (bi != kNoInternalId) {
      if (const auto since = blocks_.Find(ai, bi)) {
        return BlockOutcome{false, time_.Answered(*since)};
      }
    }
    if (const uint32_t n = blocks_.CountOwnedBy(ai); n >= options_.max_blocks) {
      return Status(Code::kLimitExceeded, "user " + std::to_string(a) + " already blocks " +
                                              std::to_string(n) + " users (the maximum)");
    }
  }
  RELGRAPH_RETURN_IF_ERROR(CheckRoom(ai == kNoInternalId ? a : 0, bi == kNoInternalId ? b : 0));
  const TimestampMs at = TakeEngineTime();
  BlockOutcome out{true, time_.Answered(at)};
  if (ai == kNoInternalId) ai = Intern(a);
  if (bi == kNoInternalId) bi = Intern(b);
  SeverPair(ai, bi, &out, on_edge);
  AddPair(blocks_, ai, bi, at);
  return out;
}

Result<bool> Graph::Unblock(UserId a, UserId b) {
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(a, "user"));
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(b, "blocked user"));
  const InternalId ai = ids_.Find(a);
  const InternalId bi = ids_.Find(b);
  if (ai == kNoInternalId || bi == kNoInternalId) return false;
  return RemovePair(blocks_, ai, bi);
}

// ---- private accounts and requests ------------------------------------------------------------

Result<SetPrivateOutcome> Graph::SetPrivate(UserId a, bool on, const EdgeHook& on_edge) {
  auto out = SetPrivateInSteps(a, on, on_edge);
  if (!out.ok() || on || !out->changed) return out;
  const InternalId ai = ids_.Find(a);
  while (unfinished_ && !unfinished_->removal && unfinished_->user == ai) {
    out->approved += RunSteps(1u << 20).approved;
  }
  return out;
}

Result<bool> Graph::IsPrivate(UserId a) const {
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(a, "user"));
  const InternalId ai = ids_.Find(a);
  return ai != kNoInternalId && IsPrivateInternal(ai);
}

FollowOutcome Graph::ApproveImpl(InternalId target, InternalId requester, TimestampMs ts,
                                 const EdgeHook& on_edge) {
  RemovePair(requests_, target, requester);
  const UserId r_external = ids_.External(requester), t_external = ids_.External(target);
  if (const size_t i = users_[requester].following.FindPeer(target);
      i < users_[requester].following.size()) {
    Unlink(requester, i);  // only in a replay over a later state: the edge takes the new time
    if (on_edge) on_edge(requester, target, false);
  }
  const bool mutual = Link(requester, target, ts, r_external, t_external);
  if (on_edge) on_edge(requester, target, true);
  return FollowOutcome{true, EdgeRelation(requester, target, mutual), time_.Answered(ts)};
}

uint64_t Graph::ApproveAll(InternalId target, TimestampMs ts, const EdgeHook& on_edge) {
  const std::vector<InternalId> requesters = requests_.PeersOf(target);
  for (InternalId r : requesters) ApproveImpl(target, r, ts, on_edge);
  return requesters.size();
}

Result<FollowOutcome> Graph::Approve(UserId target, UserId requester, const EdgeHook& on_edge) {
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(target, "user"));
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(requester, "requester"));
  const InternalId ti = ids_.Find(target);
  const InternalId ri = ids_.Find(requester);
  RELGRAPH_RETURN_IF_ERROR(SettleIds(ti, ri, /*client=*/true));
  if (ti == kNoInternalId || ri == kNoInternalId || !requests_.Contains(ti, ri)) {
    return Status::NotFound("user " + std::to_string(requester) +
                            " has no pending follow request to user " + std::to_string(target));
  }
  return ApproveImpl(ti, ri, TakeEngineTime(), on_edge);
}

Result<bool> Graph::Reject(UserId target, UserId requester) {
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(target, "user"));
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(requester, "requester"));
  const InternalId ti = ids_.Find(target);
  const InternalId ri = ids_.Find(requester);
  if (ti == kNoInternalId || ri == kNoInternalId) return false;
  // A pending approval is made first; a request held by a user being removed may go now,
  // as its removal would take it.
  if (unfinished_ && !unfinished_->removal) SettleSlow(ti, ri, /*client=*/false).IgnoreError();
  return RemovePair(requests_, ti, ri);
}

Result<bool> Graph::Withdraw(UserId requester, UserId target) {
  return Reject(target, requester);
}

void Graph::ForgetAccess(InternalId a) {
  for (PairLists* lists : {&blocks_, &requests_}) {
    for (InternalId peer : lists->PeersOf(a)) RemovePair(*lists, a, peer);
    for (InternalId owner : lists->OwnersNaming(a)) RemovePair(*lists, owner, a);
  }
  MarkPrivate(a, false);
  users_[a].access = 0;
}

// ---- replay -----------------------------------------------------------------------------------

Status CheckReplayPair(UserId a, UserId b, TimestampMs ts, const char* what) {
  if (a == 0 || b == 0 || a == b) {
    return Status(Code::kInvalidUserId, std::string("replayed ") + what + " of " + Pair(a, b));
  }
  if (ts < 0 || ts > kMaxTimestampMs) {
    return Status::InvalidArgument(std::string("replayed ") + what + " time out of range");
  }
  return Status::OK();
}

Status Graph::ApplyBlock(UserId a, UserId b, TimestampMs ts, const EdgeHook& on_edge) {
  RELGRAPH_RETURN_IF_ERROR(CheckReplayPair(a, b, ts, "block"));
  RELGRAPH_RETURN_IF_ERROR(CheckReplayedUnit(ts, "block"));
  RELGRAPH_RETURN_IF_ERROR(CheckRoomFor(a, b));
  const InternalId ai = Intern(a);
  const InternalId bi = Intern(b);
  SettleIds(ai, bi, /*client=*/false).IgnoreError();
  BlockOutcome ignored;
  SeverPair(ai, bi, &ignored, on_edge);
  EnsurePair(blocks_, ai, bi, time_.Stored(ts));
  return Status::OK();
}

Status Graph::ApplyUnblock(UserId a, UserId b) {
  RELGRAPH_RETURN_IF_ERROR(CheckReplayPair(a, b, 0, "unblock"));
  return Unblock(a, b).status();
}

Status Graph::ApplySetPrivate(UserId a, bool on, TimestampMs ts, const EdgeHook& on_edge) {
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(a, "replayed user"));
  RELGRAPH_RETURN_IF_ERROR(CheckTimestamp(ts, "replayed time"));
  RELGRAPH_RETURN_IF_ERROR(CheckReplayedUnit(ts, "private mark"));
  RELGRAPH_RETURN_IF_ERROR(CheckRoomFor(a));
  const InternalId ai = Intern(a);
  SettleFor(ai);
  if (on) {
    MarkPrivate(ai, true);
  } else {
    MarkPrivate(ai, false);
    ApproveAll(ai, time_.Stored(ts), on_edge);
  }
  return Status::OK();
}

Status Graph::ApplyRequest(UserId requester, UserId target, TimestampMs ts) {
  RELGRAPH_RETURN_IF_ERROR(CheckReplayPair(requester, target, ts, "follow request"));
  RELGRAPH_RETURN_IF_ERROR(CheckReplayedUnit(ts, "follow request"));
  RELGRAPH_RETURN_IF_ERROR(CheckRoomFor(requester, target));
  const InternalId ri = Intern(requester);
  const InternalId ti = Intern(target);
  SettleIds(ti, ri, /*client=*/false).IgnoreError();
  EnsurePair(requests_, ti, ri, time_.Stored(ts));
  return Status::OK();
}

Status Graph::ApplyApprove(UserId target, UserId requester, TimestampMs ts,
                           const EdgeHook& on_edge) {
  RELGRAPH_RETURN_IF_ERROR(CheckReplayPair(requester, target, ts, "approval"));
  RELGRAPH_RETURN_IF_ERROR(CheckReplayedUnit(ts, "approval"));
  RELGRAPH_RETURN_IF_ERROR(CheckRoomFor(requester, target));
  const InternalId ti = Intern(target);
  const InternalId ri = Intern(requester);
  SettleIds(ti, ri, /*client=*/false).IgnoreError();
  ts = time_.Stored(ts);
  const FollowingList& f = users_[ri].following;
  if (const size_t i = f.FindPeer(ti); i < f.size() && f.TsAt(i) == ts) {
    RemovePair(requests_, ti, ri);  // already applied
    return Status::OK();
  }
  ApproveImpl(ti, ri, ts, on_edge);
  return Status::OK();
}

Status Graph::ApplyRemoveRequest(UserId target, UserId requester) {
  RELGRAPH_RETURN_IF_ERROR(CheckReplayPair(requester, target, 0, "request removal"));
  return Reject(target, requester).status();
}

// ---- another cluster shard's changes -----------------------------------------------------------

bool Graph::BlockStands(UserId a, UserId b) const {
  const InternalId ai = ids_.Find(a), bi = ids_.Find(b);
  if (ai == kNoInternalId || bi == kNoInternalId || (users_[ai].access & kHasAccessBit) == 0) {
    return false;
  }
  return blocks_.Contains(ai, bi) || blocks_.Contains(bi, ai);
}

bool Graph::HasRequest(UserId requester, UserId target) const {
  const InternalId ri = ids_.Find(requester), ti = ids_.Find(target);
  if (ri == kNoInternalId || ti == kNoInternalId || (users_[ti].access & kHasAccessBit) == 0) {
    return false;
  }
  return requests_.Contains(ti, ri);
}

bool Graph::HasEdge(UserId a, UserId b) const {
  const InternalId ai = ids_.Find(a), bi = ids_.Find(b);
  return ai != kNoInternalId && bi != kNoInternalId && FollowsInternal(ai, bi);
}

std::vector<UserId> Graph::RequestersOf(UserId target) const {
  const InternalId ti = ids_.Find(target);
  return ti == kNoInternalId ? std::vector<UserId>{} : ExternalsOf(requests_.PeersOf(ti));
}

std::vector<UserId> Graph::BlockersOf(UserId blocked) const {
  const InternalId bi = ids_.Find(blocked);
  return bi == kNoInternalId ? std::vector<UserId>{} : ExternalsOf(blocks_.OwnersNaming(bi));
}

std::vector<Graph::AccessItem> Graph::RequestsSentBy(UserId requester) const {
  std::vector<AccessItem> out;
  const InternalId ri = ids_.Find(requester);
  if (ri == kNoInternalId || (users_[ri].access & kHasAccessBit) == 0) return out;
  for (InternalId t : requests_.OwnersNaming(ri)) {
    out.push_back({ids_.External(t), requester, time_.Answered(requests_.Find(t, ri).value_or(0))});
  }
  return out;
}

std::vector<UserId> Graph::ExternalsOf(const std::vector<InternalId>& users) const {
  std::vector<UserId> out;
  out.reserve(users.size());
  for (InternalId u : users) out.push_back(ids_.External(u));
  return out;
}

Status Graph::CrossingFollow(UserId a, UserId b, TimestampMs ts, InternalId ids[2]) {
  Settle(a, b);
  if (BlockStands(a, b)) {
    RELGRAPH_RETURN_IF_ERROR(CheckReplayPair(a, b, ts, "follow"));
    ids[0] = ids[1] = kNoInternalId;  // nothing changed: no feed hook
    return Status::OK();
  }
  RELGRAPH_RETURN_IF_ERROR(ReplayFollow(a, b, ts, ReplayMode::kEnsure, ids));
  if ((users_[ids[1]].access & kHasAccessBit) != 0) RemovePair(requests_, ids[1], ids[0]);
  return Status::OK();
}

// ---- whole-state access -----------------------------------------------------------------------

void Graph::ForEachBlock(const std::function<void(UserId, UserId, TimestampMs)>& fn) const {
  blocks_.ForEach([&](InternalId a, InternalId b, TimestampMs ts) {
    fn(ids_.External(a), ids_.External(b), time_.Answered(ts));
  });
}

void Graph::ForEachRequest(const std::function<void(UserId, UserId, TimestampMs)>& fn) const {
  requests_.ForEach([&](InternalId t, InternalId r, TimestampMs ts) {
    fn(ids_.External(t), ids_.External(r), time_.Answered(ts));
  });
}

void Graph::ForEachPrivate(const std::function<void(UserId)>& fn) const {
  for (InternalId a : private_users_) fn(ids_.External(a));
}

void Graph::CopyAccess(AccessImage* out) const {
  out->private_users.clear();
  out->blocks.clear();
  out->requests.clear();
  out->private_users.reserve(private_users_.size());
  for (InternalId a : private_users_) out->private_users.push_back(ids_.External(a));
  out->blocks.reserve(blocks_.size());
  ForEachBlock([&](UserId a, UserId b, TimestampMs ts) { out->blocks.push_back({a, b, ts}); });
  out->requests.reserve(requests_.size());
  ForEachRequest([&](UserId t, UserId r, TimestampMs ts) { out->requests.push_back({t, r, ts}); });
}

uint64_t Graph::AccessDigest() const {
  uint64_t sum = 0;
  auto add = [&](uint64_t tag, uint64_t a, uint64_t b, TimestampMs ts) {
    const uint64_t item[4] = {tag, a, b, static_cast<uint64_t>(ts)};
    sum += XXH3_64bits(item, sizeof item);
  };
  ForEachBlock([&](UserId a, UserId b, TimestampMs ts) { add(1, a, b, ts); });
  ForEachRequest([&](UserId t, UserId r, TimestampMs ts) { add(2, t, r, ts); });
  ForEachPrivate([&](UserId u) { add(3, u, 0, 0); });
  return sum;
}

Status Graph::CheckAccessInvariants() const {
  const EntryOrder ord = order();
  RELGRAPH_RETURN_IF_ERROR(blocks_.CheckConsistent(ord, "blocks"));
  RELGRAPH_RETURN_IF_ERROR(requests_.CheckConsistent(ord, "requests"));
  auto follows = [&](InternalId x, InternalId y) { return FollowsInternal(x, y); };
  Status status;
  blocks_.ForEach([&](InternalId a, InternalId b, TimestampMs) {
    if (!status.ok()) return;
    const std::string pair = Pair(ids_.External(a), ids_.External(b));
    if (follows(a, b) || follows(b, a)) {
      status = Status::Corruption("block " + pair + ": an edge joins the pair");
    } else if (requests_.Contains(a, b) || requests_.Contains(b, a)) {
      status = Status::Corruption("block " + pair + ": a request joins the pair");
    }
  });
  RELGRAPH_RETURN_IF_ERROR(status);
  requests_.ForEach([&](InternalId t, InternalId r, TimestampMs) {
    if (!status.ok()) return;
    const std::string pair = Pair(ids_.External(r), ids_.External(t));
    // A public account holds requests only while its switch or its removal runs in steps.
    if (!IsPrivateInternal(t) && !(unfinished_ && unfinished_->user == t)) {
      status = Status::Corruption("request " + pair + " to a public account");
    } else if (follows(r, t)) {
      status = Status::Corruption("request " + pair + " beside its edge");
    }
  });
  RELGRAPH_RETURN_IF_ERROR(status);
  size_t marked = 0;
  for (InternalId a = 0; a < users_.size(); ++a) {
    if (IsPrivateInternal(a)) {
      ++marked;
      if (!private_users_.contains(a)) {
        return Status::Corruption("user " + std::to_string(ids_.External(a)) +
                                  " is private but missing from the private set");
      }
    }
    if (InAnyPair(a) != ((users_[a].access & kHasAccessBit) != 0)) {
      return Status::Corruption("user " + std::to_string(ids_.External(a)) +
                                ": its block-or-request bit differs from a recount");
    }
  }
  if (marked != private_users_.size()) {
    return Status::Corruption(std::to_string(private_users_.size()) +
                              " users in the private set, " + std::to_string(marked) +
                              " marked private");
  }
  return Status::OK();
}

}  // namespace relgraph
