// Db's replication members (engine/db.h, "replication"): a replica applying its primary's
// records, and the epoch history that promotions extend.
//
// Why the live paths and not replay's: recovery rebuilds state nobody reads yet, so it may
// skip the feed's work (fan-out, inbox reconciliation) and redo it once at the end. A replica
// serves timelines while it applies, so each record goes through the same hooks as the
// primary's call did, with the outcome the primary decided: graph changes by the idempotent
// replay forms (no cap, rate limit or clock: the primary checked those), feed changes by the
// calls that queue fan-out. Where the outcome can be checked (a publish's retention and
// eviction, a delete finding its post), a mismatch stops replication rather than letting the
// copies drift.
#include <random>

#include "engine/db.h"
#include "engine/durable/recovery.h"
#include "engine/durable/wal_records.h"
#include "storage/env/file_names.h"
#include "storage/wal/wal_reader.h"

namespace relgraph {

namespace {

bool IsEdgeRecord(uint8_t type) {
  return type == static_cast<uint8_t>(WalRecordType::kFollow) ||
         type == static_cast<uint8_t>(WalRecordType::kUnfollow);
}

// `s`, its message prefixed with the record it concerns.
Status AtLsn(uint64_t lsn, const Status& s) {
  return Status(s.code(), "replicated LSN " + std::to_string(lsn) + ": " + s.message());
}

Status Mismatch(uint64_t lsn, const std::string& what) {
  return Status::Corruption("replicated LSN " + std::to_string(lsn) +
                            " does not fit this replica's state (" + what +
                            "): the replica must resynchronize from a snapshot");
}

}  // namespace

Status Db::ApplyEdgeRun(std::span<const ReplicatedRecord> records, size_t* at) {
  Graph& g = *graph_;
  const size_t begin = *at;
  std::vector<Graph::ReplayOp> run;
  std::vector<std::pair<size_t, UserId>> clears;  // run index, followee: WalOp::clears_posts
  Status stopped;  // why the run ended before an edge record (that record's error)
  for (size_t end = begin; end < records.size(); ++end) {
    const ReplicatedRecord& r = records[end];
    if (!IsEdgeRecord(r.type) || r.lsn != wal_->last_lsn() + 1 + (end - begin)) {
      break;  // the caller goes on with it
    }
    auto op = DecodeWalRecord(r.type, r.payload);
    if (!op.ok()) {
      stopped = AtLsn(r.lsn, op.status());  // kCorruption
      break;
    }
    if (op->clears_posts()) clears.emplace_back(run.size(), op->b);
    run.push_back(op->graph_op());
  }
  // kChecked proves each record fits: a follow of an edge the replica holds or an unfollow of
  // one it lacks is no primary's record against this state. The check scans the follower's
  // list while the batch has it in cache; the feed's hook runs there too.
  Feed& feed = *feed_;
  Status s = g.ApplyBatch(run, Graph::ReplayMode::kChecked,
                          [&feed, &g](const Graph::ReplayOp& op, InternalId a, InternalId b) {
                            if (op.kind == Graph::ReplayOp::kFollow) {
                              feed.OnFollow(g, a, b);
                            } else {
                              feed.OnUnfollow(g, a, b);
                            }
                          });
  size_t applied = run.size();
  if (!s.ok()) applied = static_cast<size_t>(s.detail());
  // A follow that was a remote user's first fan on the primary clears its posts' copies here
  // too; only edge records are in the run, so this keeps the order with the feed's records.
  for (const auto& [k, followee] : clears) {
    if (k >= applied) break;
    auto cleared = feed.ReplacePosts(g, followee, {}, /*live=*/true);
    if (!cleared.ok()) return AtLsn(records[begin + k].lsn, cleared.status());
  }
  if (!s.ok()) {
    const uint64_t lsn = records[begin + applied].lsn;
    stopped = s.code() == Code::kAlreadyExists ? Mismatch(lsn, "follow of an edge it holds")
              : s.code() == Code::kNotFound    ? Mismatch(lsn, "unfollow of an edge it lacks")
                                               : AtLsn(lsn, s);
  }
  for (size_t k = 0; k < applied; ++k) {
    auto l = Log(static_cast<WalRecordType>(records[begin + k].type), records[begin + k].payload);
    if (!l.ok()) return l.status();
  }
  *at = begin + applied - (applied > 0 ? 1 : 0);  // the caller's loop steps past the last one
  if (applied == 0 && stopped.ok()) {
    return Status(Code::kInternal, "an empty edge run");  // unreachable: begin is an edge
  }
  return stopped;
}

Status Db::ApplyReplicated(std::span<const ReplicatedRecord> records, uint64_t* commit_lsn) {
  if (commit_lsn != nullptr) *commit_lsn = 0;
  if (!wal_) return Status::InvalidArgument("an in-memory Db cannot be a replica");
  if (records.empty()) return Status::OK();
  uint64_t lsn = 0;
  bool woke_fanout = false;
  Status failed;
  {
    std::unique_lock lock(mu_);
    std::lock_guard feed_lock(feed_mu_);
    RELGRAPH_RETURN_IF_ERROR(WritableLocked("replication stopped"));
    Graph& g = *graph_;
    // Runs of follows and unfollows (most of a busy WAL) go to the graph as one ApplyBatch,
    // which overlaps their cache misses as recovery does; each record's feed hook runs right
    // after its graph change, as on the primary, and the run's WAL appends follow in order.
    for (size_t i = 0; i < records.size() && failed.ok(); ++i) {
      const ReplicatedRecord& r = records[i];
      if (r.lsn != wal_->last_lsn() + 1) {
        failed = Status::InvalidArgument("replicated LSN " + std::to_string(r.lsn) + " where LSN " +
                                         std::to_string(wal_->last_lsn() + 1) + " was expected");
        break;
      }
      if (IsEdgeRecord(r.type)) {
        failed = ApplyEdgeRun(records, &i);
        continue;
      }
      auto op = DecodeWalRecord(r.type, r.payload);
      if (!op.ok()) {
        failed = AtLsn(r.lsn, op.status());  // kCorruption
        break;
      }
      if (op->is_remote()) {  // another shard's change, applied by the primary as here
        if (Status s = ApplyRemoteOpLocked(*op, /*decide=*/false); !s.ok()) {
          failed = AtLsn(r.lsn, s);
          break;
        }
        inbound_.Apply(op->origin, op->origin_lsn);
        if (auto l = Log(WalRecordType::kRemote, r.payload); !l.ok()) {
          failed = l.status();
          break;
        }
        continue;
      }
      if (op->moved) {  // a bucket move's state, applied by the primary as here
        if (Status s = ApplyMovedOpLocked(*op); !s.ok()) {
          failed = AtLsn(r.lsn, s);
          break;
        }
        if (auto l = Log(WalRecordType::kMoved, r.payload); !l.ok()) {
          failed = l.status();
          break;
        }
        continue;
      }
      Status s;
      switch (op->type) {
        case WalRecordType::kFollow:  // ApplyEdgeRun's
        case WalRecordType::kUnfollow:
        case WalRecordType::kRemote:  // decoded as its inner type, applied above
        case WalRecordType::kPosts:   // only inside a remote record
        case WalRecordType::kMoved:   // decoded as its inner type, applied above
          s = Status(Code::kInternal, "an edge record outside a run");
          break;
        case WalRecordType::kRemoveUser: {
          const std::vector<InternalId> followees = feed_->BeforeRemoveUser(g, op->a);
          s = g.ApplyRemoveUser(op->a);
          feed_->AfterRemoveUser(g, followees);
          break;
        }
        case WalRecordType::kPublish: {
          // The primary's fan-out may have finished removing an earlier post of this id
          // (or freed its sequence number) before ours did: finish ours first.
          while (feed_->post_leaving(op->b) && feed_->fanout_pending()) feed_->RunFanout(g);
          auto out = feed_->Publish(g, op->a, op->b, op->kind, op->ts);
          if (!out.ok() && out.status().code() == Code::kLimitExceeded) {
            while (feed_->fanout_pending()) feed_->RunFanout(g);
            out = feed_->Publish(g, op->a, op->b, op->kind, op->ts);
          }
          if (!out.ok()) {
            s = Mismatch(r.lsn, "publish: " + out.status().message());
          } else if (!out->retained || out->evicted != op->evicted) {
            s = Mismatch(r.lsn, "publish of post " + std::to_string(op->b) + " evicted post " +
                                    std::to_string(out->evicted) + " here and post " +
                                    std::to_string(op->evicted) + " on the primary");
          }
          woke_fanout = true;
          break;
        }
        case WalRecordType::kDeletePost:
          s = feed_->DeletePost(g, op->a, op->b);
          if (!s.ok()) s = Mismatch(r.lsn, "delete_post: " + s.message());
          woke_fanout = true;
          break;
        case WalRecordType::kMute:
        case WalRecordType::kUnmute:
          s = feed_->ApplyMute(g, op->a, op->b, op->type == WalRecordType::kMute);
          break;
        case WalRecordType::kHide:
        case WalRecordType::kUnhide:
          s = feed_->ApplyHide(g, op->a, op->b, op->type == WalRecordType::kHide);
          break;
        case WalRecordType::kCursor:
        case WalRecordType::kCursorStart:
          cursors_.Apply(*op);
          break;
        case WalRecordType::kEpoch:
          s = epochs_.Apply(op->a, op->b, r.lsn, op->ts);
          break;
        case WalRecordType::kPostsWanted: {  // clears the copies, as on the primary
          auto cleared = feed_->ReplacePosts(g, op->a, {}, /*live=*/true);
          s = cleared.ok() ? Status::OK() : cleared.status();
          break;
        }
        case WalRecordType::kBlock:
        case WalRecordType::kUnblock:
        case WalRecordType::kSetPrivate:
        case WalRecordType::kRequest:
        case WalRecordType::kApprove:
        case WalRecordType::kReject:
        case WalRecordType::kWithdraw:
          // Ensure forms: they establish the record's outcome whatever they meet (the
          // primary's checks decided it); edges they change go through the feed's hooks.
          s = ApplyAccessOp(*op, g, FeedHook(g));
          break;
      }
      if (!s.ok()) {
        failed = s.code() == Code::kCorruption ? s : AtLsn(r.lsn, s);  // Mismatch names it
        break;
      }
      if (auto l = Log(op->type, r.payload); !l.ok()) {
        failed = l.status();
        break;
      }
    }
    // What this call logged (follow runs log inside ApplyFollowRun): the LSN to commit.
    if (wal_->last_lsn() >= records.front().lsn) lsn = wal_->last_lsn();
  }
  if ((wake_fanout_after_remote_.exchange(false) || woke_fanout) && options_.background_fanout)
    WakeFanout();
  if (commit_lsn != nullptr && options_.durability == DurabilityMode::kAlways) {
    *commit_lsn = lsn;
  } else if (Status c = Commit(lsn); !c.ok() && failed.ok()) {
    failed = c;
  }
  return failed;
}

Status Db::ResetToSnapshot(const std::string& path) {
  if (!wal_) return Status::InvalidArgument("an in-memory Db has no snapshot to reset to");
  RecoveredState state;
  SnapshotInfo info;
  if (!path.empty()) {
    auto loaded = LoadSnapshotState(env_, path, options_.graph, options_.feed, &info);
    if (!loaded.ok()) return loaded.status();
    state = std::move(*loaded);
    state.feed->RecomputeCelebrities(*state.graph);
  } else {
    state.graph = std::make_unique<Graph>(options_.graph);
    state.feed = std::make_unique<Feed>(options_.feed, options_.graph.clock);
  }
  std::lock_guard one_at_a_time(snapshot_mu_);
  std::unique_lock lock(mu_);
  std::lock_guard feed_lock(feed_mu_);
  if (closed_) return Status(Code::kUnavailable, "the database is closed");
  RELGRAPH_RETURN_IF_ERROR(wal_->Close());
  // Kept, closed: calls that read the WAL's positions without the lock (last_lsn, VisibleLsn)
  // may still hold it. One per reset, a few hundred bytes each.
  retired_wals_.push_back(std::move(wal_));
  // Without a WAL, Db would act as an in-memory one: until the new WAL is open, it is closed.
  closed_ = true;
  auto segments = ListWalSegments(env_, dir_);
  if (!segments.ok()) return segments.status();
  const uint64_t next_segment = segments->empty() ? 1 : segments->back() + 1;
  // From here a failure leaves the Db closed (writes fail with kUnavailable) until a restart,
  // which recovers whatever this left on disk.
  for (uint64_t no : *segments) {
    RELGRAPH_RETURN_IF_ERROR(env_->RemoveFile(JoinPath(dir_, WalSegmentName(no))));
  }
  auto snapshots = ListNumberedFiles(env_, dir_, FileType::kSnapshot);
  if (!snapshots.ok()) return snapshots.status();
  for (uint64_t lsn : *snapshots) {
    RELGRAPH_RETURN_IF_ERROR(env_->RemoveFile(JoinPath(dir_, SnapshotName(lsn))));
  }
  if (!path.empty()) {
    RELGRAPH_RETURN_IF_ERROR(env_->Rename(path, JoinPath(dir_, SnapshotName(info.lsn))));
  }
  RELGRAPH_RETURN_IF_ERROR(env_->SyncDir(dir_));
  graph_ = std::move(state.graph);
  feed_ = std::move(state.feed);
  cursors_ = std::move(state.cursors);
  epochs_ = std::move(state.epochs);
  inbound_ = std::move(state.inbound);
  RELGRAPH_RETURN_IF_ERROR(OpenWal(next_segment, info.lsn + 1));
  closed_ = false;
  oldest_wal_lsn_.store(info.lsn + 1, std::memory_order_release);
  return Status::OK();
}

Result<Epoch> Db::StartEpoch() {
  if (!wal_) return Status::InvalidArgument("an in-memory Db has no replication history");
  std::random_device random;
  const uint64_t id = ((uint64_t{random()} << 32) ^ random()) | 1;  // nonzero: epoch 1 has 0
  const TimestampMs now = NowMs();
  Epoch next;
  {
    std::unique_lock lock(mu_);
    RELGRAPH_RETURN_IF_ERROR(WritableLocked("writes refused"));
    next = Epoch{epochs_.current().number + 1, id, wal_->last_lsn() + 1, now};
    auto l = Log(WalRecordType::kEpoch, EncodeEpochRecord(next.number, next.id, now).view());
    if (!l.ok()) return l.status();
    RELGRAPH_RETURN_IF_ERROR(epochs_.Apply(next.number, next.id, *l, now));
  }
  RELGRAPH_RETURN_IF_ERROR(wal_->Flush(/*sync=*/true));
  return next;
}

Epoch Db::epoch() const {
  std::shared_lock lock(mu_);
  return epochs_.current();
}

std::vector<Epoch> Db::epochs() const {
  std::shared_lock lock(mu_);
  return epochs_.epochs();
}

Status Db::CheckFollower(uint64_t number, uint64_t id, uint64_t last_lsn) const {
  std::shared_lock lock(mu_);
  RELGRAPH_RETURN_IF_ERROR(epochs_.CheckFollower(number, id, last_lsn));
  const uint64_t newest = wal_ ? wal_->last_lsn() : 0;
  if (last_lsn > newest) {
    return Status(Code::kDiverged, "the replica holds LSNs up to " + std::to_string(last_lsn) +
                                       ", past this primary's newest (" + std::to_string(newest) +
                                       "): it has records this primary never had");
  }
  return Status::OK();
}

}  // namespace relgraph
