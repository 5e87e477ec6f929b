// ReferenceModel: the follow graph's semantics written as plainly as possible (std::map of edges,
// lists sorted on demand), for differential tests. It shares no code with the engine beyond the
// public value types, so a bug has to be made twice to go unnoticed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "engine/types.h"
#include "storage/status.h"

namespace relgraph::testing {

class ReferenceModel {
 public:
  explicit ReferenceModel(const GraphOptions& o) : options_(o) {}

  struct FollowExpectation {
    Code code = Code::kOk;
    FollowOutcome outcome;
    int64_t retry_after_ms = 0;
  };

  // clock_now: what the injected clock says; ts: the caller's time (FollowAt) or nullopt.
  // rate_limited = false is Graph::Import: no token is spent.
  FollowExpectation Follow(UserId a, UserId b, TimestampMs clock_now, std::optional<TimestampMs> ts,
                           bool rate_limited = true) {
    FollowExpectation r;
    if (a == 0 || b == 0) return {Code::kInvalidUserId};
    if (a == b) return {Code::kSelfFollow};
    if (ts && (*ts < 0 || *ts > kMaxTimestampMs)) return {Code::kInvalidArgument};
    if (auto it = out_[a].find(b); it != out_[a].end()) {
      r.outcome = {false, Rel(a, b), it->second};
      return r;
    }
    if (blocks_.count({a, b}) || blocks_.count({b, a})) return {Code::kBlocked};
    // An import (not rate limited) links even to a private account.
    const bool request = rate_limited && private_.count(b) > 0;
    if (request) {
      if (auto it = requests_.find({a, b}); it != requests_.end()) {
        r.outcome = {false, Rel(a, b), it->second};
        return r;
      }
    }
    if (out_[a].size() + PendingSent(a) >= options_.max_following) return {Code::kFollowLimit};
    const TimestampMs now =
        std::max(std::clamp<TimestampMs>(clock_now, 0, kMaxTimestampMs), last_engine_ts_);
    if (options_.rate_limit.enabled && rate_limited) {
      const int64_t wait = SpendToken(a, now);
      if (wait > 0) return {Code::kRateLimited, {}, wait};
    }
    const TimestampMs t = Kept(ts ? *ts : now);
    if (!ts) last_engine_ts_ = now;
    if (request) {
      requests_[{a, b}] = t;
      r.outcome = {true, Rel(a, b), t};
      return r;
    }
    requests_.erase({a, b});  // an import's edge answers a pending request
    out_[a][b] = t;
    in_[b][a] = t;
    r.outcome = {true, Rel(a, b), t};
    return r;
  }

  bool Unfollow(UserId a, UserId b) {
    if (!out_[a].erase(b)) return false;
    in_[b].erase(a);
    return true;
  }

  // ---- blocks, private accounts, requests (docs/access.md) ----
  struct BlockExpectation {
    Code code = Code::kOk;
    BlockOutcome outcome;
  };
  BlockExpectation Block(UserId a, UserId b, TimestampMs clock_now) {
    if (a == 0 || b == 0) return {Code::kInvalidUserId};
    if (a == b) return {Code::kInvalidArgument};
    if (auto it = blocks_.find({a, b}); it != blocks_.end())
      return {Code::kOk, {false, it->second}};
    uint32_t mine = 0;
    for (const auto& [pair, ts] : blocks_) mine += pair.first == a ? 1 : 0;
    if (mine >= options_.max_blocks) return {Code::kLimitExceeded};
    BlockExpectation r;
    r.outcome.created = true;
    r.outcome.ts = EngineTime(clock_now);
    r.outcome.unfollowed = Unfollow(a, b);
    r.outcome.lost_follower = Unfollow(b, a);
    const bool asked = requests_.erase({a, b}) > 0;
    const bool was_asked = requests_.erase({b, a}) > 0;
    r.outcome.requests_removed = asked || was_asked;
    blocks_[{a, b}] = r.outcome.ts;
    return r;
  }
  bool Unblock(UserId a, UserId b) { return blocks_.erase({a, b}) > 0; }

