#include "engine/cluster/shard_decisions.h"

namespace relgraph {

// Every fan of `u`, as external ids, newest first.
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

bool CopiesKept(const LockedDb& db, InternalId author, InternalId except) {
  const Graph& g = db.graph;
  if (author == kNoInternalId || g.FanCountOf(author) == 0) return false;
  return g.AnyFan(author, [&](InternalId fan) {
    return fan != except && db.PlaceOf(g.ExternalOf(fan)) == UserPlace::kHere;
  });
}

Status LogUnfollow(LockedDb& db, UserId a, UserId b) {
  Graph& g = db.graph;
  auto gone = g.Unfollow(a, b);
  if (!gone.ok()) return gone.status();
  if (!*gone) return Status::OK();
  db.feed.OnUnfollow(g, g.FindUser(a), g.FindUser(b));
  return db.Log(WalRecordType::kUnfollow, EncodePairRecord(a, b, db.Now()).view()).status();
}

Status LogWithdraw(LockedDb& db, UserId requester, UserId target) {
  RELGRAPH_RETURN_IF_ERROR(db.graph.Withdraw(requester, target).status());
  return db.Log(WalRecordType::kWithdraw, EncodePairRecord(requester, target, db.Now()).view())
      .status();
}

Status WantPosts(LockedDb& db, UserId author) {
  auto cleared = db.feed.ReplacePosts(db.graph, author, {}, /*live=*/true);
  if (!cleared.ok()) return cleared.status();
  return db.Log(WalRecordType::kPostsWanted, EncodePostsWantedRecord(author, db.Now()).view())
      .status();
}

Result<uint8_t> FirstRemoteFanFlags(LockedDb& db, UserId b, InternalId follower,
                                    InternalId followee) {
  const UserPlace where = db.PlaceOf(b);
  if (DecidedHere(where) || CopiesKept(db, followee, follower)) return uint8_t{0};
  if (where == UserPlace::kHandedOver) return uint8_t{kFollowFirstRemoteFan | kFollowOwnPostsKept};
  auto cleared = db.feed.ReplacePosts(db.graph, b, {}, /*live=*/true);
  if (!cleared.ok()) return cleared.status();
  return uint8_t{kFollowFirstRemoteFan};
}

std::vector<FeedEntry> RetainedPostsOf(const Db& db, UserId author) {
  return db.ReadFeed(
      [&](const Graph& g, const Feed& feed) { return feed.RetainedPosts(g, author); });
}

Db::FanSample FansOf(const Db& db, UserId user, size_t max) {
  return db.Read([&](const Graph& g) {
    Db::FanSample out;
    const InternalId u = g.FindUser(user);
    if (u == kNoInternalId) return out;
    out.fan_count = g.FanCountOf(u);
    if (out.fan_count <= max) out.fans = FanIdsOf(g, u);
    return out;
  });
}

}  // namespace relgraph
