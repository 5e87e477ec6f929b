// Db's writes: each takes the exclusive lock through MutateFor (engine/db_mutate.h), checks
// under it that this node decides for the user who makes the change (DecidesLocked), applies
// the change to the graph or the feed, and logs its record. The reads, recovery and the seam
// of the rooms that apply records are in db.cpp.
#include <optional>
#include <utility>
#include <vector>

#include "engine/cluster/shard_decisions.h"
#include "engine/db.h"
#include "engine/db_mutate.h"
#include "engine/graph/write_ahead.h"

namespace relgraph {

using namespace db_mutate;  // the records mutations log

// ---- graph ------------------------------------------------------------------------------------

Status Db::DecidesLocked(UserId user) const {
  if (!place_ || DecidedHere(place_(user))) return Status::OK();
  return Status(Code::kMoving, "user " + std::to_string(user) +
                                   " is being handed over to another shard; retry shortly");
}

Result<FollowOutcome> Db::Follow(UserId a, UserId b, uint64_t* commit_lsn) {
  uint8_t cluster_flags = 0;
  return MutateFor<FollowOutcome>(
      a, [&](Graph& g) { return NotifyFollowLocked(a, b, g.Follow(a, b), &cluster_flags); },
      FollowRecord(a, b, cluster_flags), commit_lsn);
}

Result<FollowOutcome> Db::FollowAt(UserId a, UserId b, TimestampMs ts, uint64_t* commit_lsn) {
  uint8_t cluster_flags = 0;
  return MutateFor<FollowOutcome>(
      a, [&](Graph& g) { return NotifyFollowLocked(a, b, g.FollowAt(a, b, ts), &cluster_flags); },
      FollowRecord(a, b, cluster_flags), commit_lsn);
}

Result<bool> Db::Unfollow(UserId a, UserId b, uint64_t* commit_lsn) {
  return MutateFor<bool>(
      a, [&](Graph& g) { return UnfollowAndNotify(g, *feed_, a, b); },
      UnfollowRecord(a, b, NowMs()), commit_lsn);
}

void Db::WriteBatch(std::span<const BatchWrite> writes, std::span<BatchWriteResult> results,
                    uint64_t* commit_lsn) {
  if (commit_lsn != nullptr) *commit_lsn = 0;
  std::vector<std::pair<WalRecordType, WalPayload>> made;  // the records, in order
  std::vector<size_t> logged;                              // whose write made each
  made.reserve(writes.size());
  logged.reserve(writes.size());
  uint64_t lsn = 0;
  {
    std::unique_lock lock(mu_);
    std::lock_guard feed_lock(feed_mu_);
    if (Status s = WritableLocked("writes refused"); !s.ok()) {
      for (BatchWriteResult& r : results) r.status = s;
      return;
    }
    Graph& g = *graph_;
    const TimestampMs now = NowMs();
    Graph::WriteAhead ahead(g);
    for (size_t i = 0; i < writes.size(); ++i) {
      ahead.Advance(i, writes.size(), [&](size_t j) {
        return std::pair{writes[j].a, writes[j].b};
      });
      const BatchWrite& w = writes[i];
      BatchWriteResult& out = results[i];
      MaybeRecord record;
      if (out.status = DecidesLocked(w.a); !out.status.ok()) continue;
      if (w.kind == BatchWrite::Kind::kFollow) {
        uint8_t cluster_flags = 0;
        auto r = NotifyFollowLocked(
            w.a, w.b,
            w.ts ? g.FollowAt(w.a, w.b, *w.ts, ahead.Known(i)) : g.Follow(w.a, w.b, ahead.Known(i)),
            &cluster_flags);
        out.status = r.status();
        if (!r.ok()) continue;
        out.follow = *r;
        record = FollowRecord(w.a, w.b, cluster_flags)(*r);
      } else {
        auto r = UnfollowAndNotify(g, *feed_, w.a, w.b);
        out.status = r.status();
        if (!r.ok()) continue;
        out.removed = *r;
        record = UnfollowRecord(w.a, w.b, now)(*r);
      }
      if (record) {
        made.push_back(*record);
        logged.push_back(i);
      }
    }
    WakeIdGrowthLocked();
    if (wal_ && !made.empty()) {
      std::vector<WalWriter::Record> records;
      records.reserve(made.size());
      for (const auto& [type, payload] : made) {
        records.push_back({static_cast<uint8_t>(type), payload.view()});
      }
      auto appended = wal_->AppendBatch(records);
      if (!appended.ok()) {
        for (size_t i : logged) results[i].status = appended.status();
        return;
      }
      lsn = *appended;
    }
  }
  if (Status s = CommitOrHandOver(lsn, commit_lsn); !s.ok()) {
    for (size_t i : logged) results[i].status = s;
  }
}

// The record is logged with the first step; recovery and replicas replay it whole
// (Graph::RemoveUser), before the writes logged after it, which the steps' settling rules make
// meet the finished state (engine/graph/graph_steps.cpp).
Result<uint64_t> Db::RemoveUser(UserId a, uint64_t* commit_lsn) {
  std::lock_guard one_in_steps(steps_mu_);
  auto r = Mutate<uint64_t>(
      [&](Graph& g) -> Result<uint64_t> {
        // Not MutateFor: user 0's own error comes first, before the feed hears of it.
        if (a == 0) return g.BeginRemoveUser(a);
        RELGRAPH_RETURN_IF_ERROR(DecidesLocked(a));
        const std::vector<InternalId> followees = feed_->BeforeRemoveUser(g, a);
        auto begun = g.BeginRemoveUser(a);
        feed_->AfterRemoveUser(g, followees);
        return begun;
      },
      [&](uint64_t) -> MaybeRecord {
        return {{WalRecordType::kRemoveUser, EncodeRemoveUserRecord(a, NowMs())}};
      },
      commit_lsn);
  if (!r.ok()) return r;
  return *r + RunStepsToEnd().edges_removed;
}

Graph::EdgeHook Db::FeedHook(Graph& g) {
  return [&g, feed = feed_.get()](InternalId a, InternalId b, bool created) {
    created ? feed->OnFollow(g, a, b) : feed->OnUnfollow(g, a, b);
  };
}

Result<BlockOutcome> Db::Block(UserId a, UserId b, uint64_t* commit_lsn) {
  return MutateFor<BlockOutcome>(
      a, [&](Graph& g) { return g.Block(a, b, FeedHook(g)); },
      [&](const BlockOutcome& o) -> MaybeRecord {
        if (!o.created) return std::nullopt;
        return {{WalRecordType::kBlock, EncodeBlockRecord(a, b, o.ts, BlockRecordFlags(o))}};
      },
      commit_lsn);
}

Result<bool> Db::Unblock(UserId a, UserId b, uint64_t* commit_lsn) {
  return MutateFor<bool>(
      a, [&](Graph& g) { return g.Unblock(a, b); },
      PairRecord(WalRecordType::kUnblock, a, b, NowMs()), commit_lsn);
}

Result<SetPrivateOutcome> Db::SetPrivate(UserId a, bool on, uint64_t* commit_lsn) {
  std::lock_guard one_in_steps(steps_mu_);
  auto r = MutateFor<SetPrivateOutcome>(
      a, [&](Graph& g) { return g.SetPrivateInSteps(a, on, FeedHook(g)); },
      [&](const SetPrivateOutcome& o) -> MaybeRecord {
        if (!o.changed) return std::nullopt;
        return {{WalRecordType::kSetPrivate, EncodeSetPrivateRecord(a, o.ts, on)}};
      },
      commit_lsn);
  if (r.ok() && r->changed && !on) r->approved = RunStepsToEnd().approved;
  return r;
}

Result<FollowOutcome> Db::Approve(UserId target, UserId requester, uint64_t* commit_lsn) {
  return MutateFor<FollowOutcome>(
      target, [&](Graph& g) { return g.Approve(target, requester, FeedHook(g)); },
      [&](const FollowOutcome& o) -> MaybeRecord {
        const uint8_t flags = Has(o.relation, Relation::kMutual) ? kFollowBecameFriends : 0;
        return {
            {WalRecordType::kApprove, EncodeBlockRecord(target, requester, o.followed_at, flags)}};
      },
      commit_lsn);
}

Result<bool> Db::Reject(UserId target, UserId requester, uint64_t* commit_lsn) {
  return MutateFor<bool>(
      target, [&](Graph& g) { return g.Reject(target, requester); },
      PairRecord(WalRecordType::kReject, target, requester, NowMs()), commit_lsn);
}

Result<bool> Db::Withdraw(UserId requester, UserId target, uint64_t* commit_lsn) {
  return MutateFor<bool>(
      requester, [&](Graph& g) { return g.Withdraw(requester, target); },
      PairRecord(WalRecordType::kWithdraw, requester, target, NowMs()), commit_lsn);
}

Result<FollowOutcome> Db::NotifyFollowLocked(UserId a, UserId b, Result<FollowOutcome> r,
                                             uint8_t* cluster_flags) {
  *cluster_flags = 0;
  if (!r.ok() || !r->created || Has(r->relation, Relation::kRequested)) return r;
  Graph& g = *graph_;
  const InternalId follower = g.FindUser(a), followee = g.FindUser(b);
  feed_->OnFollow(g, follower, followee);
  if (!place_) return r;  // a single node
  LockedDb locked = Locked();
  auto flags = FirstRemoteFanFlags(locked, b, follower, followee);
  if (!flags.ok()) return flags.status();
  *cluster_flags = *flags;
  return r;
}

// ---- feed -------------------------------------------------------------------------------------

Result<PublishOutcome> Db::Publish(UserId author, PostId post, uint32_t kind,
                                   std::optional<TimestampMs> ts, uint64_t* commit_lsn) {
  auto r = MutateFor<PublishOutcome>(
      author,
      [&](Graph& g) -> Result<PublishOutcome> {
        if (g.IsBeingRemoved(author)) {
          return Status(Code::kUnavailable, "user " + std::to_string(author) + " is being removed");
        }
        return feed_->Publish(g, author, post, kind, ts);
      },
      [&](const PublishOutcome& o) -> MaybeRecord {
        if (!o.retained) return std::nullopt;
        return {{WalRecordType::kPublish,
                 EncodePublishRecord(author, post, o.ts, static_cast<uint8_t>(kind), o.evicted)}};
      },
      commit_lsn);
  if (r.ok() && r->retained) WakeFanout();
  return r;
}

Status Db::DeletePost(UserId author, PostId post, uint64_t* commit_lsn) {
  auto r = MutateFor<bool>(
      author,
      [&](Graph& g) -> Result<bool> {
        RELGRAPH_RETURN_IF_ERROR(feed_->DeletePost(g, author, post));
        return true;
      },
      [&](bool) -> MaybeRecord {
        return {{WalRecordType::kDeletePost, EncodePairRecord(author, post, NowMs())}};
      },
      commit_lsn);
  if (!r.ok()) return r.status();
  WakeFanout();
  return Status::OK();
}

Result<bool> Db::Mute(UserId user, UserId other, bool on, uint64_t* commit_lsn) {
  return MutateFor<bool>(
      user, [&](Graph& g) { return feed_->Mute(g, user, other, on); },
      PairRecord(on ? WalRecordType::kMute : WalRecordType::kUnmute, user, other, NowMs()),
      commit_lsn);
}

Result<bool> Db::Hide(UserId author, UserId from, bool on, uint64_t* commit_lsn) {
  return MutateFor<bool>(
      author, [&](Graph& g) { return feed_->Hide(g, author, from, on); },
      PairRecord(on ? WalRecordType::kHide : WalRecordType::kUnhide, author, from, NowMs()),
      commit_lsn);
}

}  // namespace relgraph
