// A bucket move's state (docs/cluster.md, "Moving a bucket"): the state of the users a shard
// hands to another, taken out on one side (ExportUsers, DropForeign) and brought in on the other
// (MoveIn), each piece applied by MoveApplier and logged as a moved record (WAL type 22).
//
// Why records of the existing types, applied by their ensure forms: recovery, replicas and
// the tests already know each one, and an ensure form establishes its outcome whatever it
// meets. The importing shard may hold part of the state already (edges with its own users)
// or receive changes to it later from the stream; applied again, the same record changes
// nothing, and a record that meets a newer state (a follow across a block) is skipped as a
// remote one is. What the importing shard's own users decided (their follows, blocks,
// requests, hides: kRecordDecidedByFirst) is newer there than in any copy, so it is not
// imported.
//
// Thread-safety: MoveApplier under its LockedDb's locks; the functions are thread-safe.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "engine/db.h"
#include "engine/durable/access_replay.h"
#include "engine/durable/record_handler.h"
#include "engine/locked_db.h"

namespace relgraph {

// A moved record's inner change by its ensure form with the feed's hooks (MoveIn, DropForeign,
// a replica applying its primary's moved records). Types a move does not carry: kInternal.
class MoveApplier final : public RecordHandler {
 public:
  explicit MoveApplier(LockedDb& db) : db_(db) {}

  Status Follow(const WalOp& op) override;
  Status Unfollow(const WalOp& op) override;
  Status RemoveUser(const WalOp& op) override { return NotApplied(op, "a bucket move"); }
  Status Publish(const WalOp& op) override { return NotApplied(op, "a bucket move"); }
  Status DeletePost(const WalOp& op) override { return NotApplied(op, "a bucket move"); }
  Status Mute(const WalOp& op) override;
  Status Unmute(const WalOp& op) override;
  Status Hide(const WalOp& op) override;
  Status Unhide(const WalOp& op) override;
  Status Block(const WalOp& op) override { return Access(op, &AccessReplay::Block); }
  Status Unblock(const WalOp& op) override { return Access(op, &AccessReplay::Unblock); }
  Status SetPrivate(const WalOp& op) override { return Access(op, &AccessReplay::SetPrivate); }
  Status Request(const WalOp& op) override { return Access(op, &AccessReplay::Request); }
  Status Approve(const WalOp& op) override { return Access(op, &AccessReplay::Approve); }
  Status Reject(const WalOp& op) override { return Access(op, &AccessReplay::Reject); }
  Status Withdraw(const WalOp& op) override { return Access(op, &AccessReplay::Withdraw); }
  Status Cursor(const WalOp& op) override { return NotApplied(op, "a bucket move"); }
  Status CursorStart(const WalOp& op) override { return NotApplied(op, "a bucket move"); }
  Status Epoch(const WalOp& op) override { return NotApplied(op, "a bucket move"); }
  Status Posts(const WalOp& op) override;
  Status PostsWanted(const WalOp& op) override { return NotApplied(op, "a bucket move"); }

 private:
  Status Access(const WalOp& op, Status (AccessReplay::*apply)(const WalOp&));
  LockedDb& db_;
};

Result<uint64_t> DropForeignState(Db& db, uint32_t to, const std::function<bool(UserId)>& kept);
Status MoveUsersIn(Db& db, uint32_t from, std::span<const Db::MovedState> state,
                   const std::function<bool(UserId)>& moving);

}  // namespace relgraph
