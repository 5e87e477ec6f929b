// ClusterClient's routing (net/cluster/cluster_client.h) against shards that answer `moved`
// on cue: two in-process servers stand in for shards, each behind a gate that refuses a set
// number of commands first, and a real nats-server holds the shard map the client reads.
// Checked: a shard whose own map lags the key (it refuses a user the key gives it) is asked
// again until it catches up, however many times it refuses, without counting redirects; one
// that never catches up makes the command fail with `moved` once moving_wait has passed; a
// client whose map is stale reads the key again and goes straight to the new owner; one whose
// map put a page's user and viewer (or known_followers' two users) on one shard, told `moved`
// about the second, asks across the two shards the new map gives them.
#include <doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <random>
#include <set>

#include "net/cluster/cluster_client.h"
#include "tests/net/server/server_test_util.h"
#include "tests/storage/test_dir.h"
#include "tests/tools/nats_server_process.h"

namespace relgraph::net {
namespace {

// A shard's gate that answers `moved`, naming `names_owner`, to the next `refusals` commands.
class RefusingGate final : public ClusterGate {
 public:
  std::atomic<int> refusals{0};
  std::atomic<int> asked{0};
  uint32_t names_owner = 0;

  Status Admit(Opcode, uint64_t user, uint64_t) const override {
    ++const_cast<RefusingGate*>(this)->asked;
    if (const_cast<RefusingGate*>(this)->refusals.fetch_sub(1) > 0) {
      return Status(Code::kMoved,
                    "user " + std::to_string(user) + " is served by shard " +
                        std::to_string(names_owner) + " (as this shard's map says)",
                    names_owner);
    }
    return Status::OK();
  }
  void AddInfo(std::vector<InfoField>*) const override {}
  Result<std::string> MapText() const override { return std::string("map"); }
  void Stop() override {}
};

struct TwoShards {
  testing::TestDir dir;
  testing::NatsServerProcess nats{dir.path()};
  RefusingGate gate[2];  // before the servers: a stopping server calls its gate's Stop
  testing::TestServer shard[2];

  explicit TwoShards(DbOptions db_options = testing::TestServer::NoRateLimit())
      : shard{testing::TestServer({}, "", db_options), testing::TestServer({}, "", db_options)} {
    std::vector<ShardInfo> infos;
    for (uint32_t i = 0; i < 2; ++i) {
      shard[i].service->SetClusterGate(&gate[i]);
      infos.push_back({i + 1, "127.0.0.1:" + std::to_string(shard[i].server->port())});
    }
    auto map = EvenShardMap(infos);
    REQUIRE(map.ok());
    auto link = NatsLink::Connect(nats.url());
    REQUIRE_MESSAGE(link.ok(), link.status().ToString());
    REQUIRE((*link)->CreateMap(*map).ok());
  }

