// Graph: removing a user and going public in steps (graph.h, "operations in steps";
// docs/design.md, "Operations in steps").
//
// Why steps, and why settling: a user with a million fans, or a private account with a million
// pending requests, costs a million list updates to remove or to switch to public. The Db
// takes its writers' lock for a bounded step at a time, and other writes run in between. Those
// writes must meet the state the finished operation would leave, because the WAL logs the
// operation once, as today, and recovery and replicas replay it whole before the writes
// logged after it. So nothing between two steps may see a difference: a client's change
// naming a user being removed is refused (a removed user has no edges to change), a replayed
// or remote one finishes the removal first, and any change of a pending pair of an account
// going public approves that pair first. Readers see the documented intermediate states.
//
// At most one such operation is unfinished; Begin* and the one-shot RemoveUser, SetPrivate
// and ApplySetPrivate of its user finish it first. While it is unfinished:
// - a user being removed has no following, blocks, sent requests or private mark (Begin
//   removed them; O(max_following + blocks)); its fans go newest first, then the requests
//   it holds. Follow, FollowAt, Unfollow, Block, SetPrivate and Approve naming it fail with
//   kUnavailable; the replay and remote forms naming it (Apply*, Settle) finish the removal
//   first, so they meet the state of a finished one.
// - an account going public is public: a follow of it is an edge at once. The requests
//   pending when it switched are approved oldest first, all at the switch's time, and
//   on_edge (kept until the end) sees each new edge. A mutation of one of those pairs,
//   in any form, approves that pair first, so it meets the state of a finished switch.
// Both keep every invariant except that a request may be held by a public account: the
// unfinished operation's user.
#include <algorithm>
#include <string>
#include <vector>

#include "engine/graph/graph.h"

