#include "engine/cluster/bucket_move.h"

#include <algorithm>

#include "engine/cluster/remote_applier.h"
#include "engine/cluster/shard_decisions.h"

namespace relgraph {
namespace {

// Whether a fan of `u` (kNoInternalId: none) satisfies `pred`. REQUIRES: the graph locked.
bool AnyFan(const Graph& g, InternalId u, const std::function<bool(UserId)>& pred) {
  return u != kNoInternalId && g.AnyFan(u, [&](InternalId fan) { return pred(g.ExternalOf(fan)); });
}

// Applies and logs a moved record of `type` for shard `shard`.
Status LogMoved(LockedDb& db, uint32_t shard, WalRecordType type, std::string_view payload) {
  const std::string record = EncodeMovedRecord(shard, type, payload);
  auto op = DecodeWalRecord(static_cast<uint8_t>(WalRecordType::kMoved), record);
  if (!op.ok()) return op.status();
  MoveApplier apply(db);
  RELGRAPH_RETURN_IF_ERROR(DispatchRecord(*op, apply));
  return db.Log(WalRecordType::kMoved, record).status();
}

}  // namespace

Status MoveApplier::Follow(const WalOp& op) {
  return ApplyEdgeEnsure(db_, op);
}

Status MoveApplier::Unfollow(const WalOp& op) {
  return ApplyEdgeEnsure(db_, op);
}

Status MoveApplier::Mute(const WalOp& op) {
  return db_.feed.ApplyMute(db_.graph, op.a, op.b, true);
}

Status MoveApplier::Unmute(const WalOp& op) {
  return db_.feed.ApplyMute(db_.graph, op.a, op.b, false);
}

Status MoveApplier::Hide(const WalOp& op) {
  return db_.feed.ApplyHide(db_.graph, op.a, op.b, true);
}

Status MoveApplier::Unhide(const WalOp& op) {
  return db_.feed.ApplyHide(db_.graph, op.a, op.b, false);
}

Status MoveApplier::Posts(const WalOp& op) {
  auto r = db_.feed.ReplacePosts(db_.graph, op.a, op.PostsOf(), /*live=*/true);
  return r.ok() ? Status::OK() : r.status();
}

Status MoveApplier::Access(const WalOp& op, Status (AccessReplay::*apply)(const WalOp&)) {
  return ApplyAccessEnsure(db_, op, apply);
}

Result<uint64_t> DropForeignState(Db& db, uint32_t to, const std::function<bool(UserId)>& kept) {
  // Listed under the shared lock, dropped in batches under the exclusive one, so that the
  // shard's writers wait for one batch at a time, not for the whole drop. Nothing comes
  // between: no change reaches this shard about two users it does not keep (changes go to
  // the shards of the users they touch), so what is listed stays droppable. Posts are the
  // exception (a user kept here may follow the author meanwhile): they are checked again.
  std::vector<Db::MovedState> drops;
  std::vector<UserId> authors;  // foreign authors with posts here and no kept fan, when listed
  db.ReadFeed([&](const Graph& g, const Feed& feed) {
    const TimestampMs now = db.Now();
    auto undo = [&](WalRecordType type, UserId a, UserId b) {
      drops.push_back({type, std::string(EncodePairRecord(a, b, now).view())});
    };
    std::vector<InternalId> foreign;
    for (InternalId i = 0; i < g.user_count(); ++i) {
      if (!kept(g.ExternalOf(i))) foreign.push_back(i);
    }
    g.ForEachBlock([&](UserId a, UserId b, TimestampMs) {
      if (!kept(a) && !kept(b)) undo(WalRecordType::kUnblock, a, b);
    });
    for (InternalId xi : foreign) {
      const UserId x = g.ExternalOf(xi);
      // An edge between two foreign users is in its follower's following list.
      const FollowingList& following = g.FollowingOf(xi);
      for (uint32_t k = 0; k < following.size(); ++k) {
        const UserId y = g.ExternalOf(following.PeerAt(k));
        if (!kept(y)) undo(WalRecordType::kUnfollow, x, y);
      }
    }
    g.ForEachRequest([&](UserId target, UserId requester, TimestampMs) {
      if (!kept(target) && !kept(requester)) undo(WalRecordType::kWithdraw, requester, target);
    });
    for (InternalId xi : foreign) {
      const UserId x = g.ExternalOf(xi);
      if (!feed.RetainedPosts(g, x).empty() && !AnyFan(g, xi, kept)) authors.push_back(x);
      if (auto mutes = feed.MutesOf(g, x); mutes.ok()) {
        for (UserId m : *mutes) undo(WalRecordType::kUnmute, x, m);
      }
      if (auto from = feed.HidesOf(g, x); from.ok()) {
        for (UserId f : *from) {
          if (!kept(f)) undo(WalRecordType::kUnhide, x, f);
        }
      }
    }
  });
  constexpr size_t kBatch = 1024;
  uint64_t dropped = 0;
  for (size_t at = 0; at < drops.size() + authors.size(); at += kBatch) {
    auto drop_batch = [&](LockedDb& locked) -> Status {
      for (size_t i = at; i < std::min(at + kBatch, drops.size() + authors.size()); ++i) {
        if (i < drops.size()) {
          RELGRAPH_RETURN_IF_ERROR(LogMoved(locked, to, drops[i].type, drops[i].payload));
          ++dropped;
          continue;
        }
        // Kept fans read the author's posts here: its copies stay.
        const UserId x = authors[i - drops.size()];
        if (locked.feed.RetainedPosts(locked.graph, x).empty() ||
            AnyFan(locked.graph, locked.graph.FindUser(x), kept)) {
          continue;
        }
        RELGRAPH_RETURN_IF_ERROR(
            LogMoved(locked, to, WalRecordType::kPosts, EncodePostsRecord(x, {})));
        ++dropped;
      }
      return Status::OK();
    };
    RELGRAPH_RETURN_IF_ERROR(db.RunExclusive("dropping users of other shards refused", drop_batch));
  }
  return dropped;
}

Status MoveUsersIn(Db& db, uint32_t from, std::span<const Db::MovedState> state,
                   const std::function<bool(UserId)>& moving) {
  return db.RunExclusive("a bucket move refused", [&](LockedDb& locked) -> Status {
    Graph& g = locked.graph;
    MoveApplier apply(locked);
    // A user of this shard that is not moving: what it decides is newer here.
    auto stays_here = [&](UserId u) { return !moving(u) && DecidedHere(locked.PlaceOf(u)); };
    std::vector<UserId> followees;  // of moving users, on other shards
    for (const Db::MovedState& m : state) {
      // Decoding checks the type is movable and the payload its own.
      const std::string record = EncodeMovedRecord(from, m.type, m.payload);
      auto op = DecodeWalRecord(static_cast<uint8_t>(WalRecordType::kMoved), record);
      if (!op.ok()) return Status::InvalidArgument("a bucket's state: " + op.status().message());
      if (RowOf(op->type).is(kRecordDecidedByFirst) && stays_here(op->a)) continue;
      if (op->type == WalRecordType::kFollow && moving(op->a) &&
          !DecidedHere(locked.PlaceOf(op->b))) {
        followees.push_back(op->b);
      }
      RELGRAPH_RETURN_IF_ERROR(DispatchRecord(*op, apply));
      RELGRAPH_RETURN_IF_ERROR(locked.Log(WalRecordType::kMoved, record).status());
    }
    // The copies of a remote author's posts are exact here only while a user that stays
    // follows it (its shard sends them since): otherwise they start over, and come back
    // whole from its shard.
    std::sort(followees.begin(), followees.end());
    followees.erase(std::unique(followees.begin(), followees.end()), followees.end());
    for (UserId y : followees) {
      if (!AnyFan(g, g.FindUser(y), stays_here)) RELGRAPH_RETURN_IF_ERROR(WantPosts(locked, y));
    }
    return Status::OK();
  });
}

}  // namespace relgraph
