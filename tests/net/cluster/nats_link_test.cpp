// NatsLink (net/cluster/nats_link.h): the server lists every --cluster/--nats flag takes, a
// connection through a list whose first server is down, the replica count the key-value
// bucket records for the streams created later, and a link whose NATS node hangs (SIGSTOP)
// moving to another node of a three-node NATS cluster.
#include "net/cluster/nats_link.h"

#include <doctest.h>

#include <chrono>
#include <thread>

#include "tests/storage/test_dir.h"
#include "tests/tools/free_port.h"
#include "tests/tools/nats_cluster_process.h"
#include "tests/tools/nats_server_process.h"

namespace relgraph::net {
namespace {

TEST_CASE("a NATS server list is split at commas; a bad item is named") {
  auto one = ParseNatsServers("nats://127.0.0.1:4222");
  REQUIRE(one.ok());
  CHECK(*one == std::vector<std::string>{"nats://127.0.0.1:4222"});
  auto three = ParseNatsServers("nats://a:1, nats://b:2 ,nats://c:3");
  REQUIRE(three.ok());
  CHECK(*three == std::vector<std::string>{"nats://a:1", "nats://b:2", "nats://c:3"});
  for (const char* bad :
       {"", "nats://a:1,", ",nats://a:1", "127.0.0.1:4222", "nats://", "nats://a:1,,nats://b:2"}) {
    auto r = ParseNatsServers(bad);
    CHECK_MESSAGE(r.status().code() == Code::kInvalidArgument, bad);
  }
  CHECK(ParseNatsServers("nats://a:1,http://b:2").status().message().find("'http://b:2'") !=
        std::string::npos);
  CHECK(NatsLink::Connect("127.0.0.1:4222").status().code() == Code::kInvalidArgument);
}

TEST_CASE(
    "a link connects through a list whose first server is down; streams take the bucket's "
    "replicas") {
  testing::TestDir dir;
  testing::NatsServerProcess nats(dir.path());
  const std::string dead = "nats://127.0.0.1:" + std::to_string(testing::FreeLoopbackPort());
  auto link = NatsLink::Connect(dead + "," + nats.url());
  REQUIRE_MESSAGE(link.ok(), link.status().ToString());
  CHECK((*link)->Replicas().status().code() == Code::kNotFound);
  auto map = EvenShardMap({{1, "127.0.0.1:7701"}}, 16);
  REQUIRE(map.ok());
  // One server holds one copy at most: more are refused by JetStream, out of range by us.
  CHECK((*link)->CreateMap(*map, 0).status().code() == Code::kInvalidArgument);
  CHECK((*link)->CreateMap(*map, 6).status().code() == Code::kInvalidArgument);
  REQUIRE((*link)->CreateMap(*map, 1).ok());
  CHECK((*link)->Replicas().value() == 1);
  REQUIRE((*link)->EnsureStream().ok());
  CHECK(!NatsLink::Connect(dead).ok());
}

TEST_CASE("a link whose NATS node hangs moves to another node and reads the map again") {
  testing::TestDir dir;
  testing::NatsClusterProcess nats(dir.path());
  auto link = NatsLink::Connect(nats.urls());
  REQUIRE_MESSAGE(link.ok(), link.status().ToString());
  auto map = EvenShardMap({{1, "127.0.0.1:7701"}, {2, "127.0.0.1:7702"}}, 16);
  REQUIRE(map.ok());
  REQUIRE((*link)->CreateMap(*map, 3).ok());
  CHECK((*link)->Replicas().value() == 3);
  // The node this link is connected to stops answering, its TCP connection open (a hung or
  // partitioned node). The link's pings go unanswered and it reconnects elsewhere; the
  // bucket's other two copies answer. With the client's default pings (2 minutes apart), it
  // would still be waiting on the hung node when this gives up.
  char connected[256] = {};
  REQUIRE(natsConnection_GetConnectedUrl((*link)->connection(), connected, sizeof connected) ==
          NATS_OK);
  int node = -1;
  for (int i = 0; i < testing::NatsClusterProcess::kNodes; ++i) {
    if (nats.url(i) == connected) node = i;
  }
  REQUIRE_MESSAGE(node >= 0, connected);
  nats.Stop(node);
  Result<ShardMap> read = Status::NotFound("not read yet");
  for (int attempt = 0; attempt < 10 && !read.ok(); ++attempt) read = (*link)->ReadMap();
  nats.Cont(node);
  REQUIRE_MESSAGE(read.ok(), read.status().ToString());
  CHECK(read->owner == map->owner);
  char now[256] = {};
  REQUIRE(natsConnection_GetConnectedUrl((*link)->connection(), now, sizeof now) == NATS_OK);
  CHECK(std::string(now) != connected);
}

}  // namespace
}  // namespace relgraph::net
