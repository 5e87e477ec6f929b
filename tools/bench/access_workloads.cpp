#include "tools/bench/access_workloads.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <unordered_set>

namespace relgraph::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

volatile uint64_t g_access_sink;  // results feed this so no call is optimized away

constexpr uint64_t kMaxPairs = 200'000;        // blocks and requests per row
constexpr uint32_t kMillion = 1'000'000;       // fans, and pending requests, of the big accounts
constexpr uint32_t kCelebrityBlocks = 10'000;  // blocks by, and of, the celebrity
constexpr uint32_t kPrivateFansLimit = 1'000;  // private accounts are small ones

double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

GraphOptions OwnGraphOptions() {
  GraphOptions o;
  o.rate_limit.enabled = false;
  o.max_blocks = kMillion;
  return o;
}

}  // namespace

AccessWorkloads::AccessWorkloads(Graph& graph, const GeneratedGraph& data, uint64_t seed,
                                 uint64_t ops)
    : graph_(graph), data_(data), rng_(seed * 104729 + 3), ops_(ops) {}

const std::vector<std::string>& AccessWorkloads::Names() {
  static const std::vector<std::string> names = {"block",           "relation_blocked", "unblock",
                                                 "follow_request",  "approve",          "reject",
                                                 "block_celebrity", "go_public"};
  return names;
}

WorkloadResult AccessWorkloads::Run(const std::string& name) {
  if (name == "block") return Block();
  if (name == "relation_blocked") return RelationBlocked();
  if (name == "unblock") return Unblock();
  if (name == "follow_request") return FollowRequest();
  if (name == "approve") return Answer(true);
  if (name == "reject") return Answer(false);
  if (name == "block_celebrity") return BlockCelebrity();
  return GoPublic();
}

WorkloadResult AccessWorkloads::Block() {
  // Distinct unordered pairs, so that every call blocks (none finds its block made already).
  std::unordered_set<uint64_t> seen;
  const uint64_t n = std::min<uint64_t>({ops_, kMaxPairs, data_.edges.size() / 2});
  while (blocked_.size() < n) {
    const BenchEdge& e = RandomEdge();
    const UserId lo = std::min(e.follower, e.followee), hi = std::max(e.follower, e.followee);
    if (seen.insert(lo * 0x9E3779B97F4A7C15ULL ^ hi).second) blocked_.push_back(e);
  }
  uint64_t lost_followers = 0, unfollowed = 0, refused = 0;
  WorkloadResult r = Measure("block", blocked_.size(), [&](uint64_t i) {
    // The followee blocks its fan: "remove this follower for good".
    auto o = graph_.Block(blocked_[i].followee, blocked_[i].follower);
    if (!o.ok()) {
      ++refused;
      return;
    }
    lost_followers += o->lost_follower;
    unfollowed += o->unfollowed;
  });
  std::ostringstream note;
  note << lost_followers << " fans and " << unfollowed << " followees removed by the blocks";
  if (refused > 0) note << ", " << refused << " refused";
  r.note = note.str();
  return r;
}

WorkloadResult AccessWorkloads::RelationBlocked() {
  if (blocked_.empty()) Block();
  // Half the pairs are blocked pairs (either side asking), half as `relation` draws them.
  std::vector<std::pair<UserId, UserId>> pairs(ops_);
  for (auto& p : pairs) {
    if (rng_() % 2) {
      const BenchEdge& e = blocked_[rng_() % blocked_.size()];
      p = rng_() % 2 ? std::pair{e.follower, e.followee} : std::pair{e.followee, e.follower};
    } else {
      const BenchEdge& e = RandomEdge();
      p = rng_() % 2 ? std::pair{e.follower, e.followee}
                     : std::pair{e.follower, RandomEdge().followee};
    }
  }
  uint64_t blocked = 0;
  WorkloadResult r = Measure("relation_blocked", pairs.size(), [&](uint64_t i) {
    const Relation rel = *graph_.GetRelation(pairs[i].first, pairs[i].second);
    blocked += Has(rel, Relation::kBlocking) || Has(rel, Relation::kBlockedBy);
  });
  r.note = std::to_string(blocked) + " answers blocking or blocked_by";
  return r;
}

WorkloadResult AccessWorkloads::Unblock() {
  if (blocked_.empty()) Block();
  uint64_t lifted = 0;
  WorkloadResult r = Measure("unblock", blocked_.size(), [&](uint64_t i) {
    lifted += *graph_.Unblock(blocked_[i].followee, blocked_[i].follower);
  });
  r.note = std::to_string(lifted) + " blocks lifted (the edges they removed stay removed)";
  return r;
}

