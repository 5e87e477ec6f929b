// The cluster rows (cluster_workloads.h). Every follow is of a fresh pair: users far above any
// loaded graph's ids, apart per run, so that each creates an edge that must cross to the
// followee's shard when it lives elsewhere.
#include "tools/bench/cluster_workloads.h"

#include <atomic>
#include <chrono>
#include <map>
#include <random>
#include <thread>

#include "tools/bench/pipelined_clients.h"

namespace relgraph::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

double Seconds(SteadyClock::time_point since) {
  return std::chrono::duration<double>(SteadyClock::now() - since).count();
}

// Ids of this run: 2^42 + run * 2^30 + n.
uint64_t RunBase() {
  // 20 random bits: two runs against one server must not share ids (a follower would
  // pass the follow cap).
  return (uint64_t{1} << 42) + ((uint64_t{std::random_device{}()} & 0xfffff) << 30);
}

// The first id at or after `from` that lives on shard `shard` (when want_same) or elsewhere.
uint64_t NextOn(const net::ShardMap& map, uint64_t from, uint32_t shard, bool on) {
  while ((map.OwnerOf(from) == shard) != on) ++from;
  return from;
}

Result<std::unique_ptr<net::ClusterClient>> Connect(const ClusterBenchFlags& flags) {
  net::ClusterClientOptions o;
  o.nats_url = flags.nats_url;
  o.client = flags.client;
  return net::ClusterClient::Connect(o);
}

Result<net::ClientOptions> ShardOptions(const ClusterBenchFlags& flags, const net::ShardInfo& s) {
  net::ClientOptions o = flags.client;
  RELGRAPH_RETURN_IF_ERROR(net::ParseHostPort(s.address, &o.host, &o.port));
  return o;
}

// Single follows, each followee on the follower's shard (same) or on another.
Result<WorkloadResult> FollowLatency(const ClusterBenchFlags& flags, bool same) {
  auto cluster = Connect(flags);
  if (!cluster.ok()) return cluster.status();
  net::ClusterClient& c = **cluster;
  const net::ShardMap& map = c.map();
  uint64_t next = RunBase() + (same ? 0 : (uint64_t{1} << 29));
  std::vector<std::pair<uint64_t, uint64_t>> pairs;
  for (uint64_t i = 0; i < flags.latency_ops; ++i) {
    const uint64_t a = next++;
    const uint64_t b = NextOn(map, next, map.OwnerOf(a), same);
    next = b + 1;
    pairs.push_back({a, b});
  }
  std::vector<double> samples;
  samples.reserve(pairs.size());
  const auto start = SteadyClock::now();
  for (const auto& [a, b] : pairs) {
    const auto t = SteadyClock::now();
    auto r = c.Follow(a, b);
    if (!r.ok()) return r.status();
    samples.push_back(std::chrono::duration<double, std::micro>(SteadyClock::now() - t).count());
  }
  return Summarize(same ? "cluster_follow_same_unpipelined" : "cluster_follow_cross_unpipelined",
                   pairs.size(), Seconds(start), std::move(samples),
                   same ? "followee on the follower's shard"
                        : "followee on another shard (applied there later)");
}

// The calling thread's routing client, connected on first use (ClusterClient is one per
// thread).
Result<net::ClusterClient*> Router(
    const ClusterBenchFlags& flags, std::mutex* mu,
    std::map<std::thread::id, std::unique_ptr<net::ClusterClient>>* routers) {
  std::lock_guard lock(*mu);
  auto& router = (*routers)[std::this_thread::get_id()];
  if (router == nullptr) {
    auto c = Connect(flags);
    if (!c.ok()) return c.status();
    router = std::move(*c);
  }
  return router.get();
}

