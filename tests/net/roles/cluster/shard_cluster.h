// Shards of a relgraph cluster as real processes for the NATS fault tests (map backup and
// restore, a three-node NATS cluster): the map made by relgraph-admin cluster init, relgraphd
// shards on loopback, and a follow/unfollow model every acknowledged change goes into, checked
// from both sides (the follower's list on its shard, the fan list on the followee's).
#pragma once

#include <doctest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "net/cluster/cluster_client.h"
#include "tests/tools/free_port.h"
#include "tests/tools/relgraphd_process.h"
#include "tools/admin/admin_commands.h"

namespace relgraph::testing {

struct AdminResult {
  int code = 0;
  std::string out, err;
};
inline AdminResult Admin(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = admin::Run(args, out, err);
  return {code, out.str(), err.str()};
}

struct ShardCluster {
  // `shards` shards on `nats` (one URL or a list), data under `dir`; init with `init_flags`;
  // each shard started with `shard_flags` too, and reached with `client`'s token and TLS.
  ShardCluster(std::string dir, std::string nats, uint32_t shards,
               const std::vector<std::string>& init_flags = {},
               std::vector<std::string> shard_flags = {}, net::ClientOptions client = {})
      : client_(std::move(client)),
        shard_flags_(std::move(shard_flags)),
        dir_(std::move(dir)),
        nats_(std::move(nats)),
        port(shards + 1),
        pid(shards + 1),
        starts(shards + 1) {
    for (uint32_t id = 1; id <= shards; ++id) {
      port[id] = FreeLoopbackPort();
      shards_flag +=
          (id > 1 ? "," : "") + std::to_string(id) + "=127.0.0.1:" + std::to_string(port[id]);
    }
    std::vector<std::string> args = {"cluster", "init", "--nats=" + nats_,
                                     "--shards=" + shards_flag};
    args.insert(args.end(), init_flags.begin(), init_flags.end());
    // A NATS cluster just started, on a busy machine, may time out making the replicated
    // bucket: init is tried again then (it refuses only once a map is stored).
    AdminResult init = Admin(args);
    for (int i = 0; i < 3 && init.code != 0 && init.err.find("Timeout") != std::string::npos;
         ++i) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      init = Admin(args);
    }
    REQUIRE_MESSAGE(init.code == 0, init.err);
    try {
      for (uint32_t id = 1; id <= shards; ++id) StartShard(id);
      for (uint32_t id = 1; id <= shards; ++id) WaitJoined(id);
    } catch (...) {
      StopAll();  // a constructor that throws runs no destructor: no shard may outlive the test
      throw;
    }
  }
  // Until shard `id` joined the cluster (INFO cluster_joined; a NATS cluster just started may
  // answer "temporarily unavailable" first, and the shard tries again), up to 30 s.
  void WaitJoined(uint32_t id) const {
    for (int i = 0; i < 300 && Info(id)["cluster_joined"] != 1; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    REQUIRE_MESSAGE(Info(id)["cluster_joined"] == 1, "shard " << id << " did not join; " << Log(id)
                                                              << " ends:\n"
                                                              << LogTail(Log(id)));
  }
  // Stops the shards; one that had already ended (a crash, an exit on error) has its exit and
  // the end of its log printed, so a failing test says why a shard stopped answering.
  ~ShardCluster() { StopAll(); }
  void StopAll() {
    for (size_t id = 1; id < pid.size(); ++id) {
      if (pid[id] <= 0) continue;
      int status = 0;
      if (::waitpid(pid[id], &status, WNOHANG) == pid[id]) {
        ReportEarlyExit(static_cast<uint32_t>(id), status);
        pid[id] = 0;
        continue;
      }
      StopShard(static_cast<uint32_t>(id));
    }
  }
  void ReportEarlyExit(uint32_t id, int status) const {
    std::fprintf(stderr, "shard %u ended before the test stopped it (%s %d); its log %s ends:\n%s",
                 id, WIFEXITED(status) ? "exit code" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), Log(id).c_str(),
                 LogTail(Log(id), 40).c_str());
  }
  std::string DataDir(uint32_t id) const { return dir_ + "/shard" + std::to_string(id); }
  // Starts shard `id`; `wait_port`: until it listens (it does even when it cannot join).
  void StartShard(uint32_t id) {
    const std::string log =
        dir_ + "/shard" + std::to_string(id) + "." + std::to_string(++starts[id]) + ".log";
    std::vector<std::string> args = {
        "--data-dir=" + DataDir(id), "--listen=127.0.0.1:" + std::to_string(port[id]),
        "--cluster=" + nats_,        "--shard-id=" + std::to_string(id),
        "--fsync=always",            "--rate-limit=off",
        "--snapshot-interval-s=0"};
    args.insert(args.end(), shard_flags_.begin(), shard_flags_.end());
    pid[id] = Spawn(args, log);
    // A shard joins before it listens: on a NATS cluster still electing its leaders, on a busy
    // machine, each of the join's requests may take up to its 5 s timeout.
    REQUIRE(WaitForPort(log, pid[id], std::chrono::seconds(90)) == port[id]);
  }
  std::string Log(uint32_t id) const {
    return dir_ + "/shard" + std::to_string(id) + "." + std::to_string(starts[id]) + ".log";
  }
  void StopShard(uint32_t id) {
    ::kill(pid[id], SIGTERM);
    WaitExit(pid[id]);
    pid[id] = 0;
  }
  std::unique_ptr<net::ClusterClient> Client() const {
    net::ClusterClientOptions o;
    o.nats_url = nats_;
    o.client = client_;
    auto c = net::ClusterClient::Connect(o);
    for (int i = 0; i < 3 && !c.ok(); ++i) {  // a NATS cluster electing leaders may time out
      std::this_thread::sleep_for(std::chrono::seconds(1));
      c = net::ClusterClient::Connect(o);
    }
    REQUIRE_MESSAGE(c.ok(), c.status().ToString());
    return std::move(*c);
  }
  // INFO of shard `id`, by name.
  std::map<std::string, uint64_t> Info(uint32_t id) const {
    net::ClientOptions o = client_;
    o.host = "127.0.0.1";
    o.port = port[id];
    auto c = net::Client::Connect(o);
    REQUIRE_MESSAGE(c.ok(), c.status().ToString());
    auto info = (*c)->Info();
    REQUIRE_MESSAGE(info.ok(), info.status().ToString());
    std::map<std::string, uint64_t> f;
    for (const net::InfoField& field : info->fields) f[field.name] = field.value;
    return f;
  }
  const std::string& nats() const { return nats_; }