WorkloadResult AccessWorkloads::FollowRequest() {
  requests_made_ = true;
  // Private accounts: 1% of the users, drawn among small accounts with fans.
  std::vector<UserId> targets;
  std::unordered_set<UserId> chosen;
  const uint64_t want = std::max<uint64_t>(100, data_.users / 100);
  for (uint64_t tries = 0; targets.size() < want && tries < want * 50; ++tries) {
    const UserId u = RandomEdge().followee;
    if (graph_.GetCounts(u)->fans <= kPrivateFansLimit && chosen.insert(u).second) {
      targets.push_back(u);
      graph_.SetPrivate(u, true).status().IgnoreError();
    }
  }
  const uint64_t n = std::min(ops_, kMaxPairs);
  std::vector<std::pair<UserId, UserId>> asks(n);  // (requester, target)
  for (auto& a : asks) a = {RandomEdge().follower, targets[rng_() % targets.size()]};
  uint64_t already = 0, refused = 0;
  WorkloadResult r = Measure("follow_request", asks.size(), [&](uint64_t i) {
    auto o = graph_.Follow(asks[i].first, asks[i].second);
    if (!o.ok()) {
      ++refused;
    } else if (o->created && Has(o->relation, Relation::kRequested)) {
      requests_.push_back({asks[i].second, asks[i].first});
    } else {
      ++already;  // an edge made before the account went private, or a request made already
    }
  });
  std::ostringstream note;
  note << requests_.size() << " requests to " << targets.size() << " private accounts, " << already
       << " found an edge or a request";
  if (refused > 0) note << ", " << refused << " refused (cap, self, blocked)";
  r.note = note.str();
  return r;
}

WorkloadResult AccessWorkloads::Answer(bool approve) {
  if (!requests_made_) FollowRequest();
  // approve answers the first half, reject the second.
  const size_t half = requests_.size() / 2;
  const size_t begin = approve ? 0 : half, end = approve ? half : requests_.size();
  uint64_t done = 0;
  WorkloadResult r = Measure(approve ? "approve" : "reject", end - begin, [&](uint64_t i) {
    const auto& [target, requester] = requests_[begin + i];
    if (approve) {
      done += graph_.Approve(target, requester).ok();
    } else {
      done += *graph_.Reject(target, requester);
    }
  });
  r.note = std::to_string(done) + (approve ? " edges made" : " requests removed");
  return r;
}

WorkloadResult AccessWorkloads::BlockCelebrity() {
  // A graph of its own: account C with a million fans, following 1,000 of them back.
  Graph g(OwnGraphOptions());
  constexpr UserId kCelebrity = kMillion + 1;
  std::vector<ImportEdge> edges;
  edges.reserve(kMillion + 1000);
  TimestampMs ts = 1'700'000'000'000;
  for (UserId fan = 1; fan <= kMillion; ++fan) edges.push_back({fan, kCelebrity, ++ts});
  for (UserId fan = 1; fan <= 1000; ++fan) edges.push_back({kCelebrity, fan * 997, ++ts});
  g.Import(edges).status().IgnoreError();
  const uint32_t fans = g.GetCounts(kCelebrity)->fans;
  // The celebrity blocks random fans; other random fans block the celebrity.
  std::vector<UserId> picks(kMillion);
  for (UserId i = 0; i < kMillion; ++i) picks[i] = i + 1;
  std::shuffle(picks.begin(), picks.end(), rng_);
  WorkloadResult by = Measure(
      "block_by", kCelebrityBlocks,
      [&](uint64_t i) { g_access_sink = g_access_sink + g.Block(kCelebrity, picks[i]).ok(); }, 1);
  WorkloadResult of = Measure(
      "block_of", kCelebrityBlocks,
      [&](uint64_t i) {
        g_access_sink = g_access_sink + g.Block(picks[kCelebrityBlocks + i], kCelebrity).ok();
      },
      1);
  std::ostringstream note;
  note << "account with " << fans << " fans; it blocks a fan: p50 " << by.p50_us << " us, p99 "
       << by.p99_us << " us; a fan blocks it: p50 " << of.p50_us << " us, p99 " << of.p99_us
       << " us";
  WorkloadResult r = Summarize("block_celebrity", by.ops + of.ops, by.seconds + of.seconds);
  r.p50_us = std::max(by.p50_us, of.p50_us);
  r.p99_us = std::max(by.p99_us, of.p99_us);
  r.note = note.str();
  return r;
}

WorkloadResult AccessWorkloads::GoPublic() {
  // A graph of its own: a private account P asked by a million users. The users exist first
  // (each follows one account), and ask in a random order, so P's list holds them in no
  // relation to their internal ids, as in a running system.
  Graph g(OwnGraphOptions());
  constexpr UserId kPrivate = kMillion + 1, kOther = kMillion + 2;
  std::vector<ImportEdge> edges;
  edges.reserve(kMillion);
  for (UserId u = 1; u <= kMillion; ++u) edges.push_back({u, kOther, 1'700'000'000'000});
  g.Import(edges).status().IgnoreError();
  std::vector<UserId> askers(kMillion);
  for (UserId i = 0; i < kMillion; ++i) askers[i] = i + 1;
  std::shuffle(askers.begin(), askers.end(), rng_);
  g.SetPrivate(kPrivate, true).status().IgnoreError();
  const size_t bytes_before = g.Memory().total();
  for (UserId u : askers) g.Follow(u, kPrivate).status().IgnoreError();
  const uint64_t pending = g.GetCounts(kPrivate)->requests;
  const size_t bytes_per_request =
      pending > 0 ? (g.Memory().total() - bytes_before) / pending : 0;
  const auto start = SteadyClock::now();
  const auto outcome = g.SetPrivate(kPrivate, false);
  const double seconds = SecondsSince(start);
  const uint64_t approved = outcome.ok() ? outcome->approved : 0;
  std::ostringstream note;
  note << "one call approved " << approved << " of " << pending << " pending requests in "
       << static_cast<uint64_t>(seconds * 1000) << " ms; a pending request took "
       << bytes_per_request << " B; fans after: " << g.GetCounts(kPrivate)->fans;
  return Summarize("go_public", approved, seconds, {}, note.str());
}

}  // namespace relgraph::bench
