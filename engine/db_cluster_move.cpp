// Db's bucket moves (engine/db.h, "bucket moves"; docs/cluster.md, "Moving a bucket"): the
// state of the users a shard hands to another, taken out on one side and brought in on the
// other, each piece logged as a moved record (WAL type 22).
//
// Why records of the existing types, applied by their ensure forms: recovery, replicas and
// the tests already know each one, and an ensure form establishes its outcome whatever it
// meets. The importing shard may hold part of the state already (edges with its own users)
// or receive changes to it later from the stream; applied again, the same record changes
// nothing, and a record that meets a newer state (a follow across a block) is skipped as a
// remote one is. What the importing shard's own users decided (their follows, blocks,
// requests, hides) is newer there than in any copy, so it is not imported.
#include <algorithm>

#include "engine/db.h"
#include "engine/durable/recovery.h"
#include "engine/durable/wal_records.h"

namespace relgraph {
namespace {

// Whether a fan of `u` (kNoInternalId: none) satisfies `pred`. REQUIRES: the graph locked.
bool AnyFan(const Graph& g, InternalId u, const std::function<bool(UserId)>& pred) {
  return u != kNoInternalId && g.AnyFan(u, [&](InternalId fan) { return pred(g.ExternalOf(fan)); });
}

}  // namespace

Status Db::ApplyMovedOpLocked(const WalOp& op) {
  Graph& g = *graph_;
  Feed& feed = *feed_;
  switch (op.type) {
    case WalRecordType::kFollow:
    case WalRecordType::kUnfollow:
      return ApplyEdgeEnsureLocked(op);
    case WalRecordType::kPosts: {
      auto r = feed.ReplacePosts(g, op.a, op.PostsOf(), /*live=*/true);
      return r.ok() ? Status::OK() : r.status();
    }
    case WalRecordType::kMute:
    case WalRecordType::kUnmute:
      return feed.ApplyMute(g, op.a, op.b, op.type == WalRecordType::kMute);
    case WalRecordType::kHide:
    case WalRecordType::kUnhide:
      return feed.ApplyHide(g, op.a, op.b, op.type == WalRecordType::kHide);
    default:
      if (op.is_access_op()) return ApplyAccessOp(op, g, FeedHook(g));
      return Status(Code::kInternal,
                    "record type " + std::to_string(static_cast<int>(op.type)) + " is not moved");
  }
}

Status Db::LogMovedLocked(uint32_t shard, WalRecordType type, std::string_view payload) {
  const std::string record = EncodeMovedRecord(shard, type, payload);
  auto op = DecodeWalRecord(static_cast<uint8_t>(WalRecordType::kMoved), record);
  if (!op.ok()) return op.status();
  RELGRAPH_RETURN_IF_ERROR(ApplyMovedOpLocked(*op));
  return Log(WalRecordType::kMoved, record).status();
}

Result<std::vector<Db::MovedState>> Db::ExportUsers(
    const std::function<bool(UserId)>& moving) const {
  std::vector<MovedState> out;
  std::shared_lock lock(mu_);
  std::lock_guard feed_lock(feed_mu_);
  const Graph& g = *graph_;
  const Feed& feed = *feed_;
  std::vector<UserId> users;
  for (InternalId i = 0; i < g.user_count(); ++i) {
    if (moving(g.ExternalOf(i))) users.push_back(g.ExternalOf(i));
  }
  const TimestampMs now = NowMs();
  auto add = [&](WalRecordType type, std::string_view payload) {
    out.push_back({type, std::string(payload)});
  };
  // In the order MoveIn applies them: a request is kept only to a private account and across
  // no block, so marks and blocks come before edges and requests.
  g.ForEachPrivate([&](UserId u) {
    if (moving(u)) add(WalRecordType::kSetPrivate, EncodeSetPrivateRecord(u, now, true).view());
  });
  g.ForEachBlock([&](UserId a, UserId b, TimestampMs ts) {
    if (moving(a) || moving(b)) add(WalRecordType::kBlock, EncodeBlockRecord(a, b, ts, 0).view());
  });
  for (UserId x : users) {
    const InternalId xi = g.FindUser(x);
    const FollowingList& following = g.FollowingOf(xi);
    for (uint32_t k = 0; k < following.size(); ++k) {
      add(WalRecordType::kFollow,
          EncodeFollowRecord(x, g.ExternalOf(following.PeerAt(k)), following.TsAt(k), 0).view());
    }
    EdgeEntry buf[256];
    std::optional<EntryKey> after;
    for (uint32_t n; (n = g.FansBefore(xi, after, 256, buf)) > 0;) {
      for (uint32_t k = 0; k < n; ++k) {
        const UserId fan = g.ExternalOf(buf[k].peer);
        // A moving fan's follow is in its following list.
        if (!moving(fan)) {
          add(WalRecordType::kFollow, EncodeFollowRecord(fan, x, EntryTs(buf[k]), 0).view());
        }
      }
      after = g.KeyOf(buf[n - 1]);
    }
  }
  g.ForEachRequest([&](UserId target, UserId requester, TimestampMs ts) {
    if (moving(target) || moving(requester)) {
      add(WalRecordType::kRequest, EncodePairRecord(requester, target, ts).view());
    }
  });
  for (UserId x : users) {
    add(WalRecordType::kPosts, EncodePostsRecord(x, feed.RetainedPosts(g, x)));
    auto mutes = feed.MutesOf(g, x);
    if (!mutes.ok()) continue;
    for (UserId m : *mutes) add(WalRecordType::kMute, EncodePairRecord(x, m, now).view());
  }
  for (InternalId i = 0; i < g.user_count(); ++i) {
    const UserId author = g.ExternalOf(i);
    auto from = feed.HidesOf(g, author);
    if (!from.ok()) continue;
    for (UserId f : *from) {
      if (moving(author) || moving(f)) {
        add(WalRecordType::kHide, EncodePairRecord(author, f, now).view());
      }
    }
  }
  return out;
}

Result<uint64_t> Db::DropForeign(uint32_t to, const std::function<bool(UserId)>& kept) {
  // Listed under the shared lock, dropped in batches under the exclusive one, so that the
  // shard's writers wait for one batch at a time, not for the whole drop. Nothing comes
  // between: no change reaches this shard about two users it does not keep (changes go to
  // the shards of the users they touch), so what is listed stays droppable. Posts are the
  // exception (a user kept here may follow the author meanwhile): they are checked again.
  std::vector<MovedState> drops;
  std::vector<UserId> authors;  // foreign authors with posts here and no kept fan, when listed
  {
    std::shared_lock lock(mu_);
    std::lock_guard feed_lock(feed_mu_);
    const Graph& g = *graph_;
    const Feed& feed = *feed_;
    const TimestampMs now = NowMs();
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
  }
  constexpr size_t kBatch = 1024;
  uint64_t dropped = 0;
  for (size_t at = 0; at < drops.size() + authors.size(); at += kBatch) {
    uint64_t lsn = 0;
    {
      std::unique_lock lock(mu_);
      std::lock_guard feed_lock(feed_mu_);
      RELGRAPH_RETURN_IF_ERROR(WritableLocked("dropping users of other shards refused"));
      for (size_t i = at; i < std::min(at + kBatch, drops.size() + authors.size()); ++i) {
        if (i < drops.size()) {
          RELGRAPH_RETURN_IF_ERROR(LogMovedLocked(to, drops[i].type, drops[i].payload));
          ++dropped;
          continue;
        }
        // Kept fans read the author's posts here: its copies stay.
        const UserId x = authors[i - drops.size()];
        if (feed_->RetainedPosts(*graph_, x).empty() ||
            AnyFan(*graph_, graph_->FindUser(x), kept)) {
          continue;
        }
        RELGRAPH_RETURN_IF_ERROR(
            LogMovedLocked(to, WalRecordType::kPosts, EncodePostsRecord(x, {})));
        ++dropped;
      }
      lsn = wal_ ? wal_->last_lsn() : 0;
    }
    RELGRAPH_RETURN_IF_ERROR(Commit(lsn));
  }
  return dropped;
}

Status Db::MoveIn(uint32_t from, std::span<const MovedState> state,
                  const std::function<bool(UserId)>& moving) {
  uint64_t lsn = 0;
  {
    std::unique_lock lock(mu_);
    std::lock_guard feed_lock(feed_mu_);
    RELGRAPH_RETURN_IF_ERROR(WritableLocked("a bucket move refused"));
    Graph& g = *graph_;
    // A user of this shard that is not moving: what it decides is newer here.
    auto stays_here = [&](UserId u) { return !moving(u) && DecidedHere(PlaceOfLocked(u)); };
    std::vector<UserId> followees;  // of moving users, on other shards
    for (const MovedState& m : state) {
      // Decoding checks the type is movable and the payload its own.
      const std::string record = EncodeMovedRecord(from, m.type, m.payload);
      auto op = DecodeWalRecord(static_cast<uint8_t>(WalRecordType::kMoved), record);
      if (!op.ok()) return Status::InvalidArgument("a bucket's state: " + op.status().message());
      switch (op->type) {
        case WalRecordType::kFollow:
        case WalRecordType::kBlock:
        case WalRecordType::kRequest:
        case WalRecordType::kHide:
          if (stays_here(op->a)) continue;
          break;
        default:
          break;
      }
      if (op->type == WalRecordType::kFollow && moving(op->a) &&
          !DecidedHere(PlaceOfLocked(op->b))) {
        followees.push_back(op->b);
      }
      RELGRAPH_RETURN_IF_ERROR(ApplyMovedOpLocked(*op));
      RELGRAPH_RETURN_IF_ERROR(Log(WalRecordType::kMoved, record).status());
    }
    // The copies of a remote author's posts are exact here only while a user that stays
    // follows it (its shard sends them since): otherwise they start over, and come back
    // whole from its shard.
    std::sort(followees.begin(), followees.end());
    followees.erase(std::unique(followees.begin(), followees.end()), followees.end());
    for (UserId y : followees) {
      if (!AnyFan(g, g.FindUser(y), stays_here)) RELGRAPH_RETURN_IF_ERROR(WantPostsLocked(y));
    }
    lsn = wal_ ? wal_->last_lsn() : 0;
  }
  return Commit(lsn);
}

}  // namespace relgraph