// Pipelined follows of fresh pairs to every shard at once; then the barrier. A follow that
// a shard refuses because its bucket moved is sent again through ClusterClient.
Result<WorkloadResult> Follows(const ClusterBenchFlags& flags) {
  auto cluster = Connect(flags);
  if (!cluster.ok()) return cluster.status();
  net::ClusterClient& c = **cluster;
  const net::ShardMap map = c.map();
  const uint64_t base = RunBase();
  const uint32_t shards = static_cast<uint32_t>(map.shards.size());
  const uint64_t per_shard = flags.ops / shards;
  // Follower f of shard s, pair i: followers cycle through the shard's own ids, 900 follows
  // each; followees are fresh ids (two in three on other shards, as hashing places them).
  std::vector<std::vector<uint64_t>> followers(shards);
  for (uint32_t s = 0; s < shards; ++s) {
    uint64_t id = base + (uint64_t{s} << 26);
    for (uint64_t n = 0; n * 900 < per_shard + 900; ++n) {
      id = NextOn(map, id, map.shards[s].id, true);
      followers[s].push_back(id++);
    }
  }
  std::atomic<uint64_t> acked{0};
  std::vector<std::thread> threads;
  std::mutex mu, routers_mu;
  Status failure;
  std::map<std::thread::id, std::unique_ptr<net::ClusterClient>> routers;
  const auto start = SteadyClock::now();
  for (uint32_t s = 0; s < shards; ++s) {
    threads.emplace_back([&, s] {
      auto options = ShardOptions(flags, map.shards[s]);
      Status st = options.status();
      if (st.ok()) {
        st = RunPipelinedClients(
            flags.connections, flags.pipeline, per_shard,
            [&] { return net::Client::Connect(*options); },
            [&](net::Client& client, uint64_t begin, uint64_t end) -> Status {
              auto request = [&](uint64_t i) {
                return net::FollowRequest{followers[s][i / 900],
                                          base + (uint64_t{1} << 29) + (uint64_t{s} << 26) + i,
                                          std::nullopt};
              };
              for (uint64_t i = begin; i < end; ++i) client.Queue(request(i));
              auto replies = client.Flush();
              if (!replies.ok()) return replies.status();
              for (size_t k = 0; k < replies->size(); ++k) {
                const Status& refused = (*replies)[k].status;
                if (refused.ok()) continue;
                if (refused.code() != Code::kMoved && refused.code() != Code::kMoving) {
                  return refused;
                }
                // A bucket moved under the run: this one goes through the routing client,
                // which follows `moved` and waits out `moving`.
                auto router = Router(flags, &routers_mu, &routers);
                if (!router.ok()) return router.status();
                auto again = (*router)->Call(request(begin + k));
                if (!again.ok()) return again.status();
              }
              acked.fetch_add(end - begin);
              return Status::OK();
            });
      }
      if (!st.ok()) {
        std::lock_guard lock(mu);
        if (failure.ok()) failure = st;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double acked_seconds = Seconds(start);
  if (!failure.ok()) return failure;
  RELGRAPH_RETURN_IF_ERROR(c.Barrier(std::chrono::milliseconds(600'000)));
  const double applied_seconds = Seconds(start);
  char note[200];
  std::snprintf(note, sizeof note,
                "%u shards x %u connections, pipeline %u; applied on every shard (barrier) "
                "after %.2f s: %.0f follows/s end to end",
                shards, flags.connections, flags.pipeline, applied_seconds,
                static_cast<double>(acked.load()) / applied_seconds);
  return Summarize("cluster_follows", acked.load(), acked_seconds, {}, note);
}

// Marker follows across shards, alone or beside a steady load: ack to visibility.
Result<WorkloadResult> Propagation(const ClusterBenchFlags& flags, bool loaded_run) {
  auto cluster = Connect(flags);
  if (!cluster.ok()) return cluster.status();
  net::ClusterClient& c = **cluster;
  const net::ShardMap map = c.map();
  const uint64_t base = RunBase() + (uint64_t{3} << 28);
  const uint32_t load_shard = map.shards[0].id;
  auto load_options = ShardOptions(flags, map.shards[0]);
  if (!load_options.ok()) return load_options.status();
  auto load = net::Client::Connect(*load_options);
  if (!load.ok()) return load.status();
  std::vector<uint64_t> load_followers;
  for (uint64_t id = base; load_followers.size() < 20'000; ++id) {
    id = NextOn(map, id, load_shard, true);
    load_followers.push_back(id);
  }
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> loaded{0};
  Status load_status;
  std::thread loader([&] {
    if (!loaded_run) return;
    // Paced: batch n leaves at n * pipeline / load_rate seconds.
    const auto begin = SteadyClock::now();
    for (uint64_t i = 0; !stop;) {
      const auto due =
          begin + std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(
                      static_cast<double>(i) / static_cast<double>(flags.load_rate)));
      if (due > SteadyClock::now()) {
        std::this_thread::sleep_until(due);
        continue;
      }
      for (uint32_t k = 0; k < flags.pipeline; ++k, ++i) {
        (*load)->Queue(net::FollowRequest{load_followers[(i / 900) % load_followers.size()],
                                          base + (uint64_t{1} << 27) + i, std::nullopt});
      }
      auto replies = (*load)->Flush();
      if (!replies.ok()) {
        load_status = replies.status();
        return;
      }
      loaded.fetch_add(flags.pipeline);
    }
  });
  std::vector<double> delays;
  uint64_t next = base + (uint64_t{1} << 26);
  uint64_t a = 0, b = 0;  // the marker being timed
  const auto start = SteadyClock::now();
  const Status status = TimeMarkers(
      flags.propagation_seconds, std::chrono::seconds(30), "a cross-shard follow",
      [&](uint64_t) -> Status {
        a = NextOn(map, next, load_shard, true);
        b = NextOn(map, a + 1, load_shard, false);
        next = b + 1;
        return c.Follow(a, b).status();
      },
      [&](uint64_t) -> Result<bool> {  // b's shard: does a follow b yet?
        auto rel = c.Relation(b, a);
        if (!rel.ok()) return rel.status();
        return *rel == net::RelationCode::kFollowedBy;
      },
      &delays);
  stop = true;
  loader.join();
  const double secs = Seconds(start);
  if (!status.ok()) return status;
  if (!load_status.ok()) return load_status;
  return Summarize(loaded_run ? "cluster_propagation" : "cluster_propagation_idle",
                   loaded_run ? loaded.load() : delays.size(), secs, delays,
                   std::to_string(delays.size()) +
                       " markers: follower's shard acked to followee's shard showing it" +
                       (loaded_run ? "; ops: the load beside them, paced at " +
                                         std::to_string(flags.load_rate) + "/s"
                                   : std::string()));
}

Result<WorkloadResult> RelationLatency(const ClusterBenchFlags& flags) {
  auto cluster = Connect(flags);
  if (!cluster.ok()) return cluster.status();
  net::ClusterClient& c = **cluster;
  Status status;
  WorkloadResult r = Measure(
      "cluster_relation_unpipelined", flags.latency_ops,
      [&](uint64_t i) {
        auto rel = c.Relation(1 + Mix(i) % 1'000'000, 1 + Mix(i + 7) % 1'000'000);
        if (!rel.ok() && status.ok()) status = rel.status();
      },
      1);
  if (!status.ok()) return status;
  r.note = "routed to a's shard";
  return r;
}

}  // namespace

const std::vector<std::string>& ClusterWorkloadNames() {
  static const std::vector<std::string> names = {
      "cluster_follow_same_unpipelined", "cluster_follow_cross_unpipelined",
      "cluster_relation_unpipelined",    "cluster_follows",
      "cluster_propagation_idle",        "cluster_propagation"};
  return names;
}

Result<WorkloadResult> RunClusterWorkload(const std::string& name, const ClusterBenchFlags& flags) {
  if (name == "cluster_follow_same_unpipelined") return FollowLatency(flags, true);
  if (name == "cluster_follow_cross_unpipelined") return FollowLatency(flags, false);
  if (name == "cluster_relation_unpipelined") return RelationLatency(flags);
  if (name == "cluster_follows") return Follows(flags);
  if (name == "cluster_propagation_idle") return Propagation(flags, false);
  if (name == "cluster_propagation") return Propagation(flags, true);
  return Status::InvalidArgument("no cluster workload '" + name + "'");
}

}  // namespace relgraph::bench