  std::string shards_flag;  // ID=HOST:PORT,... as init takes it

 private:
  net::ClientOptions client_;
  std::vector<std::string> shard_flags_;
  std::string dir_, nats_;

 public:
  std::vector<uint16_t> port;
  std::vector<pid_t> pid;
  std::vector<int> starts;
};

// Acknowledged follows, as one node would hold them.
struct FollowModel {
  uint64_t users = 60;
  std::set<std::pair<uint64_t, uint64_t>> edges;
};

// `ops` random follows and unfollows between users of every shard, each acknowledged and
// checked against the model as it is answered.
inline void RandomFollows(net::ClusterClient& c, FollowModel& m, std::mt19937_64& rng, int ops) {
  for (int i = 0; i < ops; ++i) {
    const uint64_t a = 1 + rng() % m.users;
    uint64_t b = 1 + rng() % m.users;
    if (b == a) b = a % m.users + 1;
    if (rng() % 100 < 65) {
      auto r = c.Follow(a, b);
      REQUIRE_MESSAGE(r.ok(), r.status().ToString());
      CHECK(r->created == !m.edges.contains({a, b}));
      m.edges.insert({a, b});
    } else {
      auto r = c.Unfollow(a, b);
      REQUIRE_MESSAGE(r.ok(), r.status().ToString());
      CHECK(*r == m.edges.contains({a, b}));
      m.edges.erase({a, b});
    }
  }
}

// After a barrier: every user's following list (its shard) and fan list (its shard) equal the
// model's, so every acknowledged change reached both shards it concerns and nothing else did.
inline void CheckFollows(net::ClusterClient& c, const FollowModel& m) {
  if (Status b = c.Barrier(std::chrono::milliseconds(60'000)); !b.ok()) {
    std::string fields;  // what the shards said, to see which one lags
    if (auto infos = c.ShardInfos(); infos.ok()) {
      for (auto& [id, f] : *infos) {
        fields += "\nshard " + std::to_string(id) + ":";
        for (auto& [name, value] : f) {
          if (name.rfind("cluster_", 0) == 0 || name == "last_lsn") {
            fields += " " + name + "=" + std::to_string(value);
          }
        }
      }
    }
    FAIL(b.ToString() << fields);
  }
  for (uint64_t u = 1; u <= m.users; ++u) {
    std::set<uint64_t> following, fans, got_following, got_fans;
    for (const auto& [a, b] : m.edges) {
      if (a == u) following.insert(b);
      if (b == u) fans.insert(a);
    }
    net::PageQuery q;
    q.user = u;
    q.limit = 1000;
    auto f = c.Following(q);
    REQUIRE_MESSAGE(f.ok(), f.status().ToString());
    for (const net::PageEntry& e : f->entries) got_following.insert(e.user);
    auto g = c.Fans(q);
    REQUIRE_MESSAGE(g.ok(), g.status().ToString());
    for (const net::PageEntry& e : g->entries) got_fans.insert(e.user);
    CHECK_MESSAGE(got_following == following, "following of " << u);
    CHECK_MESSAGE(got_fans == fans, "fans of " << u);
  }
}

}  // namespace relgraph::testing
