// A replica applying its primary's WAL records (docs/replication.md): Db::ApplyReplicated.
//
// Why the live paths and not replay's: recovery rebuilds state nobody reads yet, so it may
// skip the feed's work (fan-out, inbox reconciliation) and redo it once at the end. A replica
// serves timelines while it applies, so each record goes through the same hooks as the
// primary's call did, with the outcome the primary decided: graph changes by the idempotent
// replay forms (no cap, rate limit or clock: the primary checked those), feed changes by the
// calls that queue fan-out. Where the outcome can be checked (a follow of an edge the replica
// holds, a publish's retention and eviction, a delete finding its post), a mismatch stops
// replication rather than letting the copies drift. A primary's remote and moved records go
// through the cluster's handlers (engine/cluster/), without deciding anything: the primary's
// log has its decisions as records of their own.
//
// Thread-safety: ApplyReplicatedRecords (declared in engine/db.h) runs under Db::RunExclusive.
#include "engine/cluster/bucket_move.h"
#include "engine/cluster/remote_applier.h"
#include "engine/db.h"
#include "engine/durable/access_replay.h"
#include "engine/durable/record_handler.h"
#include "engine/locked_db.h"

namespace relgraph {
namespace {

// `s`, its message prefixed with the record it concerns.
Status AtLsn(uint64_t lsn, const Status& s) {
  return Status(s.code(), "replicated LSN " + std::to_string(lsn) + ": " + s.message());
}

Status Mismatch(uint64_t lsn, const std::string& what) {
  return Status::Corruption("replicated LSN " + std::to_string(lsn) +
                            " does not fit this replica's state (" + what +
                            "): the replica must resynchronize from a snapshot");
}

// The primary's records, applied in order. Runs of follows and unfollows (most of a busy WAL)
// are gathered and go to the graph as one ApplyBatch, which overlaps their cache misses as
// recovery does; each record's feed hook runs right after its graph change, as on the primary,
// and the run's records are appended to the WAL in order, in one batch. Any other record
// flushes the run first.
class ReplicaApplier final : public RecordHandler {
 public:
  ReplicaApplier(LockedDb& db, std::span<const LoggedRecord> records)
      : db_(db), records_(records), access_(db.graph, db.FeedHook()) {}

  Status Apply() {
    Status failed;
    for (size_t i = 0; i < records_.size() && failed.ok(); ++i) {
      const LoggedRecord& r = records_[i];
      if (r.lsn != db_.last_lsn() + 1 + run_.size()) {
        failed = FlushRun();
        if (failed.ok()) {
          failed =
              Status::InvalidArgument("replicated LSN " + std::to_string(r.lsn) + " where LSN " +
                                      std::to_string(db_.last_lsn() + 1) + " was expected");
        }
        break;
      }
      auto op = DecodeWalRecord(r.type, r.payload);
      if (!op.ok()) {
        failed = FlushRun();
        if (failed.ok()) failed = AtLsn(r.lsn, op.status());  // kCorruption
        break;
      }
      at_ = i;
      failed = ApplyOne(r, *op);
    }
    if (Status s = FlushRun(); failed.ok()) failed = s;
    return failed;
  }

  // Edge records join the run; its flush applies and logs them.
  Status Follow(const WalOp& op) override { return Join(op); }
  Status Unfollow(const WalOp& op) override { return Join(op); }
  Status RemoveUser(const WalOp& op) override {
    Graph& g = db_.graph;
    const std::vector<InternalId> followees = db_.feed.BeforeRemoveUser(g, op.a);
    Status s = g.ApplyRemoveUser(op.a);
    db_.feed.AfterRemoveUser(g, followees);
    return s;
  }
  Status Publish(const WalOp& op) override {
    Feed& feed = db_.feed;
    Graph& g = db_.graph;
    // The primary's fan-out may have finished removing an earlier post of this id (or freed
    // its sequence number) before ours did: finish ours first.
    while (feed.post_leaving(op.b) && feed.fanout_pending()) feed.RunFanout(g);
    auto out = feed.Publish(g, op.a, op.b, op.kind, op.ts);
    if (!out.ok() && out.status().code() == Code::kLimitExceeded) {
      while (feed.fanout_pending()) feed.RunFanout(g);
      out = feed.Publish(g, op.a, op.b, op.kind, op.ts);
    }
    db_.WakeFanoutAfter();
    if (!out.ok()) return Mismatch(lsn(), "publish: " + out.status().message());
    if (!out->retained || out->evicted != op.evicted) {
      return Mismatch(lsn(), "publish of post " + std::to_string(op.b) + " evicted post " +
                                 std::to_string(out->evicted) + " here and post " +
                                 std::to_string(op.evicted) + " on the primary");
    }
    return Status::OK();
  }
  Status DeletePost(const WalOp& op) override {
    db_.WakeFanoutAfter();
    Status s = db_.feed.DeletePost(db_.graph, op.a, op.b);
    return s.ok() ? s : Mismatch(lsn(), "delete_post: " + s.message());
  }
  Status Mute(const WalOp& op) override { return db_.feed.ApplyMute(db_.graph, op.a, op.b, true); }
  Status Unmute(const WalOp& op) override {
    return db_.feed.ApplyMute(db_.graph, op.a, op.b, false);
  }
  Status Hide(const WalOp& op) override { return db_.feed.ApplyHide(db_.graph, op.a, op.b, true); }
  Status Unhide(const WalOp& op) override {
    return db_.feed.ApplyHide(db_.graph, op.a, op.b, false);
  }
  // Ensure forms: they establish the record's outcome whatever they meet (the primary's checks
  // decided it); edges they change go through the feed's hooks.
  Status Block(const WalOp& op) override { return access_.Block(op); }
  Status Unblock(const WalOp& op) override { return access_.Unblock(op); }
  Status SetPrivate(const WalOp& op) override { return access_.SetPrivate(op); }
  Status Request(const WalOp& op) override { return access_.Request(op); }
  Status Approve(const WalOp& op) override { return access_.Approve(op); }
  Status Reject(const WalOp& op) override { return access_.Reject(op); }
  Status Withdraw(const WalOp& op) override { return access_.Withdraw(op); }
  Status Cursor(const WalOp& op) override {
    db_.cursors.Apply(op);
    return Status::OK();
  }
  Status CursorStart(const WalOp& op) override { return Cursor(op); }
  Status Epoch(const WalOp& op) override { return db_.epochs.Apply(op.a, op.b, lsn(), op.ts); }
  Status Posts(const WalOp& op) override { return NotApplied(op, "a replica"); }  // inner only
  Status PostsWanted(const WalOp& op) override {  // clears the copies, as on the primary
    auto cleared = db_.feed.ReplacePosts(db_.graph, op.a, {}, /*live=*/true);
    return cleared.ok() ? Status::OK() : cleared.status();
  }

