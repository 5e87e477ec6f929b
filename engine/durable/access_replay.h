// AccessReplay: the records of blocks, private accounts and requests (types 12-18) applied by
// Graph's idempotent ensure forms, the same way in every handler that replays them (recovery,
// a replica, another shard's change, a bucket move).
//
// A record decided elsewhere (another cluster shard's, or a move's: op.by_ensure_form()) may
// have crossed another change about the same pair on its way: shards decide on their own
// users' behalf and send each change to the other user's shard (docs/cluster.md, "Blocks,
// private accounts and requests"). Its forms keep the shards agreeing, and depend only on the
// state they meet (recovery and replicas apply them alike):
// - a follow across a standing block is dropped (the block, reaching the follower's shard,
//   ends the follow there); otherwise it takes the place of a pending request the same way
//   (Graph's ReplayOp::remote);
// - a request is dropped across a block, to a public account (the requester's shard,
//   learning that, approves or has withdrawn it), or beside its edge;
// - an approval made by the target's shard applies only while the request is pending here
//   (a withdrawn request stays withdrawn: the withdrawal, reaching the target's shard, ends
//   the edge there); one made by the requester's shard (applying a public switch) is dropped
//   across a block and otherwise ensured.
//
// Thread-safety: as the graph's (the caller holds it exclusively).
#pragma once

#include "engine/durable/wal_records.h"
#include "engine/graph/graph.h"
#include "storage/status.h"

namespace relgraph {

class AccessReplay {
 public:
  // on_edge sees each edge the records create or remove (the feed's hooks; recovery passes
  // none, since inboxes are rebuilt after it).
  AccessReplay(Graph& g, Graph::EdgeHook on_edge) : g_(g), on_edge_(std::move(on_edge)) {}

  Status Block(const WalOp& op) { return g_.ApplyBlock(op.a, op.b, op.ts, on_edge_); }
  Status Unblock(const WalOp& op) { return g_.ApplyUnblock(op.a, op.b); }
  Status SetPrivate(const WalOp& op) {
    return g_.ApplySetPrivate(op.a, op.flags != 0, op.ts, on_edge_);
  }
  Status Request(const WalOp& op);
  Status Approve(const WalOp& op);
  Status Reject(const WalOp& op) { return g_.ApplyRemoveRequest(op.a, op.b); }
  Status Withdraw(const WalOp& op) { return g_.ApplyRemoveRequest(op.b, op.a); }

 private:
  Graph& g_;
  const Graph::EdgeHook on_edge_;
};

}  // namespace relgraph
