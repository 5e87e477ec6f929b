// NatsLink (net/cluster/nats_link.h): the server lists every --cluster/--nats flag takes, a
// connection through a list whose first server is down, and the replica count the key-value
// bucket records for the streams created later.
#include "net/cluster/nats_link.h"

#include <doctest.h>

#include "tests/storage/test_dir.h"
#include "tests/tools/free_port.h"
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

}  // namespace
}  // namespace relgraph::net
