// Applying the changes other cluster shards decided (docs/cluster.md, "What crosses shards").
//
// Why ensure forms: every shard holds each edge that touches one of its users, both sides of
// it. A change is decided on one shard (a follow on the follower's) and sent to the shard of
// the other user it touches, where it must establish the decided outcome whatever it meets:
// the same change again (JetStream redelivers what was not acknowledged), or, for a record
// the position below did not filter, an edge already in place. So each is applied by its
// idempotent replay form and logged as one remote record (WAL type 19) together with the
// position it reaches: the change and "applied up to here" are durable together, and a
// redelivered change is skipped by its LSN without being looked at.
//
// Thread-safety: RemoteApplier under its LockedDb's locks; ApplyRemoteRecords is thread-safe.
#pragma once

#include <span>

#include "engine/db.h"
#include "engine/durable/access_replay.h"
#include "engine/durable/record_handler.h"
#include "engine/locked_db.h"

namespace relgraph {

// A remote record's inner change, by its ensure form with the feed's hooks (ApplyRemoteRecords,
// and a replica applying its primary's remote records). With `decide`, this shard first decides
// its users' part (engine/cluster/shard_decisions.h): a remote remove_user unfollows every
// follow of the user held here, a block ends the blocked user's follow and request, going
// public approves the requests held here, a withdrawal ends an approval made meanwhile. A
// replica passes false: its primary's log has those decisions as records of their own. An
// operation running in steps here (removing or switching a user the change names) meets the
// change as if finished (Graph::Settle).
class RemoteApplier final : public RecordHandler {
 public:
  RemoteApplier(LockedDb& db, bool decide) : db_(db), decide_(decide) {}
  // Remote posts skipped because another author here holds their id (Feed::EnsurePublished).
  uint64_t post_conflicts = 0;

  Status Follow(const WalOp& op) override;
  Status Unfollow(const WalOp& op) override;
  Status RemoveUser(const WalOp& op) override;
  Status Publish(const WalOp& op) override;
  Status DeletePost(const WalOp& op) override;
  Status Mute(const WalOp& op) override { return NotApplied(op, "a remote change"); }
  Status Unmute(const WalOp& op) override { return NotApplied(op, "a remote change"); }
  Status Hide(const WalOp& op) override;
  Status Unhide(const WalOp& op) override;
  Status Block(const WalOp& op) override;
  Status Unblock(const WalOp& op) override;
  Status SetPrivate(const WalOp& op) override;
  Status Request(const WalOp& op) override;
  Status Approve(const WalOp& op) override;
  Status Reject(const WalOp& op) override;
  Status Withdraw(const WalOp& op) override;
  Status Cursor(const WalOp& op) override { return NotApplied(op, "a remote change"); }
  Status CursorStart(const WalOp& op) override { return NotApplied(op, "a remote change"); }
  Status Epoch(const WalOp& op) override { return NotApplied(op, "a remote change"); }
  Status Posts(const WalOp& op) override;
  // Nothing changes here; the outbox answers with a back-fill.
  Status PostsWanted(const WalOp&) override { return Status::OK(); }

 private:
  // The access records: settled, decided (with decide_), then by their ensure forms.
  Status Access(const WalOp& op, Status (AccessReplay::*apply)(const WalOp&));

  LockedDb& db_;
  const bool decide_;
};

// A remote or moved follow or unfollow by its ensure form, with the feed's hooks, after
// settling an operation in steps that names either user (Graph::Settle).
// REQUIRES: op.by_ensure_form().
Status ApplyEdgeEnsure(LockedDb& db, const WalOp& op);
// A remote or moved access record, likewise settled first, by AccessReplay's `apply`.
Status ApplyAccessEnsure(LockedDb& db, const WalOp& op,
                         Status (AccessReplay::*apply)(const WalOp&));

}  // namespace relgraph
