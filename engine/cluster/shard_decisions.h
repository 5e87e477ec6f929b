// What a cluster shard decides on its own users' behalf (docs/cluster.md, "Feeds", "Removals",
// "Blocks, private accounts and requests"): ends of edges and requests its users own, and the
// copies of other shards' authors' posts it keeps. Each decision is applied and logged as this
// shard's own change, which its outbox sends on like any other.
//
// Why decisions here: each edge belongs to its follower's shard and each request to its
// requester's, which alone decide changes to them. A change decided on the other user's shard
// reaches this one after changes this shard decided meanwhile may have crossed it, so where
// such a change ends something this shard's user owns, this shard decides that end itself:
// both shards then end in the same state, in an order both saw.
//
// Also the reads a shard's outbox makes (RetainedPostsOf, FansOf, declared in engine/db.h).
//
// Thread-safety: under the LockedDb's locks (Db::RunExclusive); the reads take Db's locks.
#pragma once

#include "engine/db.h"
#include "engine/locked_db.h"

namespace relgraph {

// Every fan of `u`, as external ids, newest first. REQUIRES: the graph locked.
std::vector<UserId> FanIdsOf(const Graph& g, InternalId u);
// Whether the author's shard sends this shard the posts of `author` (kNoInternalId: none): a
// fan of it other than `except` is settled here (kHere). Reads fans newest first until one is.
bool CopiesKept(const LockedDb& db, InternalId author, InternalId except);
// a -> b ends (when it exists), with the feed told, logged as this shard's unfollow.
Status LogUnfollow(LockedDb& db, UserId a, UserId b);
// The pending request requester -> target ends, logged as this shard's withdrawal.
Status LogWithdraw(LockedDb& db, UserId requester, UserId target);
// Clears the copies of remote `author`'s posts and logs a posts-wanted record, which its shard
// answers with a back-fill.
Status WantPosts(LockedDb& db, UserId author);
// A live follow follower -> followee (of user `b`) just created the edge: when `b` is not
// decided here and no other fan here is settled, the follow's record carries
// kFollowFirstRemoteFan, and the copies of its posts start over (cleared now), unless `b` is
// handed over (its posts here are its own: kFollowOwnPostsKept). Returns the record's flags.
Result<uint8_t> FirstRemoteFanFlags(LockedDb& db, UserId b, InternalId follower,
                                    InternalId followee);

}  // namespace relgraph
