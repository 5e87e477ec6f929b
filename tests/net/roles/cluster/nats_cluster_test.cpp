// No single point of failure in NATS (docs/cluster.md, "Three NATS nodes"): three shards on
// a three-node NATS cluster, the map's key-value bucket and the streams with three replicas
// (cluster init --nats-replicas=3), every process given the three servers' URLs. Under
// cross-shard follows and unfollows, the NATS node leading the shards' stream is killed with
// SIGKILL and later restarted, or paused with SIGSTOP for a few seconds (a hung or
// partitioned node: the stream's leader, or a node leading nothing of the stream) and resumed:
// every acknowledged change arrives on both shards it concerns, exactly once.
#include <doctest.h>

#include <atomic>
#include <random>
#include <thread>

#include "net/cluster/nats_link.h"
#include "tests/net/roles/cluster/shard_cluster.h"
#include "tests/storage/test_dir.h"
#include "tests/tools/nats_cluster_process.h"

namespace relgraph {
namespace {

// The node (0..2) leading `stream`'s Raft group: server names are n0, n1, n2.
int StreamLeader(net::NatsLink& link, const std::string& stream) {
  jsStreamInfo* si = nullptr;
  REQUIRE(js_GetStreamInfo(&si, link.js(), stream.c_str(), nullptr, nullptr) == NATS_OK);
  REQUIRE(si->Cluster != nullptr);
  const std::string leader = si->Cluster->Leader != nullptr ? si->Cluster->Leader : "";
  const int64_t replicas = si->Config->Replicas;
  jsStreamInfo_Destroy(si);
  CHECK(replicas == 3);
  REQUIRE_MESSAGE(leader.size() == 2, "leader '" << leader << "'");
  return leader[1] - '0';
}

TEST_CASE("a NATS node killed under cross-shard load and restarted: nothing acknowledged lost") {
  testing::TestDir dir;
  testing::NatsClusterProcess nats(dir.path());
  testing::ShardCluster cluster(dir.path(), nats.urls(), 3, {"--nats-replicas=3"});
  auto link = net::NatsLink::Connect(nats.urls());
  REQUIRE(link.ok());
  CHECK((*link)->Replicas().value() == 3);
  auto client = cluster.Client();
  testing::FollowModel model;
  std::mt19937_64 rng(47);
  testing::RandomFollows(*client, model, rng, 300);
  testing::CheckFollows(*client, model);
  CHECK(StreamLeader(**link, (*link)->names().stream) >= 0);
  CHECK(StreamLeader(**link, (*link)->names().move_stream) >= 0);

  // The stream's leader dies while the outboxes send: the other two elect a new one, the
  // shards' connections move to a live node, and sending goes on.
  const int victim = StreamLeader(**link, (*link)->names().stream);
  std::atomic<bool> killed{false};
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    nats.Kill(victim);
    killed = true;
  });
  while (!killed.load()) testing::RandomFollows(*client, model, rng, 50);
  killer.join();
  testing::RandomFollows(*client, model, rng, 300);
  testing::CheckFollows(*client, model);  // with one node down

  nats.Restart(victim);
  testing::RandomFollows(*client, model, rng, 300);
  testing::CheckFollows(*client, model);
  // The map still reads, and a fresh client finds the shards through any node.
  auto fresh = cluster.Client();
  testing::CheckFollows(*fresh, model);
  for (uint32_t id = 1; id <= 3; ++id) {
    auto f = cluster.Info(id);
    CHECK(f["cluster_joined"] == 1);
    CHECK(f["cluster_messages_rejected"] == 0);
  }
}

// Pauses NATS node `victim` (SIGSTOP) for `pause` while the shards are under cross-shard
// follows and unfollows, resumes it, and checks that every acknowledged change arrived.
void PauseUnderLoad(testing::NatsClusterProcess& nats, testing::ShardCluster& cluster,
                    net::ClusterClient& client, testing::FollowModel& model, std::mt19937_64& rng,
                    int victim, std::chrono::milliseconds pause) {
  std::atomic<bool> resumed{false};
  std::thread pauser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    nats.Stop(victim);
    std::this_thread::sleep_for(pause);
    nats.Cont(victim);
    resumed = true;
  });
  while (!resumed.load()) testing::RandomFollows(client, model, rng, 50);
  pauser.join();
  testing::RandomFollows(client, model, rng, 300);
  testing::CheckFollows(client, model);
  for (uint32_t id = 1; id <= 3; ++id) {
    auto f = cluster.Info(id);
    CHECK(f["cluster_joined"] == 1);
    CHECK(f["cluster_messages_rejected"] == 0);
    MESSAGE("shard " << id << ": " << f["cluster_messages_filled"]
                     << " message(s) filled from the stream");
  }
}

// A paused node stops answering without closing its connections: the shards' connections to
// it move to a live node after missed pings, what it had delivered to them may never arrive,
// and when it resumes it may still act, briefly, as the leader it was. Nothing acknowledged is
// lost or applied twice for that, whether it led the stream or not.
TEST_CASE("a NATS node paused under cross-shard load and resumed: nothing acknowledged lost") {
  testing::TestDir dir;
  testing::NatsClusterProcess nats(dir.path());
  testing::ShardCluster cluster(dir.path(), nats.urls(), 3, {"--nats-replicas=3"});
  auto link = net::NatsLink::Connect(nats.urls());
  REQUIRE(link.ok());
  auto client = cluster.Client();
  testing::FollowModel model;
  std::mt19937_64 rng(48);
  testing::RandomFollows(*client, model, rng, 300);
  testing::CheckFollows(*client, model);

  SUBCASE("the stream's leader") {
    const int leader = StreamLeader(**link, (*link)->names().stream);
    PauseUnderLoad(nats, cluster, *client, model, rng, leader, std::chrono::seconds(4));
    PauseUnderLoad(nats, cluster, *client, model, rng,
                   StreamLeader(**link, (*link)->names().stream), std::chrono::seconds(4));
  }
  SUBCASE("a node that does not lead the stream") {
    const int other = (StreamLeader(**link, (*link)->names().stream) + 1) % 3;
    PauseUnderLoad(nats, cluster, *client, model, rng, other, std::chrono::seconds(4));
  }
  // The map still reads, and a fresh client finds the shards through any node.
  auto fresh = cluster.Client();
  testing::CheckFollows(*fresh, model);
}

}  // namespace
}  // namespace relgraph
