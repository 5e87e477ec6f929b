// NatsLink (net/cluster/nats_link.h): the server lists every --cluster/--nats flag takes, a
// connection through a list whose first server is down, the replica count the key-value
// bucket records for the streams created later, and a link whose NATS node hangs (SIGSTOP)
// moving to another node of a three-node NATS cluster; key-value reads from the leader.
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

// A plain NATS client on one server, with a key-value bucket: the writer beside the reads.
struct KvClient {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  kvStore* kv = nullptr;
  KvClient(const std::string& url, const char* bucket, int replicas) {
    REQUIRE(natsConnection_ConnectTo(&nc, url.c_str()) == NATS_OK);
    REQUIRE(natsConnection_JetStream(&js, nc, nullptr) == NATS_OK);
    if (js_KeyValue(&kv, js, bucket) == NATS_OK) return;
    kvConfig cfg;
    kvConfig_Init(&cfg);
    cfg.Bucket = bucket;
    cfg.History = 8;
    cfg.Replicas = replicas;
    REQUIRE(js_CreateKeyValue(&kv, js, &cfg) == NATS_OK);
  }
  ~KvClient() {
    if (kv != nullptr) kvStore_Destroy(kv);
    if (js != nullptr) jsCtx_Destroy(js);
    if (nc != nullptr) natsConnection_Destroy(nc);
  }
  uint64_t Put(const char* key, const std::string& value) {
    uint64_t rev = 0;
    REQUIRE(kvStore_PutString(&rev, kv, key, value.c_str()) == NATS_OK);
    return rev;
  }
};

TEST_CASE("a key-value read from the leader: the newest value and revision, none once removed") {
  testing::TestDir dir;
  testing::NatsServerProcess nats(dir.path());
  KvClient c(nats.url(), "leader_read", 1);
  const auto read = [&](const char* key) {
    auto r = ReadKvFromLeader(c.js, "leader_read", key, "reading " + std::string(key));
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    return *r;
  };
  CHECK(!read("k").has_value());
  const uint64_t first = c.Put("k", "one");
  auto got = read("k");
  REQUIRE(got.has_value());
  CHECK(got->value == "one");
  CHECK(got->revision == first);
  const uint64_t second = c.Put("k", "two, longer");
  c.Put("other", "x");  // a later revision under another key
  got = read("k");
  REQUIRE(got.has_value());
  CHECK(got->value == "two, longer");
  CHECK(got->revision == second);
  REQUIRE(kvStore_Delete(c.kv, "k") == NATS_OK);
  CHECK(!read("k").has_value());
  c.Put("k", "three");
  CHECK(read("k")->value == "three");
  REQUIRE(kvStore_Purge(c.kv, "k", nullptr) == NATS_OK);
  CHECK(!read("k").has_value());
  CHECK(read("other")->value == "x");
  auto missing = ReadKvFromLeader(c.js, "no_such_bucket", "k", "reading k");
  CHECK(!missing.ok());
  CHECK(missing.status().message().find("reading k") != std::string::npos);
}

// A put acknowledged through one node is read at once through another, every time: a
// direct get (what kvStore_Get does on these buckets) may be answered by a replica that has
// not stored it yet.
TEST_CASE("a key-value read from the leader sees each acknowledged put, through any node") {
  testing::TestDir dir;
  testing::NatsClusterProcess nats(dir.path());
  KvClient writer(nats.url(0), "leader_read", 3);
  KvClient reader(nats.url(2), "leader_read", 3);
  for (int i = 0; i < 300; ++i) {
    const std::string key = "k" + std::to_string(i % 3), value = "v" + std::to_string(i);
    const uint64_t rev = writer.Put(key.c_str(), value);
    auto got = ReadKvFromLeader(reader.js, "leader_read", key, "reading " + key);
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    REQUIRE_MESSAGE(got->has_value(), "put " << i << " not seen");
    CHECK((*got)->revision == rev);
    CHECK((*got)->value == value);
  }
}

}  // namespace
}  // namespace relgraph::net
