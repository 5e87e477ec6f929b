// Db's cluster members for blocks, private accounts and follow requests (docs/cluster.md,
// "Blocks, private accounts and requests"): applying another shard's change, and deciding this
// shard's users' part of it.
//
// Why decisions here: each edge belongs to its follower's shard and each request to its
// requester's, which alone decide changes to them (the cap, the rate limit and the
// requester's own withdrawals are there). A change decided on the other user's shard reaches
// this one after changes this shard decided meanwhile may have crossed it on the way. So
// where such a change ends something this shard's user owns, this shard decides that end
// itself, logs it as its own change and sends it back, as removals do: both shards then end
// in the same state, in an order both saw. What is applied from the remote record itself
// depends only on the state it meets (Graph's ApplyRemote* forms), so recovery and replicas,
// which replay the decisions as this shard's own records, reach the same state.
#include "engine/db.h"
#include "engine/durable/recovery.h"
#include "engine/durable/wal_records.h"

namespace relgraph {

Status Db::LogUnfollowLocked(UserId a, UserId b) {
  Graph& g = *graph_;
  auto gone = g.Unfollow(a, b);
  if (!gone.ok()) return gone.status();
  if (!*gone) return Status::OK();
  feed_->OnUnfollow(g, g.FindUser(a), g.FindUser(b));
  return Log(WalRecordType::kUnfollow, EncodePairRecord(a, b, NowMs()).view()).status();
}

Status Db::LogWithdrawLocked(UserId requester, UserId target) {
  RELGRAPH_RETURN_IF_ERROR(graph_->Withdraw(requester, target).status());
  return Log(WalRecordType::kWithdraw, EncodePairRecord(requester, target, NowMs()).view())
      .status();
}

Status Db::WantPostsLocked(UserId author) {
  auto cleared = feed_->ReplacePosts(*graph_, author, {}, /*live=*/true);
  if (!cleared.ok()) return cleared.status();
  return Log(WalRecordType::kPostsWanted, EncodePostsWantedRecord(author, NowMs()).view()).status();
}

Status Db::DecideForRemoteAccessLocked(const WalOp& op) {
  Graph& g = *graph_;
  switch (op.type) {
    case WalRecordType::kBlock:
      // op.a blocks op.b, a user of this shard: its follow of op.a and its request to op.a
      // end by its own decision (op.a's shard ended them if they had reached it).
      RELGRAPH_RETURN_IF_ERROR(LogUnfollowLocked(op.b, op.a));
      if (g.HasRequest(op.b, op.a)) RELGRAPH_RETURN_IF_ERROR(LogWithdrawLocked(op.b, op.a));
      return Status::OK();
    case WalRecordType::kSetPrivate: {
      if (op.flags != 0) return Status::OK();
      // op.a went public: the requests to it held here are this shard's users'; they are
      // approved here at the switch's time, as op.a's shard approved those it held, and the
      // approvals go back (a request on its way there when it switched is approved so).
      const bool copies_kept = CopiesKeptLocked(g.FindUser(op.a), kNoInternalId);
      const std::vector<UserId> requesters = g.RequestersOf(op.a);
      for (UserId r : requesters) {
        RELGRAPH_RETURN_IF_ERROR(g.ApplyApprove(op.a, r, op.ts, FeedHook(g)));
        const uint8_t flags =
            kApproveByRequester | (g.HasEdge(op.a, r) ? kFollowBecameFriends : uint8_t{0});
        RELGRAPH_RETURN_IF_ERROR(
            Log(WalRecordType::kApprove, EncodeBlockRecord(op.a, r, op.ts, flags).view()).status());
      }
      if (!copies_kept && !requesters.empty()) return WantPostsLocked(op.a);
      return Status::OK();
    }
    case WalRecordType::kWithdraw:
      // op.a withdrew its request to op.b, a user of this shard, which approved it meanwhile:
      // the withdrawal wins (op.a's shard never made the edge), so the approval's edge ends.
      if (!g.HasRequest(op.a, op.b) && g.HasEdge(op.a, op.b)) {
        return LogUnfollowLocked(op.a, op.b);
      }
      return Status::OK();
    default:
      return Status::OK();
  }
}

Status Db::ApplyRemoteAccessLocked(const WalOp& op, bool decide) {
  Graph& g = *graph_;
  if (decide) RELGRAPH_RETURN_IF_ERROR(DecideForRemoteAccessLocked(op));
  // An approval by op.a's shard that makes op.b (a user of this shard) op.a's only settled fan
  // here: the copies of op.a's posts start over and come back whole (as a first follow's do).
  const bool approval = op.type == WalRecordType::kApprove && (op.flags & kApproveByRequester) == 0;
  const bool had_edge = approval && g.HasEdge(op.b, op.a);
  RELGRAPH_RETURN_IF_ERROR(ApplyAccessOp(op, g, FeedHook(g)));
  if (decide && approval && !had_edge && g.HasEdge(op.b, op.a) &&
      !CopiesKeptLocked(g.FindUser(op.a), g.FindUser(op.b))) {
    return WantPostsLocked(op.a);
  }
  return Status::OK();
}

Status Db::DecideForRemoteRemovalLocked(UserId removed) {
  Graph& g = *graph_;
  // The blocks of the removed user and the requests to it held here are this shard's users';
  // one decided before the removal reached this shard may have reached the user's shard
  // after it: ended here by decision, it ends there too.
  for (UserId blocker : g.BlockersOf(removed)) {
    RELGRAPH_RETURN_IF_ERROR(g.Unblock(blocker, removed).status());
    RELGRAPH_RETURN_IF_ERROR(
        Log(WalRecordType::kUnblock, EncodePairRecord(blocker, removed, NowMs()).view()).status());
  }
  for (UserId requester : g.RequestersOf(removed)) {
    RELGRAPH_RETURN_IF_ERROR(LogWithdrawLocked(requester, removed));
  }
  return Status::OK();
}

}  // namespace relgraph