namespace relgraph {

namespace {

// The `n` oldest entries of `list`, oldest first.
std::vector<EdgeEntry> OldestOf(const FanList& list, uint32_t n) {
  n = std::min(n, list.size());
  std::vector<EdgeEntry> out(n);
  const uint32_t got = list.CopyDescending(n, n, out.data());  // newest first
  out.resize(got);
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace

Result<uint64_t> Graph::BeginRemoveUser(UserId a) {
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(a, "user"));
  if (unfinished_) FinishSteps();
  const InternalId ai = ids_.Find(a);
  limiter_.Forget(a);
  if (ai == kNoInternalId) return uint64_t{0};
  uint64_t removed = 0;
  // Out-edges first, through the ordinary path: it clears every kMutual bit, so the in-edges
  // left for the steps are all one-way.
  while (!users_[ai].following.empty()) {
    Unlink(ai, users_[ai].following.size() - 1);
    ++removed;
  }
  // Blocks either way and the requests it sent (bounded by max_blocks and the follow cap; the
  // blocks of it by others are not, but a user blocked by millions is rare).
  for (InternalId peer : blocks_.PeersOf(ai)) RemovePair(blocks_, ai, peer);
  for (InternalId owner : blocks_.OwnersNaming(ai)) RemovePair(blocks_, owner, ai);
  for (InternalId owner : requests_.OwnersNaming(ai)) RemovePair(requests_, owner, ai);
  MarkPrivate(ai, false);
  if (users_[ai].fans.size() > 0 || requests_.CountOwnedBy(ai) > 0) {
    unfinished_ = Unfinished{ai, /*removal=*/true, 0, nullptr};
  } else {
    RefreshAccessBit(ai);
  }
  return removed;
}

Result<SetPrivateOutcome> Graph::SetPrivateInSteps(UserId a, bool on, const EdgeHook& on_edge) {
  RELGRAPH_RETURN_IF_ERROR(CheckUserId(a, "user"));
  InternalId ai = ids_.Find(a);
  if (unfinished_ && ai != kNoInternalId && unfinished_->user == ai) {
    if (unfinished_->removal) {
      return Status(Code::kUnavailable, "user " + std::to_string(a) + " is being removed");
    }
    FinishSteps();
  }
  const bool is_private = ai != kNoInternalId && IsPrivateInternal(ai);
  if (is_private == on) return SetPrivateOutcome{};
  RELGRAPH_RETURN_IF_ERROR(CheckRoom(ai == kNoInternalId ? a : 0, 0));
  const TimestampMs at = TakeEngineTime();
  SetPrivateOutcome out{true, 0, time_.Answered(at)};
  if (ai == kNoInternalId) ai = Intern(a);
  MarkPrivate(ai, on);
  if (!on && requests_.CountOwnedBy(ai) > 0) {
    if (unfinished_) FinishSteps();
    unfinished_ = Unfinished{ai, /*removal=*/false, at, on_edge};
  }
  return out;
}

Graph::StepsDone Graph::RunSteps(uint32_t max_units) {
  StepsDone done;
  if (!unfinished_) return done;
  const InternalId u = unfinished_->user;
  uint32_t left = std::max<uint32_t>(max_units, 1);
  if (unfinished_->removal) {
    UserRecord& ur = users_[u];
    if (const uint32_t n = std::min(left, ur.fans.size()); n > 0) {
      // Newest fans first: the end of the list, where erasing moves nothing.
      std::vector<EdgeEntry> fans(n);
      const uint32_t got = ur.fans.CopyDescending(ur.fans.size(), n, fans.data());
      BeforeChange(u);
      const FanContext ctx = fan_context();
      for (uint32_t k = 0; k < got; ++k) {
        const InternalId fan = fans[k].peer;
        BeforeChange(fan);
        FollowingList& theirs = users_[fan].following;
        theirs.EraseAt(theirs.FindPeer(u), slab_);
        ChangeFans(users_[u].fans, [&] { users_[u].fans.Erase(ctx.order.KeyOf(fans[k]), ctx); });
      }
      edge_count_ -= got;
      done.edges_removed = got;
      left -= std::min(left, got);
    }
    if (left > 0 && users_[u].fans.size() == 0) {
      if (const FanList* held = requests_.ListOf(u); held != nullptr) {
        for (const EdgeEntry& e : OldestOf(*held, left)) RemovePair(requests_, u, e.peer);
      }
      if (requests_.CountOwnedBy(u) == 0) {
        RefreshAccessBit(u);
        unfinished_.reset();
      }
    }
  } else {
    const TimestampMs ts = unfinished_->ts;
    const EdgeHook on_edge = unfinished_->on_edge;
    if (const FanList* held = requests_.ListOf(u); held != nullptr) {
      for (const EdgeEntry& e : OldestOf(*held, left)) {
        ApproveImpl(u, e.peer, ts, on_edge);
        ++done.approved;
      }
    }
    if (requests_.CountOwnedBy(u) == 0) unfinished_.reset();
  }
  done.more = unfinished_.has_value();
  return done;
}

void Graph::FinishSteps() {
  while (unfinished_) RunSteps(1u << 20);
}

bool Graph::IsBeingRemoved(UserId a) const {
  return unfinished_ && unfinished_->removal && a != 0 && ids_.Find(a) == unfinished_->user;
}

void Graph::Settle(UserId a, UserId b) {
  if (!unfinished_) return;
  SettleSlow(a == 0 ? kNoInternalId : ids_.Find(a), b == 0 ? kNoInternalId : ids_.Find(b),
             /*client=*/false)
      .IgnoreError();  // only a client's call is refused
}

Status Graph::SettleSlow(InternalId a, InternalId b, bool client) {
  const InternalId u = unfinished_->user;
  if (a != u && b != u) return Status::OK();
  if (unfinished_->removal) {
    if (client) {
      return Status(Code::kUnavailable,
                    "user " + std::to_string(ids_.External(u)) + " is being removed");
    }
    FinishSteps();
    return Status::OK();
  }
  const InternalId other = a == u ? b : a;
  if (other == kNoInternalId || other == u || !requests_.Contains(u, other)) return Status::OK();
  const EdgeHook on_edge = unfinished_->on_edge;
  ApproveImpl(u, other, unfinished_->ts, on_edge);
  if (requests_.CountOwnedBy(u) == 0) unfinished_.reset();
  return Status::OK();
}

void Graph::SettleFor(InternalId a) {
  if (!unfinished_ || a == kNoInternalId) return;
  if (unfinished_->user == a) {
    FinishSteps();
  } else {
    SettleSlow(a, unfinished_->user, /*client=*/false).IgnoreError();
  }
}

}  // namespace relgraph
