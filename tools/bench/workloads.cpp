#include "tools/bench/workloads.h"

#include <algorithm>
#include <cstdio>

#include "tools/bench/layout_bound.h"

namespace relgraph::bench {
namespace {

volatile uint64_t g_sink;  // results feed this so no call is optimized away

}  // namespace

Workloads::Workloads(Graph& graph, const GeneratedGraph& data, uint64_t seed, uint64_t ops)
    : graph_(graph), data_(data), rng_(seed * 7919 + 1), ops_(ops) {}

const std::vector<std::string>& Workloads::Names() {
  static const std::vector<std::string> names = {
      "load",           "follow_single", "relation", "relations_batch", "following_page",
      "fans_page_deep", "friends_page",  "counts",   "known_followers", "churn",
      "layout_bound"};
  return names;
}

WorkloadResult Workloads::Run(const std::string& name) {
  if (name == "load") return Load();
  if (name == "follow_single") return FollowSingle();
  if (!prepared_) PrepareSamples();
  if (name == "churn") return Churn();
  if (name == "layout_bound") return Bound();
  if (name == "relation") return Relation();
  if (name == "relations_batch") return RelationsBatch();
  if (name == "following_page") return FollowingPage();
  if (name == "fans_page_deep") return FansPageDeep();
  if (name == "friends_page") return FriendsPage();
  if (name == "counts") return CountsOp();
  return KnownFollowers();
}

UserId Workloads::RandomFollower() {
  return followers_[rng_() % followers_.size()];
}
UserId Workloads::RandomFollowee() {
  return data_.edges[rng_() % data_.edges.size()].followee;
}

void Workloads::PrepareSamples() {
  prepared_ = true;
  for (const BenchEdge& e : data_.edges) followers_.push_back(e.follower);
  std::sort(followers_.begin(), followers_.end());
  followers_.erase(std::unique(followers_.begin(), followers_.end()), followers_.end());
  for (size_t i = 0; i < 200'000 && i < followers_.size() * 4; ++i) {
    const UserId u = RandomFollower();
    if (graph_.GetCounts(u)->friends > 0) with_friends_.push_back(u);
  }
  uint32_t best = 0;
  for (size_t i = 0; i < 100'000 && i < data_.edges.size(); ++i) {
    const UserId u = data_.edges[i].followee;
    const uint32_t fans = graph_.GetCounts(u)->fans;
    if (fans > best) {
      best = fans;
      top_account_ = u;
    }
  }
}

// ---- workloads --------------------------------------------------------------------------------

WorkloadResult Workloads::Load() {
  // Graph::Import in batches of kBatch edges, as an import tool feeds it. Latency columns are
  // per edge: each batch's time divided by its size.
  constexpr size_t kBatch = 1024;
  std::vector<ImportEdge> edges(data_.edges.size());
  for (size_t i = 0; i < edges.size(); ++i) {
    edges[i] = {data_.edges[i].follower, data_.edges[i].followee, data_.edges[i].ts};
  }
  ImportStats total;
  const uint64_t batches = (edges.size() + kBatch - 1) / kBatch;
  WorkloadResult r = Measure(
      "load", batches,
      [&](uint64_t b) {
        const size_t begin = b * kBatch;
        const size_t n = std::min(kBatch, edges.size() - begin);
        total += *graph_.Import(std::span<const ImportEdge>(&edges[begin], n));
      },
      /*sample_every=*/1);
  r.ops = edges.size();
  r.p50_us /= kBatch;
  r.p99_us /= kBatch;
  r.note = std::to_string(total.added) + " edges kept, " + std::to_string(total.over_cap) +
           " over the cap, " + std::to_string(total.duplicates) + " duplicates, " +
           std::to_string(total.self_loops) + " self-loops";
  return r;
}

WorkloadResult Workloads::FollowSingle() {
  // The load's first edges again, into a fresh graph of the same options, one FollowAt call
  // each: what Import's batches and prefetching gain over single calls.
  Graph fresh(graph_.options());
  const uint64_t n = std::min<uint64_t>(ops_, data_.edges.size());
  uint64_t added = 0;
  WorkloadResult r = Measure("follow_single", n, [&](uint64_t i) {
    const BenchEdge& e = data_.edges[i];
    const auto outcome = fresh.FollowAt(e.follower, e.followee, e.ts);
    added += outcome.ok() && outcome->created;
  });
  r.note = std::to_string(added) + " of the load's first " + std::to_string(n) +
           " edges, into a fresh graph";
  return r;
}

WorkloadResult Workloads::Bound() {
  // Not a speed: the fewest bytes per edge any encoding of the loaded graph can take
  // (tools/bench/layout_bound.h), beside what the graph takes, in the note.
  const auto start = std::chrono::steady_clock::now();
  const LayoutBound b = ComputeLayoutBound(graph_);
  WorkloadResult r =
      Summarize("layout_bound", b.edges,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  char note[384];
  const double days =
      static_cast<double>(b.last_ts - b.first_ts) * b.time_unit_ms / 86'400'000.0;
  std::snprintf(
      note, sizeof(note),
      "at least %.2f B/edge each edge once, %.2f B/edge both directions with times "
      "and kMutual; the graph counts %.2f (%llu users, times over %.0f days); bit-packed "
      "lists would take %.2f following + %.2f fans",
      b.OnceBytesPerEdge(), b.BothBytesPerEdge(),
      b.edges ? static_cast<double>(graph_.Memory().total()) / static_cast<double>(b.edges) : 0.0,
      static_cast<unsigned long long>(b.users), days, b.FollowingPackedBytesPerEdge(),
      b.FanPackedBytesPerEdge());
  r.note = note;
  for (size_t c = 0; c < kGapCodings.size(); ++c) {
    std::snprintf(note, sizeof(note), "; times as gaps, %s in groups of %u: %.2f + %.2f",
                  kGapCodings[c].varint ? "varints" : "widest gap", kGapCodings[c].group,
                  b.FollowingGapBytesPerEdge(c), b.FanGapBytesPerEdge(c));
    r.note += note;
  }
  return r;
}

WorkloadResult Workloads::Churn() {
  // Unfollow a random existing edge, then follow it again: the graph keeps its size.
  std::vector<uint64_t> picks(ops_ / 2);
  for (uint64_t& p : picks) p = rng_() % data_.edges.size();
  WorkloadResult r = Measure("churn", picks.size() * 2, [&](uint64_t i) {
    const BenchEdge& e = data_.edges[picks[i / 2]];
    if (i % 2 == 0) {
      g_sink = g_sink + graph_.Unfollow(e.follower, e.followee).ok();
    } else {
      g_sink = g_sink + graph_.Follow(e.follower, e.followee).ok();
    }
  });
  return r;
}

WorkloadResult Workloads::Relation() {
  // Half the pairs are edges (either direction), half random pairs of active users.
  std::vector<std::pair<UserId, UserId>> pairs(ops_);
  for (auto& p : pairs) {
    if (rng_() % 2) {
      const BenchEdge& e = data_.edges[rng_() % data_.edges.size()];
      p = rng_() % 2 ? std::pair{e.follower, e.followee} : std::pair{e.followee, e.follower};
    } else {
      p = {RandomFollower(), RandomFollowee()};
    }
  }
  return Measure("relation", pairs.size(), [&](uint64_t i) {
    g_sink = g_sink + static_cast<uint64_t>(*graph_.GetRelation(pairs[i].first, pairs[i].second));
  });
}

WorkloadResult Workloads::RelationsBatch() {
  // One user against 100 ids (a page of candidates to annotate): ops are batches.
  const uint64_t batches = std::max<uint64_t>(1, ops_ / 100);
  std::vector<UserId> owners(batches);
  std::vector<UserId> ids(batches * 100);
  for (UserId& o : owners) o = RandomFollower();
  for (UserId& id : ids) id = rng_() % 2 ? RandomFollowee() : RandomFollower();
  WorkloadResult r = Measure("relations_batch", batches, [&](uint64_t i) {
    auto rel = graph_.GetRelations(owners[i], std::span<const UserId>(&ids[i * 100], 100));
    g_sink = g_sink + rel->size();
  });
  r.note = "batches of 100 ids: " + std::to_string(static_cast<uint64_t>(r.ops_per_sec() * 100)) +
           " relations/s";
  return r;
}

WorkloadResult Workloads::FollowingPage() {
  std::vector<std::pair<UserId, UserId>> users(ops_);  // (owner, viewer)
  for (auto& u : users) u = {RandomFollower(), RandomFollower()};
  PageRequest req;
  req.limit = 20;
  return Measure("following_page", users.size(), [&](uint64_t i) {
    req.viewer = users[i].second;
    g_sink = g_sink + graph_.Following(users[i].first, req)->entries.size();
  });
}

WorkloadResult Workloads::FansPageDeep() {
  // Cursors at random depths of the account with the most fans, taken before timing.
  const uint32_t fans = graph_.GetCounts(top_account_)->fans;
  const size_t distinct = std::min<uint64_t>(ops_, 100'000);
  std::vector<Cursor> cursors(distinct);
  PageRequest probe;
  probe.limit = 1;
  for (Cursor& c : cursors) {
    probe.offset = static_cast<uint32_t>(rng_() % fans);
    const Page p = *graph_.Fans(top_account_, probe);
    c = Cursor{p.entries[0].ts, p.entries[0].user};
  }
  PageRequest req;
  req.limit = 20;
  WorkloadResult r = Measure("fans_page_deep", ops_, [&](uint64_t i) {
    req.after = cursors[i % distinct];
    g_sink = g_sink + graph_.Fans(top_account_, req)->entries.size();
  });
  r.note = "top account has " + std::to_string(fans) + " fans";
  return r;
}

WorkloadResult Workloads::FriendsPage() {
  if (with_friends_.empty())
    return WorkloadResult{"friends_page", 0, 0, 0, 0, "no user has friends"};
  std::vector<UserId> users(ops_);
  for (UserId& u : users) u = with_friends_[rng_() % with_friends_.size()];
  PageRequest req;
  req.limit = 20;
  return Measure("friends_page", users.size(), [&](uint64_t i) {
    g_sink = g_sink + graph_.Friends(users[i], req)->entries.size();
  });
}

WorkloadResult Workloads::CountsOp() {
  std::vector<UserId> users(ops_);
  for (UserId& u : users) u = rng_() % 2 ? RandomFollower() : RandomFollowee();
  return Measure("counts", users.size(),
                 [&](uint64_t i) { g_sink = g_sink + graph_.GetCounts(users[i])->fans; });
}

WorkloadResult Workloads::KnownFollowers() {
  std::vector<std::pair<UserId, UserId>> pairs(ops_ / 4);  // (viewer, target)
  for (auto& p : pairs) p = {RandomFollower(), RandomFollowee()};
  return Measure("known_followers", pairs.size(), [&](uint64_t i) {
    g_sink = g_sink + graph_.GetKnownFollowers(pairs[i].first, pairs[i].second, 3)->total;
  });
}

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(k), v.end());
  return v[k];
}

WorkloadResult Summarize(std::string name, uint64_t ops, double seconds,
                         std::vector<double> samples_us, std::string note) {
  WorkloadResult r;
  r.name = std::move(name);
  r.ops = ops;
  r.seconds = seconds;
  r.p50_us = Percentile(samples_us, 0.50);
  r.p99_us = Percentile(samples_us, 0.99);
  r.note = std::move(note);
  return r;
}

}  // namespace relgraph::bench
