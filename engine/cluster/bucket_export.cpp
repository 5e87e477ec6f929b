// ExportMovingUsers (engine/cluster/bucket_move.h): the state of the users a shard hands to
// another, read in slices.
#include <algorithm>
#include <iterator>

#include "engine/cluster/bucket_move.h"

namespace relgraph {

// Listed in slices, each under the shared lock (and the feed's mutex), so that the shard's
// writers wait for one slice at a time, not for the whole listing. Slices may see different
// states only where this shard's staying users change their relations to the moving ones:
// nothing else about the moving users is decided or applied here once they are handed over
// (docs/cluster.md, "Moving a bucket"). Each such change also goes to the new owner, whose
// inbox applies it after this state, by its ensure form: whichever version a slice lists,
// the new owner ends with the newest. The phases stay in MoveIn's order.
Result<std::vector<Db::MovedState>> ExportMovingUsers(const Db& db,
                                                      const std::function<bool(UserId)>& moving) {
  using MovedState = Db::MovedState;
  constexpr uint32_t kSliceEntries = 4096;  // list entries read per hold
  const auto no_steps = db.PauseSteps();    // no removal or switch half done
  std::vector<MovedState> out;
  std::vector<MovedState> listed;  // a slice's, moved to `out` outside the lock (out grows)
  const TimestampMs now = db.Now();
  auto add = [&](WalRecordType type, std::string_view payload) {
    listed.push_back({type, std::string(payload)});
  };
  // Calls slice(graph, feed, budget) under the locks until it returns true (done).
  bool first = true;
  auto in_slices = [&](auto&& slice) {
    for (bool done = false; !done; first = false) {
      if (!first) db.BetweenSteps();
      done = db.ReadFeed(
          [&](const Graph& g, const Feed& feed) { return slice(g, feed, kSliceEntries); });
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
      following.ForEach([&](const EdgeEntry& e) {
        add(WalRecordType::kFollow,
            EncodeFollowRecord(x, g.ExternalOf(e.peer), g.time().Answered(EntryTs(e)), 0).view());
      });
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
          add(WalRecordType::kFollow,
              EncodeFollowRecord(fan, x, g.time().Answered(EntryTs(buf[k])), 0).view());
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

}  // namespace relgraph
