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
#include <iterator>

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
  if (op.is_access_op() || op.type == WalRecordType::kFollow ||
      op.type == WalRecordType::kUnfollow) {
    g.Settle(op.a, op.b);  // as ApplyRemoteOpLocked
  }
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

// Listed in slices, each under the shared lock (and the feed's mutex), so that the shard's
// writers wait for one slice at a time, not for the whole listing. Slices may see different
// states only where this shard's staying users change their relations to the moving ones:
// nothing else about the moving users is decided or applied here once they are handed over
// (docs/cluster.md, "Moving a bucket"). Each such change also goes to the new owner, whose
// inbox applies it after this state, by its ensure form: whichever version a slice lists,
// the new owner ends with the newest. The phases stay in MoveIn's order.
Result<std::vector<Db::MovedState>> Db::ExportUsers(
    const std::function<bool(UserId)>& moving) const {
  constexpr uint32_t kSliceEntries = 4096;  // list entries read per hold
  std::lock_guard no_steps(steps_mu_);      // no removal or switch half done
  std::vector<MovedState> out;
  std::vector<MovedState> listed;  // a slice's, moved to `out` outside the lock (out grows)
  const TimestampMs now = NowMs();
  auto add = [&](WalRecordType type, std::string_view payload) {
    listed.push_back({type, std::string(payload)});
  };
  // Calls slice(graph, feed, budget) under the locks until it returns true (done).
  bool first = true;
  auto in_slices = [&](auto&& slice) {
    for (bool done = false; !done; first = false) {
      if (!first && options_.between_steps) options_.between_steps();
      {
        std::shared_lock lock(mu_);
        std::lock_guard feed_lock(feed_mu_);
        done = slice(*graph_, *feed_, kSliceEntries);
      }
      std::move(listed.begin(), listed.end(), std::back_inserter(out));
      listed.clear();
    }
  };
  // Runs per_user(graph, feed, user, budget) over `users` in slices; per_user returns the
  // entries it read, or 0 when it must be called again for the same user (budget spent).
  auto over_users = [&](const std::vector<UserId>& users, auto&& per_user) {
    size_t k = 0;
    in_slices([&](const Graph& g, const Feed& feed, uint32_t budget) {
      while (k < users.size() && budget > 0) {
        const uint32_t read = per_user(g, feed, users[k], budget);
        if (read == 0) return false;
        budget -= std::min(budget, read);
        ++k;
      }
      return k >= users.size();
    });
  };

  std::vector<UserId> users;
  InternalId next = 0;
  in_slices([&](const Graph& g, const Feed&, uint32_t budget) {
    const size_t end = std::min<size_t>(g.user_count(), size_t{next} + budget);
    for (; next < end; ++next) {
      if (moving(g.ExternalOf(next))) users.push_back(g.ExternalOf(next));
    }
    return next >= g.user_count();
  });
  // In the order MoveIn applies them: a request is kept only to a private account and across
  // no block, so marks and blocks come before edges and requests.
  over_users(users, [&](const Graph& g, const Feed&, UserId x, uint32_t) -> uint32_t {
    if (auto p = g.IsPrivate(x); p.ok() && *p) {
      add(WalRecordType::kSetPrivate, EncodeSetPrivateRecord(x, now, true).view());
    }
    return 1;
  });
  in_slices([&](const Graph& g, const Feed&, uint32_t) {  // O(blocks): they are few
    g.ForEachBlock([&](UserId a, UserId b, TimestampMs ts) {
      if (moving(a) || moving(b)) add(WalRecordType::kBlock, EncodeBlockRecord(a, b, ts, 0).view());
    });
    return true;
  });
  // Follows either way: the following list (bounded by the follow cap), then the fans, by a
  // cursor that a slice leaves where its budget ended.
  bool in_fans = false;
  std::optional<EntryKey> after;
  over_users(users, [&](const Graph& g, const Feed&, UserId x, uint32_t budget) -> uint32_t {
    const InternalId xi = g.FindUser(x);
    uint32_t read = 0;
    if (!in_fans) {
      const FollowingList& following = g.FollowingOf(xi);
      for (uint32_t k = 0; k < following.size(); ++k) {
        add(WalRecordType::kFollow,
            EncodeFollowRecord(x, g.ExternalOf(following.PeerAt(k)), following.TsAt(k), 0).view());
      }
      read += following.size();
      in_fans = true;
      after.reset();
    }
    EdgeEntry buf[256];
    for (uint32_t n; (n = g.FansBefore(xi, after, 256, buf)) > 0;) {
      for (uint32_t k = 0; k < n; ++k) {
        const UserId fan = g.ExternalOf(buf[k].peer);
        // A moving fan's follow is in its following list.
        if (!moving(fan)) {
          add(WalRecordType::kFollow, EncodeFollowRecord(fan, x, EntryTs(buf[k]), 0).view());
        }
      }
      after = g.KeyOf(buf[n - 1]);
      read += n;
      if (read >= budget) return 0;  // the same user's next fans in the next slice
    }
    in_fans = false;
    return std::max<uint32_t>(read, 1);
  });
  // Requests either way: those to x by pages (a cursor again), those x sent (bounded by the
  // follow cap) unless their account moves too (listed with it).
  std::optional<Cursor> page_after;
  over_users(users, [&](const Graph& g, const Feed&, UserId x, uint32_t budget) -> uint32_t {
    uint32_t read = 0;
    for (;;) {
      PageRequest q;
      q.limit = kMaxPageLimit;
      q.after = page_after;
      auto page = g.Requests(x, q);
      if (!page.ok()) break;
      for (const ListEntry& e : page->entries) {
        add(WalRecordType::kRequest, EncodePairRecord(e.user, x, e.ts).view());
      }
      read += page->entries.size();
      page_after = page->next;
      if (!page->next) break;
      if (read >= budget) return 0;
    }
    page_after.reset();
    for (const Graph::AccessItem& r : g.RequestsSentBy(x)) {
      if (!moving(r.owner)) add(WalRecordType::kRequest, EncodePairRecord(x, r.owner, r.ts).view());
      ++read;
    }
    return std::max<uint32_t>(read, 1);
  });
  over_users(users, [&](const Graph& g, const Feed& feed, UserId x, uint32_t) -> uint32_t {
    const std::vector<FeedEntry> posts = feed.RetainedPosts(g, x);
    add(WalRecordType::kPosts, EncodePostsRecord(x, posts));
    uint32_t read = 1 + posts.size();
    if (auto mutes = feed.MutesOf(g, x); mutes.ok()) {
      for (UserId m : *mutes) add(WalRecordType::kMute, EncodePairRecord(x, m, now).view());
      read += mutes->size();
    }
    return read;
  });
  // Hides a moving user made or is subject to: every author's, a slice of authors at a time.
  next = 0;
  in_slices([&](const Graph& g, const Feed& feed, uint32_t budget) {
    const size_t end = std::min<size_t>(g.user_count(), size_t{next} + budget);
    for (; next < end; ++next) {
      const UserId author = g.ExternalOf(next);
      auto from = feed.HidesOf(g, author);
      if (!from.ok()) continue;
      for (UserId f : *from) {
        if (moving(author) || moving(f)) {
          add(WalRecordType::kHide, EncodePairRecord(author, f, now).view());
        }
      }
    }
    return next >= g.user_count();
  });
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
