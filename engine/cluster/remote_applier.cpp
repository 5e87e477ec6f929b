#include "engine/cluster/remote_applier.h"

#include "engine/cluster/shard_decisions.h"

namespace relgraph {
namespace {

// A remote removal's decisions beside the unfollows: this shard's users' blocks of the
// removed user and requests to it end, logged as their own changes. One decided before the
// removal reached this shard may have reached the user's shard after it: ended here by
// decision, it ends there too.
Status DecideForRemoval(LockedDb& db, UserId removed) {
  Graph& g = db.graph;
  for (UserId blocker : g.BlockersOf(removed)) {
    RELGRAPH_RETURN_IF_ERROR(g.Unblock(blocker, removed).status());
    RELGRAPH_RETURN_IF_ERROR(
        db.Log(WalRecordType::kUnblock, EncodePairRecord(blocker, removed, db.Now()).view())
            .status());
  }
  for (UserId requester : g.RequestersOf(removed)) {
    RELGRAPH_RETURN_IF_ERROR(LogWithdraw(db, requester, removed));
  }
  return Status::OK();
}

}  // namespace

Status ApplyEdgeEnsure(LockedDb& db, const WalOp& op) {
  db.graph.Settle(op.a, op.b);
  const Graph::ReplayOp replay = op.graph_op();  // its ensure form: op is remote or moved
  return db.graph.ApplyBatch({&replay, 1}, Graph::ReplayMode::kEnsure, db.AppliedFeedHook());
}

Status ApplyAccessEnsure(LockedDb& db, const WalOp& op,
                         Status (AccessReplay::*apply)(const WalOp&)) {
  db.graph.Settle(op.a, op.b);
  AccessReplay access(db.graph, db.FeedHook());
  return (access.*apply)(op);
}

Status RemoteApplier::Follow(const WalOp& op) {
  return ApplyEdgeEnsure(db_, op);
}

Status RemoteApplier::Unfollow(const WalOp& op) {
  return ApplyEdgeEnsure(db_, op);
}

// Each edge is decided on its follower's shard. The removed user's own follows were decided on
// its shard, which removed them; the follows *of* it held here are this shard's to end, so it
// decides an unfollow for each, logged as its own change and sent back like any other. A
// follow of the user that this shard decided before the removal reached it, and that reached
// the user's shard after the removal, is so undone there too: both shards end without the
// edge, in the same order of events.
Status RemoteApplier::RemoveUser(const WalOp& op) {
  Graph& g = db_.graph;
  g.Settle(op.a, 0);
  if (const InternalId removed = g.FindUser(op.a); decide_ && removed != kNoInternalId) {
    for (UserId fan : FanIdsOf(g, removed)) RELGRAPH_RETURN_IF_ERROR(LogUnfollow(db_, fan, op.a));
    RELGRAPH_RETURN_IF_ERROR(DecideForRemoval(db_, op.a));
  }
  const std::vector<InternalId> followees = db_.feed.BeforeRemoveUser(g, op.a);
  Status s = g.ApplyRemoveUser(op.a);
  db_.feed.AfterRemoveUser(g, followees);
  return s;
}

// The author's shard decided these; the copies here follow in its order, with fan-out to the
// fans held here as for a local change (docs/cluster.md, "Feeds").
Status RemoteApplier::Publish(const WalOp& op) {
  auto kept =
      db_.feed.EnsurePublished(db_.graph, op.a, op.b, op.ts, op.kind, op.evicted, /*live=*/true);
  if (!kept.ok()) return kept.status();
  if (!*kept) ++post_conflicts;
  db_.WakeFanoutAfter();
  return Status::OK();
}

Status RemoteApplier::DeletePost(const WalOp& op) {
  db_.WakeFanoutAfter();
  return db_.feed.EnsureDeleted(db_.graph, op.a, op.b, /*live=*/true);
}

Status RemoteApplier::Posts(const WalOp& op) {
  auto skipped = db_.feed.ReplacePosts(db_.graph, op.a, op.PostsOf(), /*live=*/true);
  if (!skipped.ok()) return skipped.status();
  post_conflicts += *skipped;
  return Status::OK();
}

Status RemoteApplier::Hide(const WalOp& op) {
  return db_.feed.ApplyHide(db_.graph, op.a, op.b, true);
}

Status RemoteApplier::Unhide(const WalOp& op) {
  return db_.feed.ApplyHide(db_.graph, op.a, op.b, false);
}

Status RemoteApplier::Access(const WalOp& op, Status (AccessReplay::*apply)(const WalOp&)) {
  return ApplyAccessEnsure(db_, op, apply);
}

// op.a blocks op.b, a user of this shard: its follow of op.a and its request to op.a end by
// its own decision (op.a's shard ended them if they had reached it).
Status RemoteApplier::Block(const WalOp& op) {
  if (decide_) {
    db_.graph.Settle(op.a, op.b);
    RELGRAPH_RETURN_IF_ERROR(LogUnfollow(db_, op.b, op.a));
    if (db_.graph.HasRequest(op.b, op.a)) RELGRAPH_RETURN_IF_ERROR(LogWithdraw(db_, op.b, op.a));
  }
  return Access(op, &AccessReplay::Block);
}

Status RemoteApplier::Unblock(const WalOp& op) {
  return Access(op, &AccessReplay::Unblock);
}

// op.a went public: the requests to it held here are this shard's users'; they are approved
// here at the switch's time, as op.a's shard approved those it held, and the approvals go back
// (a request on its way there when it switched is approved so).
Status RemoteApplier::SetPrivate(const WalOp& op) {
  Graph& g = db_.graph;
  g.Settle(op.a, op.b);
  if (decide_ && op.flags == 0) {
    const bool copies_kept = CopiesKept(db_, g.FindUser(op.a), kNoInternalId);
    const std::vector<UserId> requesters = g.RequestersOf(op.a);
    for (UserId r : requesters) {
      RELGRAPH_RETURN_IF_ERROR(g.ApplyApprove(op.a, r, op.ts, db_.FeedHook()));
      const uint8_t flags =
          kApproveByRequester | (g.HasEdge(op.a, r) ? kFollowBecameFriends : uint8_t{0});
      RELGRAPH_RETURN_IF_ERROR(
          db_.Log(WalRecordType::kApprove, EncodeBlockRecord(op.a, r, op.ts, flags).view())
              .status());
    }
    if (!copies_kept && !requesters.empty()) RELGRAPH_RETURN_IF_ERROR(WantPosts(db_, op.a));
  }
  return Access(op, &AccessReplay::SetPrivate);
}

Status RemoteApplier::Request(const WalOp& op) {
  return Access(op, &AccessReplay::Request);
}

// An approval by op.a's shard that makes op.b (a user of this shard) op.a's only settled fan
// here: the copies of op.a's posts start over and come back whole (as a first follow's do).
Status RemoteApplier::Approve(const WalOp& op) {
  Graph& g = db_.graph;
  g.Settle(op.a, op.b);
  const bool approval = (op.flags & kApproveByRequester) == 0;
  const bool had_edge = approval && g.HasEdge(op.b, op.a);
  RELGRAPH_RETURN_IF_ERROR(Access(op, &AccessReplay::Approve));
  if (decide_ && approval && !had_edge && g.HasEdge(op.b, op.a) &&
      !CopiesKept(db_, g.FindUser(op.a), g.FindUser(op.b))) {
    return WantPosts(db_, op.a);
  }
  return Status::OK();
}

Status RemoteApplier::Reject(const WalOp& op) {
  return Access(op, &AccessReplay::Reject);
}

// op.a withdrew its request to op.b, a user of this shard, which approved it meanwhile: the
// withdrawal wins (op.a's shard never made the edge), so the approval's edge ends.
Status RemoteApplier::Withdraw(const WalOp& op) {
  Graph& g = db_.graph;
  g.Settle(op.a, op.b);
  if (decide_ && !g.HasRequest(op.a, op.b) && g.HasEdge(op.a, op.b)) {
    RELGRAPH_RETURN_IF_ERROR(LogUnfollow(db_, op.a, op.b));
  }
  return Access(op, &AccessReplay::Withdraw);
}

Result<Db::RemoteApplied> ApplyRemoteRecords(Db& db, uint32_t origin,
                                             std::span<const LoggedRecord> records,
                                             uint64_t* commit_lsn) {
  if (commit_lsn != nullptr) *commit_lsn = 0;
  for (size_t i = 1; i < records.size(); ++i) {
    if (records[i].lsn <= records[i - 1].lsn) {
      return Status::InvalidArgument("remote records from shard " + std::to_string(origin) +
                                     " out of order: LSN " + std::to_string(records[i].lsn) +
                                     " after " + std::to_string(records[i - 1].lsn));
    }
  }
  Db::RemoteApplied out;
  auto at = [origin](uint64_t lsn, const std::string& what) {
    return "shard " + std::to_string(origin) + " LSN " + std::to_string(lsn) + ": " + what;
  };
  Status s = db.RunExclusive(
      "remote changes refused",
      [&](LockedDb& locked) -> Status {
        RemoteApplier apply(locked, /*decide=*/true);
        Status failed;
        for (const LoggedRecord& r : records) {
          if (r.lsn == 0) {
            failed = Status::InvalidArgument("a remote record from shard " +
                                             std::to_string(origin) + " with LSN 0");
            break;
          }
          if (r.lsn <= locked.inbound.Of(origin)) {  // applied before: a redelivery
            ++out.skipped;
            continue;
          }
          const auto type = static_cast<WalRecordType>(r.type);
          if (!RecordHas(r.type, kRecordRemote)) {
            failed = Status::InvalidArgument(
                at(r.lsn, "record type " + std::to_string(r.type) + " is not one shards exchange"));
            break;
          }
          if (r.payload.size() > MaxRemotePayload(type)) {
            failed = Status::InvalidArgument(
                at(r.lsn, "a payload of " + std::to_string(r.payload.size()) + " bytes"));
            break;
          }
          // Decoded from the record as it will be logged: what recovery will read back.
          const std::string record = EncodeRemoteRecord(origin, r.lsn, type, r.payload);
          auto op = DecodeWalRecord(static_cast<uint8_t>(WalRecordType::kRemote), record);
          if (!op.ok()) {
            failed = Status::InvalidArgument(at(r.lsn, op.status().message()));
            break;
          }
          if (Status a = DispatchRecord(*op, apply); !a.ok()) {
            failed = Status(a.code(), at(r.lsn, a.message()));
            break;
          }
          if (auto l = locked.Log(WalRecordType::kRemote, record); !l.ok()) {
            failed = l.status();
            break;
          }
          locked.inbound.Apply(origin, r.lsn);
          ++out.applied;
        }
        out.post_conflicts = apply.post_conflicts;
        return failed;
      },
      commit_lsn, Db::HandOver::kEveryMode);
  if (!s.ok()) return s;
  return out;
}

}  // namespace relgraph
