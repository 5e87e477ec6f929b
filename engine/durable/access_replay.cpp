#include "engine/durable/access_replay.h"

namespace relgraph {

Status AccessReplay::Request(const WalOp& op) {
  const UserId requester = op.a, target = op.b;
  if (!op.by_ensure_form()) return g_.ApplyRequest(requester, target, op.ts);
  RELGRAPH_RETURN_IF_ERROR(CheckReplayPair(requester, target, op.ts, "follow request"));
  g_.Settle(requester, target);
  auto is_private = g_.IsPrivate(target);
  if (!is_private.ok() || !*is_private || g_.BlockStands(requester, target) ||
      g_.HasEdge(requester, target)) {
    return Status::OK();
  }
  return g_.ApplyRequest(requester, target, op.ts);
}

Status AccessReplay::Approve(const WalOp& op) {
  const UserId target = op.a, requester = op.b;
  if (!op.by_ensure_form()) return g_.ApplyApprove(target, requester, op.ts, on_edge_);
  RELGRAPH_RETURN_IF_ERROR(CheckReplayPair(requester, target, op.ts, "approval"));
  g_.Settle(requester, target);
  const bool by_requester = (op.flags & kApproveByRequester) != 0;
  if (by_requester ? g_.BlockStands(requester, target) : !g_.HasRequest(requester, target)) {
    return Status::OK();
  }
  return g_.ApplyApprove(target, requester, op.ts, on_edge_);
}

}  // namespace relgraph