  std::unique_ptr<ClusterClient> Client(std::chrono::milliseconds moving_wait) {
    ClusterClientOptions o;
    o.nats_url = nats.url();
    o.moving_wait = moving_wait;
    auto c = ClusterClient::Connect(o);
    REQUIRE_MESSAGE(c.ok(), c.status().ToString());
    return std::move(*c);
  }
};

// A user the map gives to shard `id`.
uint64_t UserOf(const ClusterClient& c, uint32_t id) {
  uint64_t u = 1;
  while (c.map().OwnerOf(u) != id) ++u;
  return u;
}

TEST_CASE("a shard whose map lags the key is asked again until it serves the user") {
  TwoShards s;
  auto client = s.Client(std::chrono::milliseconds(30000));
  const uint64_t user = UserOf(*client, 1);
  // Shard 1 still believes shard 2 owns the user, for more refusals than redirects allowed.
  s.gate[0].names_owner = 2;
  s.gate[0].refusals = 3 * ClusterClientOptions{}.max_redirects;
  auto counts = client->Counts(user);
  REQUIRE_MESSAGE(counts.ok(), counts.status().ToString());
  CHECK(s.gate[0].asked == 3 * ClusterClientOptions{}.max_redirects + 1);
  CHECK(s.gate[1].asked == 0);  // the key never gave it the user: never asked
}

TEST_CASE("a shard that never catches up fails the command with moved after moving_wait") {
  TwoShards s;
  auto client = s.Client(std::chrono::milliseconds(200));
  const uint64_t user = UserOf(*client, 1);
  s.gate[0].names_owner = 2;
  s.gate[0].refusals = 1 << 30;
  const auto start = std::chrono::steady_clock::now();
  auto counts = client->Counts(user);
  CHECK(counts.status().code() == Code::kMoved);
  CHECK(counts.status().detail() == 2);
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(200));
  CHECK(s.gate[0].asked > ClusterClientOptions{}.max_redirects + 1);
}

TEST_CASE("a client whose map is stale follows moved to the owner the key names") {
  TwoShards s;
  auto client = s.Client(std::chrono::milliseconds(30000));
  const uint64_t user = UserOf(*client, 1);
  // The key gives the user's bucket to shard 2 after the client read it; shard 1 knows.
  ShardMap next = client->map();
  next.owner[BucketOf(user, next.buckets)] = 2;
  auto link = NatsLink::Connect(s.nats.url());
  REQUIRE(link.ok());
  REQUIRE((*link)->ReplaceMap(next, client->map().version).ok());
  s.gate[0].names_owner = 2;
  s.gate[0].refusals = 1;
  REQUIRE(client->Counts(user).ok());
  CHECK(s.gate[0].asked == 1);  // not taken for a lagging shard: not asked again
  CHECK(s.gate[1].asked == 1);
  CHECK(client->map().OwnerOf(user) == 2);
}

TEST_CASE("a pair a new map parts is asked across the two shards, not waited on as a lag") {
  TwoShards s;
  auto pages = s.Client(std::chrono::milliseconds(30000));
  auto known = s.Client(std::chrono::milliseconds(30000));
  const uint64_t user = UserOf(*pages, 1);
  uint64_t viewer = user + 1;
  while (pages->map().OwnerOf(viewer) != 1) ++viewer;
  // The user follows three users (on its shard). On the viewer's shard to be, the viewer
  // follows the first and the second follows the viewer; shard 1 holds neither.
  const uint64_t x[3] = {1'000'001, 1'000'002, 1'000'003};
  const int64_t t0 = 1'700'000'000'000;
  auto shard1 = s.shard[0].Connect();
  auto shard2 = s.shard[1].Connect();
  for (int i = 0; i < 3; ++i) REQUIRE(shard1->Call(FollowRequest{user, x[i], t0 + i}).ok());
  REQUIRE(shard2->Call(FollowRequest{viewer, x[0], t0 + 10}).ok());
  REQUIRE(shard2->Call(FollowRequest{x[1], viewer, t0 + 11}).ok());
  // A move gives the viewer's bucket, not the user's, to shard 2 after both clients read the
  // map; shard 1 refuses the pair once, then (were it asked again) would answer it whole.
  ShardMap next = pages->map();
  next.owner[BucketOf(viewer, next.buckets)] = 2;
  REQUIRE(next.OwnerOf(user) == 1);
  auto link = NatsLink::Connect(s.nats.url());
  REQUIRE(link.ok());
  REQUIRE((*link)->ReplaceMap(next, pages->map().version).ok());
  s.gate[0].names_owner = 2;

  s.gate[0].refusals = 1;
  s.gate[0].asked = 0;
  s.gate[1].asked = 0;
  PageQuery q;
  q.user = user;
  q.limit = 10;
  q.viewer = viewer;
  auto page = pages->Following(q);
  REQUIRE_MESSAGE(page.ok(), page.status().ToString());
  REQUIRE(page->entries.size() == 3);  // newest first
  CHECK(page->entries[0].user == x[2]);
  CHECK(page->entries[0].viewer_relation == RelationCode::kNone);
  CHECK(page->entries[1].user == x[1]);
  CHECK(page->entries[1].viewer_relation == RelationCode::kFollowedBy);
  CHECK(page->entries[2].user == x[0]);
  CHECK(page->entries[2].viewer_relation == RelationCode::kFollowing);
  CHECK(s.gate[0].asked == 2);  // the page with the viewer, refused; then without it
  CHECK(s.gate[1].asked == 1);  // the viewer's relations

  s.gate[0].refusals = 1;
  s.gate[0].asked = 0;
  s.gate[1].asked = 0;
  auto k = known->KnownFollowers(user, viewer, 10);
  REQUIRE_MESSAGE(k.ok(), k.status().ToString());
  CHECK(k->total == 1);
  CHECK(k->users == std::vector<uint64_t>{x[1]});
  CHECK(s.gate[0].asked == 2);  // known_followers, refused; then the user's following list
  CHECK(s.gate[1].asked == 1);  // the target's relations to them
}

TEST_CASE("known_followers across shards with a viewer following more than one RELATIONS batch") {
  DbOptions o = testing::TestServer::NoRateLimit();
  o.graph.max_following = 5000;  // relgraphd --max-following
  TwoShards s(o);
  auto client = s.Client(std::chrono::milliseconds(30000));
  const uint64_t viewer = UserOf(*client, 1);
  uint64_t target = viewer + 1;
  while (client->map().OwnerOf(target) != 2) ++target;
  // The viewer follows 2,500 users (on its shard, with distinct times); a random third of
  // them follow the target (on the target's shard). The gates admit everything: each shard
  // gets what the cluster would have sent it.
  std::mt19937_64 rng(43);
  auto viewer_shard = s.shard[0].Connect();
  auto target_shard = s.shard[1].Connect();
  const int64_t t0 = 1'700'000'000'000;
  std::vector<uint64_t> expected;  // newest first by the viewer's follow
  for (int i = 0; i < 2500; ++i) {
    const uint64_t followee = 1'000'000 + static_cast<uint64_t>(i);
    REQUIRE(viewer_shard->Call(FollowRequest{viewer, followee, t0 + i}).ok());
    if (rng() % 3 == 0) {
      REQUIRE(target_shard->Call(FollowRequest{followee, target, t0 + i}).ok());
      expected.insert(expected.begin(), followee);
    }
  }
  REQUIRE(expected.size() > 2 * kMaxRelationsIds / 3);
  auto known = client->KnownFollowers(viewer, target, kMaxPageLimit);
  REQUIRE_MESSAGE(known.ok(), known.status().ToString());
  CHECK(known->total == expected.size());
  expected.resize(std::min<size_t>(expected.size(), kMaxPageLimit));
  CHECK(known->users == expected);
}

}  // namespace
}  // namespace relgraph::net