  SetPrivateOutcome SetPrivate(UserId a, bool on, TimestampMs clock_now) {
    if (private_.count(a) == (on ? 1u : 0u)) return {};
    SetPrivateOutcome out{true, 0, EngineTime(clock_now)};
    if (on) {
      private_.insert(a);
      return out;
    }
    private_.erase(a);
    for (auto it = requests_.begin(); it != requests_.end();) {
      if (it->first.second == a) {
        Link(it->first.first, a, out.ts);
        ++out.approved;
        it = requests_.erase(it);
      } else {
        ++it;
      }
    }
    return out;
  }
  bool IsPrivate(UserId a) const { return private_.count(a) > 0; }

  FollowExpectation Approve(UserId target, UserId requester, TimestampMs clock_now) {
    if (target == 0 || requester == 0) return {Code::kInvalidUserId};
    if (!requests_.erase({requester, target})) return {Code::kNotFound};
    const TimestampMs ts = EngineTime(clock_now);
    Link(requester, target, ts);
    return {Code::kOk, {true, Rel(requester, target), ts}};
  }
  bool RemoveRequest(UserId requester, UserId target) {
    return requests_.erase({requester, target}) > 0;
  }

  uint64_t RemoveUser(UserId a) {
    private_.erase(a);
    for (auto* pairs : {&blocks_, &requests_}) {
      for (auto it = pairs->begin(); it != pairs->end();) {
        it = it->first.first == a || it->first.second == a ? pairs->erase(it) : std::next(it);
      }
    }
    uint64_t n = 0;
    for (const auto& [b, ts] : out_[a]) n += in_[b].erase(a);
    for (const auto& [f, ts] : in_[a]) n += out_[f].erase(a);
    out_[a].clear();
    in_[a].clear();
    buckets_.erase(a);
    return n;
  }

  bool Follows(UserId a, UserId b) const {
    auto it = out_.find(a);
    return it != out_.end() && it->second.count(b) > 0;
  }
  Relation Rel(UserId a, UserId b) const {
    if (a == b) return Relation::kNone;
    uint8_t bits = 0;
    if (Follows(a, b)) bits |= 1;
    if (Follows(b, a)) bits |= 2;
    if (requests_.count({a, b})) bits |= 4;
    if (requests_.count({b, a})) bits |= 8;
    if (blocks_.count({a, b})) bits |= 16;
    if (blocks_.count({b, a}) && !options_.hide_blocked_by) bits |= 32;
    return static_cast<Relation>(bits);
  }

  enum class List { kFollowing, kFans, kFriends, kBlocks, kRequests };

  // The whole list, newest first by (ts, user) descending.
  std::vector<ListEntry> FullList(List kind, UserId a, std::optional<UserId> viewer) const {
    std::vector<ListEntry> v;
    auto add = [&](UserId u, TimestampMs ts) {
      v.push_back(
          {u, ts, viewer ? Rel(*viewer, u) : Relation::kNone, Rel(a, u) == Relation::kMutual});
    };
    if (kind == List::kFollowing) {
      for (auto [b, ts] : Get(out_, a)) add(b, ts);
    } else if (kind == List::kFans) {
      for (auto [f, ts] : Get(in_, a)) add(f, ts);
    } else if (kind == List::kBlocks) {
      for (auto [pair, ts] : blocks_) {
        if (pair.first == a)
          v.push_back(
              {pair.second, ts, viewer ? Rel(*viewer, pair.second) : Relation::kNone, false});
      }
    } else if (kind == List::kRequests) {
      for (auto [pair, ts] : requests_) {
        if (pair.second == a)
          v.push_back({pair.first, ts, viewer ? Rel(*viewer, pair.first) : Relation::kNone, false});
      }
    } else {
      for (auto [b, ts] : Get(out_, a)) {
        auto back = Get(in_, a).find(b);
        if (back != Get(in_, a).end()) add(b, std::max(ts, back->second));
      }
    }
    std::sort(v.begin(), v.end(), [](const ListEntry& x, const ListEntry& y) {
      return std::tie(y.ts, y.user) < std::tie(x.ts, x.user);
    });
    return v;
  }

