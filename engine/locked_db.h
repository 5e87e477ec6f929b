// LockedDb: the seam between Db and the engine's rooms that apply records on its behalf
// (engine/replication/: a replica's applier; engine/cluster/: another shard's changes, bucket
// moves). It is what they may use of a Db, for the length of one Db::RunExclusive call, with
// the Db's exclusive lock and its feed mutex held: the state records change, the one way to
// log, the clock, where users live, and the feed's edge hooks. Nothing else of Db is theirs,
// and they hold no reference to a Db's members past the call.
//
// Why a seam and not friends: the rooms used to be Db's own members spread over five files,
// sharing seventeen private helpers; a reader could not tell what they touched. Here the
// whole contact surface is this class.
//
// Thread-safety: used only by the thread running the RunExclusive call that made it.
#pragma once

#include <span>
#include <string_view>

#include "engine/cluster/user_place.h"
#include "engine/durable/cursor_table.h"
#include "engine/durable/epoch_history.h"
#include "engine/durable/inbound_positions.h"
#include "engine/durable/wal_records.h"
#include "engine/feed/feed.h"
#include "engine/graph/graph.h"
#include "storage/wal/wal_writer.h"

namespace relgraph {

class LockedDb {
 public:
  LockedDb(Graph& g, Feed& f, CursorTable& c, EpochHistory& e, InboundPositions& in, WalWriter* wal,
           const PlacementFn& place, Clock* clock)
      : graph(g),
        feed(f),
        cursors(c),
        epochs(e),
        inbound(in),
        wal_(wal),
        place_(place),
        clock_(clock) {}
  LockedDb(const LockedDb&) = delete;
  LockedDb& operator=(const LockedDb&) = delete;

  Graph& graph;
  Feed& feed;
  CursorTable& cursors;
  EpochHistory& epochs;
  InboundPositions& inbound;  // a cluster shard's positions per origin

  // Appends a record to the WAL after the state change it describes (WAL order is apply
  // order); returns its LSN (0 in memory). Db commits the last one after the call.
  Result<uint64_t> Log(WalRecordType type, std::string_view payload) {
    const WalWriter::Record record{static_cast<uint8_t>(type), payload};
    return LogBatch(std::span(&record, 1));
  }
  // The same for consecutive records under one acquisition of the WAL's mutex (a replica's
  // run of edge records): the last one's LSN. All or none are buffered.
  Result<uint64_t> LogBatch(std::span<const WalWriter::Record> records) {
    if (wal_ == nullptr || records.empty()) return uint64_t{0};
    auto lsn = wal_->AppendBatch(records);
    if (lsn.ok() && *lsn != 0) logged_ = *lsn;
    return lsn;
  }
  // The LSN of the last record logged through this (0: none): what the Db commits.
  uint64_t logged_lsn() const { return logged_; }
  uint64_t last_lsn() const { return wal_ != nullptr ? wal_->last_lsn() : 0; }
  bool in_memory() const { return wal_ == nullptr; }
  TimestampMs Now() const { return clock_->NowMs(); }
  // Where `u` lives (Db::SetPlacement); kHere on a single node.
  UserPlace PlaceOf(UserId u) const { return place_ ? place_(u) : UserPlace::kHere; }
  bool placed() const { return static_cast<bool>(place_); }
  // The feed's view of each edge a record creates or removes (as for a live change).
  Graph::EdgeHook FeedHook() {
    return [g = &graph, f = &feed](InternalId a, InternalId b, bool created) {
      created ? f->OnFollow(*g, a, b) : f->OnUnfollow(*g, a, b);
    };
  }
  // The same, for Graph::ApplyBatch (follow and unfollow ops).
  Graph::AppliedEdgeHook AppliedFeedHook() {
    return [g = &graph, f = &feed](const Graph::ReplayOp& op, InternalId a, InternalId b) {
      op.kind == Graph::ReplayOp::kFollow ? f->OnFollow(*g, a, b) : f->OnUnfollow(*g, a, b);
    };
  }
  // Asks Db to wake the fan-out thread once the lock is released (fan-out was queued).
  void WakeFanoutAfter() { wake_fanout_ = true; }
  bool wake_fanout() const { return wake_fanout_; }

 private:
  WalWriter* const wal_;
  const PlacementFn& place_;
  Clock* const clock_;
  bool wake_fanout_ = false;
  uint64_t logged_ = 0;
};

}  // namespace relgraph