 private:
  uint64_t lsn() const { return records_[at_].lsn; }

  // One record: an edge record joins the run; anything else flushes the run, is applied (a
  // remote or moved record by the cluster's handlers, as the primary applied it) and logged.
  Status ApplyOne(const LoggedRecord& r, const WalOp& op) {
    const bool edge = !op.by_ensure_form() &&
                      (op.type == WalRecordType::kFollow || op.type == WalRecordType::kUnfollow);
    if (edge) return DispatchRecord(op, *this);
    RELGRAPH_RETURN_IF_ERROR(FlushRun());
    Status s;
    if (op.is_remote()) {
      RemoteApplier remote(db_, /*decide=*/false);
      s = DispatchRecord(op, remote);
      if (s.ok()) db_.inbound.Apply(op.origin, op.origin_lsn);
    } else if (op.moved) {
      MoveApplier moved(db_);
      s = DispatchRecord(op, moved);
    } else {
      s = DispatchRecord(op, *this);
    }
    if (!s.ok()) return s.code() == Code::kCorruption ? s : AtLsn(r.lsn, s);  // Mismatch names it
    return db_.Log(static_cast<WalRecordType>(r.type), r.payload).status();
  }

  Status Join(const WalOp& op) {
    if (op.clears_posts()) clears_.emplace_back(run_.size(), op.b);
    run_.push_back(op.graph_op());
    run_at_.push_back(at_);
    return Status::OK();
  }

  // kChecked proves each record fits: a follow of an edge the replica holds or an unfollow of
  // one it lacks is no primary's record against this state. The check scans the follower's
  // list while the batch has it in cache; the feed's hook runs there too.
  Status FlushRun() {
    if (run_.empty()) return Status::OK();
    Status s = db_.graph.ApplyBatch(run_, Graph::ReplayMode::kChecked, db_.AppliedFeedHook());
    const size_t applied = s.ok() ? run_.size() : static_cast<size_t>(s.detail());
    Status failed = LogRun(applied);
    if (failed.ok() && !s.ok()) {
      const uint64_t at = records_[run_at_[applied]].lsn;
      failed = s.code() == Code::kAlreadyExists ? Mismatch(at, "follow of an edge it holds")
               : s.code() == Code::kNotFound    ? Mismatch(at, "unfollow of an edge it lacks")
                                                : AtLsn(at, s);
    }
    run_.clear();
    run_at_.clear();
    clears_.clear();
    return failed;
  }

  // The run's first `applied` records: a follow that was a remote user's first fan on the
  // primary clears its posts' copies here too (only edge records are in the run, so this keeps
  // the order with the feed's records), then each is logged. The records applied stay logged
  // when a later one in the run does not fit.
  Status LogRun(size_t applied) {
    for (const auto& [k, followee] : clears_) {
      if (k >= applied) break;
      auto cleared = db_.feed.ReplacePosts(db_.graph, followee, {}, /*live=*/true);
      if (!cleared.ok()) return AtLsn(records_[run_at_[k]].lsn, cleared.status());
    }
    logged_.clear();
    for (size_t k = 0; k < applied; ++k) {
      const LoggedRecord& r = records_[run_at_[k]];
      logged_.push_back({r.type, r.payload});
    }
    return db_.LogBatch(logged_).status();
  }

  LockedDb& db_;
  const std::span<const LoggedRecord> records_;
  AccessReplay access_;
  size_t at_ = 0;  // the record being applied
  std::vector<Graph::ReplayOp> run_;
  std::vector<size_t> run_at_;                     // the run's records, by index
  std::vector<std::pair<size_t, UserId>> clears_;  // run index, followee: WalOp::clears_posts
  std::vector<WalWriter::Record> logged_;          // the run's records, as LogRun appends them
};

}  // namespace

Status ApplyReplicatedRecords(Db& db, std::span<const LoggedRecord> records, uint64_t* commit_lsn) {
  if (commit_lsn != nullptr) *commit_lsn = 0;
  if (db.dir().empty()) return Status::InvalidArgument("an in-memory Db cannot be a replica");
  if (records.empty()) return Status::OK();
  return db.RunExclusive(
      "replication stopped",
      [&](LockedDb& locked) { return ReplicaApplier(locked, records).Apply(); }, commit_lsn,
      Db::HandOver::kUnderAlways);
}

}  // namespace relgraph
