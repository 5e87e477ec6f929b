// Shard replicas (docs/cluster.md, "Shard replicas"), with real processes: a three-node NATS
// cluster, three shards each served by a replication group of two relgraphd members
// (--fsync=always, --sync-replicas=1), under writers making cross-shard follows and unfollows
// through ClusterClient. Faults, cycle after cycle: kill -9 of a shard's primary, SIGSTOP of
// one past its lease (a partitioned primary), a bucket move in flight while the primary of
// the shard giving the buckets away is killed, kill -9 of a shard's replica, and kill -9 of one
// NATS node (restarted later). Then: every acknowledged follow is on both
// shards it concerns (the follower's list and the followee's fans), no acknowledged unfollow
// is undone, every pair whose outcome is unknown reads the same from both sides, the move
// finished, and each group's members verify with the same digests.
// RELGRAPH_SHARD_GROUP_CYCLES=N sets the number of cycles (5 by default, one of each kind).
#include <doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "net/cluster/cluster_client.h"
#include "tests/net/roles/replication/replication_node.h"
#include "tests/net/roles/replication/write_ledger.h"
#include "tests/tools/nats_cluster_process.h"

namespace relgraph {
namespace {

using testing::Ledger;
using testing::Node;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr uint32_t kShards = 3;
constexpr uint64_t kTargets = 60;  // the users followed: 1..60, on every shard

std::string AdminRun(const std::vector<std::string>& args, int* code = nullptr) {
  std::ostringstream out, err;
  const int c = admin::Run(args, out, err);
  if (code != nullptr) *code = c;
  return out.str() + err.str();
}

struct ShardGroups {
  testing::TestDir dir;
  testing::NatsClusterProcess nats{dir.path()};
  // members[shard][k]: shard 1..kShards, two members each.
  std::vector<std::vector<std::unique_ptr<Node>>> members;

