// How every Db mutation runs (engine/db.cpp's write path; private to it): refuse early once
// the WAL has failed, so memory never runs ahead of a WAL that can no longer catch up; decide +
// apply + append under the lock; commit outside it. And the record each kind of mutation logs:
// only calls that changed something are logged, with their decided outcome (time included),
// so replay decides nothing again.
//
// Thread-safety: Mutate takes Db's locks itself.
#pragma once

#include <optional>
#include <utility>

#include "engine/db.h"

namespace relgraph {

// `record` maps the outcome to the WAL record to write, or nullopt when nothing changed.
template <typename T, typename Apply, typename Record>
Result<T> Db::Mutate(Apply&& apply, Record&& record, uint64_t* commit_lsn) {
  if (commit_lsn != nullptr) *commit_lsn = 0;
  uint64_t lsn = 0;
  Result<T> r = Status(Code::kInternal, "unset");
  {
    std::unique_lock lock(mu_);
    std::lock_guard feed_lock(feed_mu_);
    RELGRAPH_RETURN_IF_ERROR(WritableLocked("writes refused"));
    r = apply(*graph_);
    WakeIdGrowthLocked();
    if (!r.ok()) return r;
    const std::optional<std::pair<WalRecordType, WalPayload>> rec = record(*r);
    if (!rec) return r;
    auto l = Log(rec->first, rec->second.view());
    if (!l.ok()) return l.status();
    lsn = *l;
  }
  RELGRAPH_RETURN_IF_ERROR(CommitOrHandOver(lsn, commit_lsn));
  return r;
}

template <typename T, typename Apply, typename Record>
Result<T> Db::MutateFor(UserId decider, Apply&& apply, Record&& record, uint64_t* commit_lsn) {
  return Mutate<T>(
      [&](Graph& g) -> Result<T> {
        RELGRAPH_RETURN_IF_ERROR(DecidesLocked(decider));
        return apply(g);
      },
      std::forward<Record>(record), commit_lsn);
}

namespace db_mutate {

using MaybeRecord = std::optional<std::pair<WalRecordType, WalPayload>>;

// A follow is logged only when it created the edge (or the request), with the time it was
// given, whether it made the two friends, and the cluster's flags (Db::NotifyFollowLocked).
inline auto FollowRecord(UserId a, UserId b, const uint8_t& cluster_flags) {
  return [a, b, &cluster_flags](const FollowOutcome& o) -> MaybeRecord {
    if (!o.created) return std::nullopt;
    if (Has(o.relation, Relation::kRequested)) {
      return {{WalRecordType::kRequest, EncodePairRecord(a, b, o.followed_at)}};
    }
    const uint8_t flags =
        (Has(o.relation, Relation::kMutual) ? kFollowBecameFriends : uint8_t{0}) | cluster_flags;
    return {{WalRecordType::kFollow, EncodeFollowRecord(a, b, o.followed_at, flags)}};
  };
}

// An unfollow, with the feed told when it removed the edge.
inline Result<bool> UnfollowAndNotify(Graph& g, Feed& feed, UserId a, UserId b) {
  auto r = g.Unfollow(a, b);
  if (r.ok() && *r) feed.OnUnfollow(g, g.FindUser(a), g.FindUser(b));
  return r;
}

// An unfollow is logged only when it removed the edge, with the engine's time.
inline auto UnfollowRecord(UserId a, UserId b, TimestampMs now) {
  return [a, b, now](bool removed) -> MaybeRecord {
    if (!removed) return std::nullopt;
    return {{WalRecordType::kUnfollow, EncodePairRecord(a, b, now)}};
  };
}

// A mute/unmute, hide/unhide, unblock, reject or withdraw is logged only when it changed
// something.
inline auto PairRecord(WalRecordType type, uint64_t a, uint64_t b, TimestampMs now) {
  return [=](bool changed) -> MaybeRecord {
    if (!changed) return std::nullopt;
    return {{type, EncodePairRecord(a, b, now)}};
  };
}

}  // namespace db_mutate
}  // namespace relgraph
