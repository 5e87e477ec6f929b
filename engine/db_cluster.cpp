// Db's cluster members (engine/db.h, "cluster shards"; docs/cluster.md): applying the changes
// other shards decided.
//
// Why ensure forms: every shard holds each edge that touches one of its users, both sides of
// it. A change is decided on one shard (a follow on the follower's) and sent to the shard of
// the other user it touches, where it must establish the decided outcome whatever it meets:
// the same change again (JetStream redelivers what was not acknowledged), or, for a record
// the position below did not filter, an edge already in place. So each is applied by its
// idempotent replay form and logged as one remote record (WAL type 19) together with the
// position it reaches: the change and "applied up to here" are durable together, and a
// redelivered change is skipped by its LSN without being looked at.
#include "engine/db.h"
#include "engine/durable/wal_records.h"

namespace relgraph {
namespace {

// Every fan of `u`, as external ids, newest first. REQUIRES: the graph locked.
std::vector<UserId> FanIdsOf(const Graph& g, InternalId u) {
  std::vector<UserId> fans;
  fans.reserve(g.FanCountOf(u));
  EdgeEntry buf[256];
  std::optional<EntryKey> after;
  for (uint32_t n; (n = g.FansBefore(u, after, 256, buf)) > 0;) {
    for (uint32_t i = 0; i < n; ++i) fans.push_back(g.ExternalOf(buf[i].peer));
    after = g.KeyOf(buf[n - 1]);
  }
  return fans;
}

}  // namespace

Status Db::ApplyRemoteOpLocked(const WalOp& op, bool decide, uint64_t* post_conflicts) {
  Graph& g = *graph_;
  Feed& feed = *feed_;
  auto conflicts = [post_conflicts](uint64_t n) {
    if (post_conflicts != nullptr) *post_conflicts += n;
  };
  // An operation running in steps here (removing or switching a user it names) meets this
  // change as if finished (Graph::Settle), before anything here decides about it.
  if (op.is_access_op() || op.type == WalRecordType::kFollow ||
      op.type == WalRecordType::kUnfollow || op.type == WalRecordType::kRemoveUser) {
    g.Settle(op.a, op.type == WalRecordType::kRemoveUser ? 0 : op.b);
  }
  if (op.is_access_op()) return ApplyRemoteAccessLocked(op, decide);
  switch (op.type) {
    // The author's shard decided these; the copies here follow in its order, with fan-out to
    // the fans held here as for a local change (docs/cluster.md, "Feeds").
    case WalRecordType::kPublish: {
      auto kept = feed.EnsurePublished(g, op.a, op.b, op.ts, op.kind, op.evicted, /*live=*/true);
      if (!kept.ok()) return kept.status();
      if (!*kept) conflicts(1);
      wake_fanout_after_remote_ = true;
      return Status::OK();
    }
    case WalRecordType::kDeletePost:
      wake_fanout_after_remote_ = true;
      return feed.EnsureDeleted(g, op.a, op.b, /*live=*/true);
    case WalRecordType::kPosts: {
      auto skipped = feed.ReplacePosts(g, op.a, op.PostsOf(), /*live=*/true);
      if (!skipped.ok()) return skipped.status();
      conflicts(*skipped);
      return Status::OK();
    }
    case WalRecordType::kHide:
    case WalRecordType::kUnhide:
      return feed.ApplyHide(g, op.a, op.b, op.type == WalRecordType::kHide);
    case WalRecordType::kFollow:
    case WalRecordType::kUnfollow:
      return ApplyEdgeEnsureLocked(op);
    case WalRecordType::kRemoveUser: {
      // Each edge is decided on its follower's shard. The removed user's own follows were
      // decided on its shard, which removed them; the follows *of* it held here are this
      // shard's to end, so it decides an unfollow for each, logged as its own change and sent
      // back like any other. A follow of the user that this shard decided before the removal
      // reached it, and that reached the user's shard after the removal, is so undone there
      // too: both shards end without the edge, in the same order of events. (A replica
      // does not decide: its primary's unfollows come before this record.)
      if (const InternalId removed = g.FindUser(op.a); decide && removed != kNoInternalId) {
        for (UserId fan : FanIdsOf(g, removed)) {
          RELGRAPH_RETURN_IF_ERROR(LogUnfollowLocked(fan, op.a));
        }
        RELGRAPH_RETURN_IF_ERROR(DecideForRemoteRemovalLocked(op.a));
      }
      const std::vector<InternalId> followees = feed.BeforeRemoveUser(g, op.a);
      Status s = g.ApplyRemoveUser(op.a);
      feed.AfterRemoveUser(g, followees);
      return s;
    }
    case WalRecordType::kPostsWanted:
      return Status::OK();  // nothing changes here; the outbox answers with a back-fill
    default:
      return Status(Code::kInternal, "record type " + std::to_string(static_cast<int>(op.type)) +
                                         " is not applied remotely");
  }
}

Status Db::ApplyEdgeEnsureLocked(const WalOp& op) {
  Graph& g = *graph_;
  Feed& feed = *feed_;
  const Graph::ReplayOp replay = op.graph_op();  // its ensure form: op is remote or moved
  return g.ApplyBatch({&replay, 1}, Graph::ReplayMode::kEnsure,
                      [&feed, &g](const Graph::ReplayOp& o, InternalId a, InternalId b) {
                        if (o.kind == Graph::ReplayOp::kFollow) {
                          feed.OnFollow(g, a, b);
                        } else {
                          feed.OnUnfollow(g, a, b);
                        }
                      });
}

Result<Db::RemoteApplied> Db::ApplyRemote(uint32_t origin,
                                          std::span<const ReplicatedRecord> records,
                                          uint64_t* commit_lsn) {
  if (commit_lsn != nullptr) *commit_lsn = 0;
  for (size_t i = 1; i < records.size(); ++i) {
    if (records[i].lsn <= records[i - 1].lsn) {
      return Status::InvalidArgument("remote records from shard " + std::to_string(origin) +
                                     " out of order: LSN " + std::to_string(records[i].lsn) +
                                     " after " + std::to_string(records[i - 1].lsn));
    }
  }
  RemoteApplied out;
  uint64_t lsn = 0;
  Status failed;
  {
    std::unique_lock lock(mu_);
    std::lock_guard feed_lock(feed_mu_);
    RELGRAPH_RETURN_IF_ERROR(WritableLocked("remote changes refused"));
    for (const ReplicatedRecord& r : records) {
      if (r.lsn == 0) {
        failed = Status::InvalidArgument("a remote record from shard " + std::to_string(origin) +
                                         " with LSN 0");
        break;
      }
      if (r.lsn <= inbound_.Of(origin)) {  // applied before: a redelivery
        ++out.skipped;
        continue;
      }
      const auto type = static_cast<WalRecordType>(r.type);
      if (r.type < 1 || r.type > kMaxWalRecordType || !IsRemoteApplicable(type)) {
        failed = Status::InvalidArgument("shard " + std::to_string(origin) + " LSN " +
                                         std::to_string(r.lsn) + ": record type " +
                                         std::to_string(r.type) + " is not one shards exchange");
        break;
      }
      if (r.payload.size() > MaxRemotePayload(type)) {
        failed = Status::InvalidArgument("shard " + std::to_string(origin) + " LSN " +
                                         std::to_string(r.lsn) + ": a payload of " +
                                         std::to_string(r.payload.size()) + " bytes");
        break;
      }
      // Decoded from the record as it will be logged: what recovery will read back.
      const std::string record = EncodeRemoteRecord(origin, r.lsn, type, r.payload);
      auto op = DecodeWalRecord(static_cast<uint8_t>(WalRecordType::kRemote), record);
      if (!op.ok()) {
        failed = Status::InvalidArgument("shard " + std::to_string(origin) + " LSN " +
                                         std::to_string(r.lsn) + ": " + op.status().message());
        break;
      }
      if (Status s = ApplyRemoteOpLocked(*op, /*decide=*/true, &out.post_conflicts); !s.ok()) {
        failed = Status(s.code(), "shard " + std::to_string(origin) + " LSN " +
                                      std::to_string(r.lsn) + ": " + s.message());
        break;
      }
      auto l = Log(WalRecordType::kRemote, record);
      if (!l.ok()) {
        failed = l.status();
        break;
      }
      if (*l != 0) lsn = *l;
      inbound_.Apply(origin, r.lsn);
      ++out.applied;
    }
  }
  if (wake_fanout_after_remote_.exchange(false) && options_.background_fanout) WakeFanout();
  if (commit_lsn != nullptr) {
    *commit_lsn = lsn;
  } else if (Status c = Commit(lsn); !c.ok() && failed.ok()) {
    failed = c;
  }
  if (!failed.ok()) return failed;
  return out;
}

void Db::SetPlacement(std::function<UserPlace(UserId)> place) {
  std::unique_lock lock(mu_);
  place_ = std::move(place);
}

bool Db::CopiesKeptLocked(InternalId author, InternalId except) const {
  const Graph& g = *graph_;
  if (author == kNoInternalId || g.FanCountOf(author) == 0) return false;
  return g.AnyFan(author, [&](InternalId fan) {
    return fan != except && PlaceOfLocked(g.ExternalOf(fan)) == UserPlace::kHere;
  });
}

Result<FollowOutcome> Db::NotifyFollowLocked(UserId a, UserId b, Result<FollowOutcome> r,
                                             uint8_t* cluster_flags) {
  *cluster_flags = 0;
  if (!r.ok() || !r->created || Has(r->relation, Relation::kRequested)) return r;
  Graph& g = *graph_;
  const InternalId follower = g.FindUser(a), followee = g.FindUser(b);
  feed_->OnFollow(g, follower, followee);
  if (!place_) return r;
  const UserPlace where = place_(b);
  if (DecidedHere(where) || CopiesKeptLocked(followee, follower)) return r;
  *cluster_flags = kFollowFirstRemoteFan;
  if (where == UserPlace::kHandedOver) {
    *cluster_flags |= kFollowOwnPostsKept;
    return r;
  }
  auto cleared = feed_->ReplacePosts(g, b, {}, /*live=*/true);
  if (!cleared.ok()) return cleared.status();
  return r;
}

std::vector<FeedEntry> Db::RetainedPosts(UserId author) const {
  std::shared_lock lock(mu_);
  std::lock_guard feed_lock(feed_mu_);
  return feed_->RetainedPosts(*graph_, author);
}

Db::FanSample Db::FansUpTo(UserId user, size_t max) const {
  std::shared_lock lock(mu_);
  FanSample out;
  const Graph& g = *graph_;
  const InternalId u = g.FindUser(user);
  if (u == kNoInternalId) return out;
  out.fan_count = g.FanCountOf(u);
  if (out.fan_count <= max) out.fans = FanIdsOf(g, u);
  return out;
}

Status Db::SyncThrough(uint64_t lsn) {
  if (lsn == 0 || !wal_) return Status::OK();
  if (options_.durability == DurabilityMode::kAlways) return Commit(lsn);  // group commit
  if (wal_->durable_lsn() >= lsn) return Status::OK();
  return wal_->Flush(/*sync=*/true);
}

uint64_t Db::InboundPosition(uint32_t origin) const {
  std::shared_lock lock(mu_);
  return inbound_.Of(origin);
}

std::map<uint32_t, uint64_t> Db::InboundPositionsNow() const {
  std::shared_lock lock(mu_);
  return inbound_.all();
}

}  // namespace relgraph