  Counts CountsOf(UserId a) const {
    return Counts{static_cast<uint32_t>(Get(out_, a).size()),
                  static_cast<uint32_t>(Get(in_, a).size()),
                  static_cast<uint32_t>(FullList(List::kFriends, a, std::nullopt).size()),
                  static_cast<uint32_t>(FullList(List::kBlocks, a, std::nullopt).size()),
                  static_cast<uint32_t>(FullList(List::kRequests, a, std::nullopt).size())};
  }

  // Users v follows who follow t, newest first by v's follow time (ties: larger id first).
  std::vector<UserId> KnownFollowers(UserId v, UserId t) const {
    std::vector<ListEntry> mine = FullList(List::kFollowing, v, std::nullopt);
    std::vector<UserId> out;
    for (const ListEntry& e : mine) {
      if (Follows(e.user, t)) out.push_back(e.user);
    }
    return out;
  }

  uint64_t EdgeCount() const {
    uint64_t n = 0;
    for (const auto& [a, m] : out_) n += m.size();
    return n;
  }

 private:
  TimestampMs EngineTime(TimestampMs clock_now) {
    last_engine_ts_ =
        std::max(std::clamp<TimestampMs>(clock_now, 0, kMaxTimestampMs), last_engine_ts_);
    return Kept(last_engine_ts_);
  }
  // A time as the graph keeps and answers it: rounded down to its resolution.
  TimestampMs Kept(TimestampMs ms) const { return ms - ms % options_.time_resolution_ms; }
  void Link(UserId a, UserId b, TimestampMs ts) {
    out_[a][b] = ts;
    in_[b][a] = ts;
  }
  uint32_t PendingSent(UserId a) const {
    uint32_t n = 0;
    for (const auto& [pair, ts] : requests_) n += pair.first == a ? 1 : 0;
    return n;
  }

  static const std::map<UserId, TimestampMs>& Get(
      const std::map<UserId, std::map<UserId, TimestampMs>>& m, UserId a) {
    static const std::map<UserId, TimestampMs> kEmpty;
    auto it = m.find(a);
    return it == m.end() ? kEmpty : it->second;
  }

  // The documented token bucket, in micro-tokens: returns 0 (spent) or the wait in ms.
  int64_t SpendToken(UserId a, TimestampMs now) {
    const int64_t cap = static_cast<int64_t>(options_.rate_limit.capacity * 1e6 + 0.5);
    const int64_t per_ms = static_cast<int64_t>(options_.rate_limit.refill_per_second * 1000 + 0.5);
    auto it = buckets_.find(a);
    int64_t tokens = cap;
    TimestampMs last = now;
    if (it != buckets_.end()) {
      last = it->second.second;
      const int64_t elapsed = now > last ? now - last : 0;
      tokens = std::min(cap, it->second.first + elapsed * per_ms);
      last = std::max(last, now);
    }
    if (tokens < 1'000'000) {
      buckets_[a] = {tokens, last};
      return (1'000'000 - tokens + per_ms - 1) / per_ms;
    }
    buckets_[a] = {tokens - 1'000'000, last};
    return 0;
  }

  GraphOptions options_;
  std::map<UserId, std::map<UserId, TimestampMs>> out_, in_;
  std::map<UserId, std::pair<int64_t, TimestampMs>> buckets_;
  std::map<std::pair<UserId, UserId>, TimestampMs> blocks_;    // (blocker, blocked)
  std::map<std::pair<UserId, UserId>, TimestampMs> requests_;  // (requester, target)
  std::set<UserId> private_;
  TimestampMs last_engine_ts_ = 0;
};

}  // namespace relgraph::testing
