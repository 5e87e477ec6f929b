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
#include <unordered_set>

#include "engine/db.h"
#include "engine/durable/recovery.h"
#include "engine/durable/wal_records.h"

namespace relgraph {
namespace {

void Add(std::vector<Db::MovedState>* out, WalRecordType type, const WalPayload& p) {
  out->push_back({type, std::string(p.view())});
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

Result<std::vector<Db::MovedState>> Db::MoveOut(uint32_t to,
                                                const std::function<bool(UserId)>& moving,
                                                const std::function<bool(UserId)>& kept) {
  std::vector<MovedState> out;
  uint64_t lsn = 0;
  {
    std::unique_lock lock(mu_);
    std::lock_guard feed_lock(feed_mu_);
    RELGRAPH_RETURN_IF_ERROR(WritableLocked("a bucket move refused"));
    Graph& g = *graph_;
    Feed& feed = *feed_;
    std::vector<UserId> users;
    for (InternalId i = 0; i < g.user_count(); ++i) {
      if (moving(g.ExternalOf(i))) users.push_back(g.ExternalOf(i));
    }
    // In the order MoveIn applies them: a request is kept only to a private account and
    // across no block, so marks and blocks come before edges and requests.
    const TimestampMs now = NowMs();
    g.ForEachPrivate([&](UserId u) {
      if (moving(u)) Add(&out, WalRecordType::kSetPrivate, EncodeSetPrivateRecord(u, now, true));
    });
    g.ForEachBlock([&](UserId a, UserId b, TimestampMs ts) {
      if (moving(a) || moving(b)) Add(&out, WalRecordType::kBlock, EncodeBlockRecord(a, b, ts, 0));
    });
    for (UserId x : users) {
      const InternalId xi = g.FindUser(x);
      const FollowingList& following = g.FollowingOf(xi);
      for (uint32_t k = 0; k < following.size(); ++k) {
        Add(&out, WalRecordType::kFollow,
            EncodeFollowRecord(x, g.ExternalOf(following.PeerAt(k)), following.TsAt(k), 0));
      }
      EdgeEntry buf[256];
      std::optional<EntryKey> after;
      for (uint32_t n; (n = g.FansBefore(xi, after, 256, buf)) > 0;) {
        for (uint32_t k = 0; k < n; ++k) {
          const UserId fan = g.ExternalOf(buf[k].peer);
          if (!moving(fan)) {  // a moving fan's follow is in its following list
            Add(&out, WalRecordType::kFollow, EncodeFollowRecord(fan, x, EntryTs(buf[k]), 0));
          }
        }
        after = g.KeyOf(buf[n - 1]);
      }
    }
    g.ForEachRequest([&](UserId target, UserId requester, TimestampMs ts) {
      if (moving(target) || moving(requester)) {
        Add(&out, WalRecordType::kRequest, EncodePairRecord(requester, target, ts));
      }
    });
    std::vector<std::pair<UserId, UserId>> hides;  // (author, from) with a moving side
    for (InternalId i = 0; i < g.user_count(); ++i) {
      const UserId author = g.ExternalOf(i);
      auto from = feed.HidesOf(g, author);
      if (!from.ok()) continue;
      for (UserId f : *from) {
        if (moving(author) || moving(f)) hides.emplace_back(author, f);
      }
    }
    for (UserId x : users) {
      out.push_back({WalRecordType::kPosts, EncodePostsRecord(x, feed.RetainedPosts(g, x))});
      auto mutes = feed.MutesOf(g, x);
      if (mutes.ok()) {
        for (UserId m : *mutes) Add(&out, WalRecordType::kMute, EncodePairRecord(x, m, now));
      }
    }
    for (const auto& [author, from] : hides) {
      Add(&out, WalRecordType::kHide, EncodePairRecord(author, from, now));
    }

    // What only the moving users needed goes, in the same critical section: from here on
    // this shard holds only its kept users' side of them.
    auto drop = [&](WalRecordType type, std::string_view payload) -> Status {
      return LogMovedLocked(to, type, payload);
    };
    Status s;
    for (const MovedState& m : out) {
      if (!s.ok()) break;
      auto op = m.type == WalRecordType::kPosts
                    ? DecodeWalRecord(static_cast<uint8_t>(WalRecordType::kMoved),
                                      EncodeMovedRecord(to, m.type, m.payload))
                    : DecodeWalRecord(static_cast<uint8_t>(m.type), m.payload);
      if (!op.ok()) return op.status();
      const UserId a = op->a, b = op->b;
      switch (m.type) {
        case WalRecordType::kFollow:
          if (!kept(a) && !kept(b))
            s = drop(WalRecordType::kUnfollow, EncodePairRecord(a, b, now).view());
          break;
        case WalRecordType::kBlock:
          if (!kept(a) && !kept(b))
            s = drop(WalRecordType::kUnblock, EncodePairRecord(a, b, now).view());
          break;
        case WalRecordType::kRequest:  // a = requester
          if (!kept(a) && !kept(b))
            s = drop(WalRecordType::kWithdraw, EncodePairRecord(a, b, now).view());
          break;
        case WalRecordType::kMute:
          s = drop(WalRecordType::kUnmute, EncodePairRecord(a, b, now).view());
          break;
        case WalRecordType::kHide:
          if (!kept(a) && !kept(b))
            s = drop(WalRecordType::kUnhide, EncodePairRecord(a, b, now).view());
          break;
        case WalRecordType::kPosts: {
          // Kept fans read the author's posts here still: its copies stay.
          bool kept_fan = false;
          const InternalId ai = g.FindUser(a);
          EdgeEntry buf[256];
          std::optional<EntryKey> after;
          for (uint32_t n; !kept_fan && (n = g.FansBefore(ai, after, 256, buf)) > 0;) {
            for (uint32_t k = 0; k < n && !kept_fan; ++k)
              kept_fan = kept(g.ExternalOf(buf[k].peer));
            after = g.KeyOf(buf[n - 1]);
          }
          if (!kept_fan && op->b > 0) s = drop(WalRecordType::kPosts, EncodePostsRecord(a, {}));
          break;
        }
        default:
          break;  // private marks stay: every shard holds every user's
      }
    }
    if (!s.ok()) return s;
    lsn = wal_ ? wal_->last_lsn() : 0;
  }
  RELGRAPH_RETURN_IF_ERROR(Commit(lsn));
  return out;
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
    auto stays_here = [&](UserId u) {
      return !moving(u) && (remote_user_ == nullptr || !remote_user_(u));
    };
    std::vector<UserId> followees;  // of moving users, on other shards
    for (const MovedState& m : state) {
      if (!IsMovable(m.type)) {
        return Status::InvalidArgument("record type " + std::to_string(static_cast<int>(m.type)) +
                                       " in a bucket's state");
      }
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
      if (op->type == WalRecordType::kFollow && moving(op->a) && remote_user_ != nullptr &&
          remote_user_(op->b)) {
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
      const InternalId yi = g.FindUser(y);
      bool followed_here = false;
      EdgeEntry buf[256];
      std::optional<EntryKey> after;
      for (uint32_t n;
           yi != kNoInternalId && !followed_here && (n = g.FansBefore(yi, after, 256, buf)) > 0;) {
        for (uint32_t k = 0; k < n && !followed_here; ++k) {
          followed_here = stays_here(g.ExternalOf(buf[k].peer));
        }
        after = g.KeyOf(buf[n - 1]);
      }
      if (!followed_here) RELGRAPH_RETURN_IF_ERROR(WantPostsLocked(y));
    }
    lsn = wal_ ? wal_->last_lsn() : 0;
  }
  return Commit(lsn);
}

}  // namespace relgraph
