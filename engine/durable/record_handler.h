// RecordHandler: what one place does with each WAL record type, and the one dispatch that
// calls it (docs/wal-format.md, "Record types"; the types' rows are storage/wal/record_table.h).
//
// Why an interface with one method per type: a record is applied in four places (recovery,
// a replica, another cluster shard, a bucket move) and described in a fifth (wal-dump). Each
// used to have its own `switch`, and a type one of them forgot made replicas or shards drift
// with no error. Here each place is a handler; its methods are pure virtual, so a handler
// that forgets a type does not compile, and a type added to the table is added here once.
// The cost is one indirect call per record, small beside the record's cache misses.
//
// A remote (type 19) or moved (type 22) record reaches a handler as its inner record
// (WalOp::is_remote(), WalOp::moved say where it came from); a handler that does not apply a
// type says so in that type's method (usually kInternal: the caller filtered it).
//
// Thread-safety: as the handler's.
#pragma once

#include "engine/durable/wal_records.h"
#include "storage/status.h"

namespace relgraph {

class RecordHandler {
 public:
  virtual ~RecordHandler() = default;
  // The graph's edges.
  virtual Status Follow(const WalOp& op) = 0;
  virtual Status Unfollow(const WalOp& op) = 0;
  virtual Status RemoveUser(const WalOp& op) = 0;
  // The feed.
  virtual Status Publish(const WalOp& op) = 0;
  virtual Status DeletePost(const WalOp& op) = 0;
  virtual Status Mute(const WalOp& op) = 0;
  virtual Status Unmute(const WalOp& op) = 0;
  virtual Status Hide(const WalOp& op) = 0;
  virtual Status Unhide(const WalOp& op) = 0;
  // Blocks, private accounts and requests.
  virtual Status Block(const WalOp& op) = 0;
  virtual Status Unblock(const WalOp& op) = 0;
  virtual Status SetPrivate(const WalOp& op) = 0;
  virtual Status Request(const WalOp& op) = 0;
  virtual Status Approve(const WalOp& op) = 0;
  virtual Status Reject(const WalOp& op) = 0;
  virtual Status Withdraw(const WalOp& op) = 0;
  // Named cursors and the replication history.
  virtual Status Cursor(const WalOp& op) = 0;
  virtual Status CursorStart(const WalOp& op) = 0;
  virtual Status Epoch(const WalOp& op) = 0;
  // A cluster's copies of other shards' authors' posts.
  virtual Status Posts(const WalOp& op) = 0;
  virtual Status PostsWanted(const WalOp& op) = 0;

 protected:
  // For a type a handler never meets: kInternal naming the type and the handler.
  static Status NotApplied(const WalOp& op, std::string_view handler);
};

// Calls the method of `handler` for op.type. kInternal for a wrapper type (remote, moved),
// which decodes as its inner record and so never reaches here.
Status DispatchRecord(const WalOp& op, RecordHandler& handler);

}  // namespace relgraph