  ShardGroups() {
    members.resize(kShards + 1);
    std::string shards;
    for (uint32_t id = 1; id <= kShards; ++id) {
      for (int k = 0; k < 2; ++k) members[id].push_back(std::make_unique<Node>());
      shards += (id > 1 ? "," : "") + std::to_string(id) + "=" + members[id][0]->address() + "+" +
                members[id][1]->address();
    }
    const std::vector<std::string> init = {"cluster", "init", "--nats=" + nats.urls(),
                                           "--shards=" + shards, "--nats-replicas=3"};
    int code = 1;
    std::string said = AdminRun(init, &code);
    for (int i = 0; i < 3 && code != 0 && said.find("Timeout") != std::string::npos; ++i) {
      std::this_thread::sleep_for(milliseconds(1000));  // a NATS cluster just started
      said = AdminRun(init, &code);
    }
    REQUIRE_MESSAGE(code == 0, said);
    for (uint32_t id = 1; id <= kShards; ++id) {
      for (int k = 0; k < 2; ++k) Start(id, k);
    }
  }
  void Start(uint32_t id, int k) {
    members[id][k]->Start({"--fsync=always", "--sync-replicas=1", "--cluster=" + nats.urls(),
                           "--shard-id=" + std::to_string(id),
                           "--group=shard-" + std::to_string(id), "--group-nats-replicas=3"});
  }
  // The member of shard `id` serving as its primary with its outbox and inbox running; -1
  // after `wait`.
  int Primary(uint32_t id, milliseconds wait = milliseconds(20000)) const {
    const auto deadline = Clock::now() + wait;
    while (Clock::now() < deadline) {
      for (int k = 0; k < 2; ++k) {
        const Node& n = *members[id][k];
        if (n.pid == 0) continue;
        net::ClientOptions o;
        o.port = n.port;
        o.io_timeout = milliseconds(500);
        auto c = net::Client::Connect(o);
        if (!c.ok()) continue;
        auto info = (*c)->Info();
        if (info.ok() && info->Get("role").value_or(1) == 0 &&
            info->Get("cluster_active").value_or(0) == 1) {
          return k;
        }
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
    return -1;
  }
  std::unique_ptr<net::ClusterClient> Client(milliseconds io_timeout = milliseconds(2000)) const {
    net::ClusterClientOptions o;
    o.nats_url = nats.urls();
    o.client.io_timeout = io_timeout;
    o.client.connect_timeout = milliseconds(500);
    o.failover_timeout = milliseconds(15000);
    auto c = net::ClusterClient::Connect(o);
    for (int i = 0; i < 3 && !c.ok(); ++i) {
      std::this_thread::sleep_for(milliseconds(1000));
      c = net::ClusterClient::Connect(o);
    }
    REQUIRE_MESSAGE(c.ok(), c.status().ToString());
    return std::move(*c);
  }
};

// One writer: a follow of a fresh follower to one of the targets, and now and then an
// unfollow of one it made; every follower is new, so its pair has one history.
void Write(const ShardGroups& g, uint64_t writer, std::atomic<uint64_t>* next, Ledger* ledger,
           const std::atomic<bool>* stop) {
  auto c = g.Client();
  testing::WriteFreshPairs(
      *c, [writer](uint64_t n) { return 1 + (n * 7 + writer) % kTargets; }, next, ledger, stop);
}

// Until the writers acknowledged `count` more writes, up to 30 s.
bool WritesResume(Ledger& ledger, uint64_t count) {
  const uint64_t before = ledger.Acked();
  const auto deadline = Clock::now() + milliseconds(30000);
  while (ledger.Acked() < before + count && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  return ledger.Acked() >= before + count;
}

TEST_CASE(
    "shard groups: primaries killed and paused, a move in flight: nothing acknowledged lost") {
  ShardGroups g;
  for (uint32_t id = 1; id <= kShards; ++id) REQUIRE_MESSAGE(g.Primary(id) >= 0, "shard " << id);
  {
    // Every member, primary or replica, hands out the map it holds (SHARD_MAP): the one in
    // NATS, naming each shard's group and members.
    const net::ShardMap want = g.Client()->map();
    for (uint32_t id = 1; id <= kShards; ++id) {
      for (int k = 0; k < 2; ++k) {
        auto text = g.members[id][k]->Connect()->Call(net::ShardMapRequest{});
        REQUIRE_MESSAGE(text.ok(), text.status().ToString());
        auto m = net::ParseVersionedShardMap(text->map);
        REQUIRE_MESSAGE(m.ok(), m.status().ToString());
        CHECK(net::ShardMapDigest(*m) == net::ShardMapDigest(want));
        CHECK(m->version == want.version);
        CHECK(m->Find(id)->group == "shard-" + std::to_string(id));
        CHECK(m->Find(id)->Addresses() ==
              std::vector<std::string>{g.members[id][0]->address(), g.members[id][1]->address()});
      }
    }
  }
  Ledger ledger;
  std::atomic<uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  testing::JoinWriters join_writers{stop, writers};
  for (uint64_t w = 0; w < 2; ++w) {
    writers.emplace_back([&, w] { Write(g, w, &next, &ledger, &stop); });
  }
  REQUIRE(WritesResume(ledger, 300));

  const char* env = std::getenv("RELGRAPH_SHARD_GROUP_CYCLES");
  const int cycles = env != nullptr ? std::atoi(env) : 5;
  std::mt19937 rng(static_cast<uint32_t>(std::random_device{}()));
  std::vector<int> kinds = {0, 1, 2, 3, 4};
  std::shuffle(kinds.begin(), kinds.end(), rng);
  int moves = 0;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    const int kind = cycle < 5 ? kinds[cycle] : static_cast<int>(rng() % 5);
    const uint32_t shard = 1 + rng() % kShards;
    const int p = g.Primary(shard);
    REQUIRE_MESSAGE(p >= 0, "no primary of shard " << shard << " before cycle " << cycle);
    Node& primary = *g.members[shard][p];
    CAPTURE(cycle);
    CAPTURE(kind);
    MESSAGE("cycle " << cycle << ": fault " << kind << " on shard " << shard << "'s primary "
                     << primary.address());
    switch (kind) {
      case 0:  // kill -9 of a shard's primary; back after the other took over
        primary.Kill();
        std::this_thread::sleep_for(milliseconds(1000 + rng() % 2000));
        g.Start(shard, p);
        break;
      case 1:  // a shard's primary frozen past its lease: partitioned
        primary.Signal(SIGSTOP);
        std::this_thread::sleep_for(milliseconds(3000));
        primary.Signal(SIGCONT);
        break;
      case 2: {  // a bucket move in flight while the giving shard's primary dies
        auto c = g.Client();
        const net::ShardMap& map = c->map();
        uint32_t first = 0;
        while (map.owner[first] != shard) ++first;
        uint32_t last = first;
        while (last + 1 < map.buckets && map.owner[last + 1] == shard && last - first < 300) {
          ++last;
        }
        const uint32_t to = shard % kShards + 1;
        std::string said;
        int code = 1;
        std::thread mover([&] {
          said = AdminRun({"cluster", "move-bucket", "--nats=" + g.nats.urls(),
                           "--buckets=" + std::to_string(first) + "-" + std::to_string(last),
                           "--to=" + std::to_string(to), "--timeout-ms=90000"},
                          &code);
        });
        std::this_thread::sleep_for(milliseconds(rng() % 400));
        primary.Kill();
        std::this_thread::sleep_for(milliseconds(1500));
        g.Start(shard, p);
        mover.join();
        CHECK_MESSAGE(code == 0, "move of buckets " << first << "-" << last << " to shard " << to
                                                    << ": " << said);
        moves += code == 0;
        break;
      }
      case 3:  // kill -9 of a shard's replica: its primary waits for it (sync_replicas=1)
        g.members[shard][1 - p]->Kill();
        std::this_thread::sleep_for(milliseconds(500 + rng() % 1000));
        g.Start(shard, 1 - p);
        break;
      case 4: {  // one NATS node dies and comes back: the shards go on
        const int n = static_cast<int>(rng() % 3);
        g.nats.Kill(n);
        std::this_thread::sleep_for(milliseconds(2000));
        g.nats.Restart(n);
        break;
      }
    }
    REQUIRE_MESSAGE(WritesResume(ledger, 200), "writes did not resume after fault " << kind);
  }
  stop = true;
  for (auto& t : writers) t.join();

  // Every change applied wherever it must be, then read from both sides.
  auto c = g.Client(milliseconds(20000));
  REQUIRE(c->Barrier(milliseconds(60000)).ok());
  if (moves > 0) CHECK_FALSE(c->map().move.has_value());
  std::map<uint64_t, std::set<uint64_t>> fans;  // the followees' side
  for (uint64_t b = 1; b <= kTargets; ++b) {
    net::PageQuery q;
    q.user = b;
    q.limit = 1000;
    for (;;) {
      auto page = c->Fans(q);
      REQUIRE_MESSAGE(page.ok(), page.status().ToString());
      for (const net::PageEntry& e : page->entries) fans[b].insert(e.user);
      if (!page->next) break;
      q.after = page->next;
    }
  }
  uint64_t checked = 0, unknown = 0;
  {
    std::lock_guard lock(ledger.mu);
    for (const auto& [pair, state] : ledger.pairs) {
      const auto [a, b] = pair;
      auto rel = c->Relation(a, b);  // the follower's side
      REQUIRE_MESSAGE(rel.ok(), rel.status().ToString());
      const bool follows =
          *rel == net::RelationCode::kFollowing || *rel == net::RelationCode::kMutual;
      const bool fan = fans[b].contains(a);
      CHECK_MESSAGE(follows == fan, a << " -> " << b << ": the follower's shard says " << follows
                                      << ", the followee's " << fan);
      if (state == Ledger::State::kFollowed) {
        CHECK_MESSAGE(follows, "acknowledged follow " << a << " -> " << b << " was lost");
      } else if (state == Ledger::State::kUnfollowed) {
        CHECK_MESSAGE(!follows, "acknowledged unfollow " << a << " -> " << b << " was undone");
      } else {
        ++unknown;
      }
      ++checked;
    }
  }
  MESSAGE(checked << " pairs checked from both sides (" << unknown << " of unknown outcome), "
                  << moves << " move(s) under a failover");
  CHECK(checked > 500);

  // Each group's members hold the same data.
  for (uint32_t id = 1; id <= kShards; ++id) {
    const int p = g.Primary(id);
    REQUIRE(p >= 0);
    testing::WaitCaughtUp(*g.members[id][p], *g.members[id][1 - p]);
  }
  for (uint32_t id = 1; id <= kShards; ++id) {
    for (int k = 0; k < 2; ++k) g.members[id][k]->Stop();
    CHECK_MESSAGE(
        testing::VerifyDigests(*g.members[id][0]) == testing::VerifyDigests(*g.members[id][1]),
        "the members of shard " << id << " differ");
  }
}

}  // namespace
}  // namespace relgraph
