// The map is never lost (docs/cluster.md, "Backing up the map"): a cluster whose buckets
// moved is backed up with relgraph-admin cluster export-map; its JetStream store is wiped
// (nats-server killed, its store deleted, started fresh); `cluster init` is then refused
// because the shards report the moved map, an older backup is refused by import-map, the
// newer one is restored, and the shards take it although its key-value revision restarted
// at 1: they keep serving, and a bucket move after the restore works. A shard stopped during
// the loss does not join a fresh map (it waits for the restore).
#include <doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "net/cluster/placement.h"
#include "tests/net/roles/cluster/shard_cluster.h"
#include "tests/storage/test_dir.h"
#include "tests/tools/nats_server_process.h"

namespace relgraph {
namespace {

using testing::Admin;
using testing::AdminResult;

// Moves buckets first..last to shard `to`.
void Move(const std::string& nats, uint32_t first, uint32_t last, uint32_t to) {
  const AdminResult r = Admin({"cluster", "move-bucket", "--nats=" + nats,
                               "--buckets=" + std::to_string(first) + "-" + std::to_string(last),
                               "--to=" + std::to_string(to), "--timeout-ms=30000"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
}

net::ShardMap ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto m = net::ParseVersionedShardMap(text.str());
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  return *m;
}

// nats-server dies and comes back on its port with an empty store.
void WipeJetStream(testing::NatsServerProcess& nats, const std::string& dir) {
  nats.Kill();
  std::filesystem::remove_all(dir + "/jetstream");
  nats.Restart();
}

// Waits (up to 20 s) until every shard reports `map` (its generation and digest).
void WaitShardsHold(const testing::ShardCluster& c, const net::ShardMap& map, uint32_t shards) {
  for (uint32_t id = 1; id <= shards; ++id) {
    std::map<std::string, uint64_t> f;
    for (int i = 0; i < 200; ++i) {
      f = c.Info(id);
      if (f["cluster_map_generation"] == map.generation &&
          f["cluster_map_digest"] == net::ShardMapDigest(map)) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    CHECK_MESSAGE(f["cluster_map_generation"] == map.generation,
                  "shard " << id << " holds generation " << f["cluster_map_generation"]);
    CHECK_MESSAGE(f["cluster_map_digest"] == net::ShardMapDigest(map), "shard " << id);
  }
}

TEST_CASE("a lost JetStream store: init refused, an old backup refused, the map restored") {
  testing::TestDir dir;
  testing::NatsServerProcess nats(dir.path());
  testing::ShardCluster cluster(dir.path(), nats.url(), 2);
  auto client = cluster.Client();
  testing::FollowModel model;
  std::mt19937_64 rng(45);
  testing::RandomFollows(*client, model, rng, 200);

  // Shard 1 owns buckets 0-2047: two moves to shard 2, a backup after each.
  const std::string old_backup = dir.path() + "/map.old", backup = dir.path() + "/map.new";
  Move(nats.url(), 0, 99, 2);
  AdminResult r = Admin({"cluster", "export-map", "--nats=" + nats.url(), "--out=" + old_backup});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  Move(nats.url(), 100, 199, 2);
  r = Admin({"cluster", "export-map", "--nats=" + nats.url(), "--out=" + backup});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out.find("written to " + backup) != std::string::npos);
  const net::ShardMap saved = ReadFile(backup);
  CHECK(saved.owner[150] == 2);
  CHECK(ReadFile(old_backup).owner[150] == 1);
  // Without --out, the same text on stdout.
  r = Admin({"cluster", "export-map", "--nats=" + nats.url()});
  CHECK(r.out == net::EncodeVersionedShardMap(saved));

  testing::RandomFollows(*client, model, rng, 200);
  testing::CheckFollows(*client, model);  // nothing in flight when the store goes
  WipeJetStream(nats, dir.path());

  // A fresh map would give buckets 0-199 back to shard 1.
  r = Admin({"cluster", "init", "--nats=" + nats.url(), "--shards=" + cluster.shards_flag});
  CHECK(r.code == 1);
  CHECK_MESSAGE(r.err.find("shard 1 at 127.0.0.1:" + std::to_string(cluster.port[1]) +
                           " holds shard map generation 1 version " +
                           std::to_string(saved.version)) != std::string::npos,
                r.err);
  CHECK_MESSAGE(r.err.find("import-map") != std::string::npos, r.err);
  CHECK(Admin({"cluster", "show", "--nats=" + nats.url()}).code == 1);  // nothing written

  // The backup from before the second move is older than what the shards hold.
  r = Admin({"cluster", "import-map", "--nats=" + nats.url(), "--in=" + old_backup});
  CHECK(r.code == 1);
  CHECK_MESSAGE(r.err.find("newer than the file's generation 1") != std::string::npos, r.err);

  r = Admin({"cluster", "import-map", "--nats=" + nats.url(), "--in=" + backup});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK_MESSAGE(r.out.find("shard map generation 2 version 1,") != std::string::npos, r.out);
  net::ShardMap restored = saved;
  restored.generation = 2;
  // The shards take it although its revision (1) is below the one they hold.
  WaitShardsHold(cluster, restored, 2);
  // A second import would write over it.
  r = Admin({"cluster", "import-map", "--nats=" + nats.url(), "--in=" + backup});
  CHECK(r.code == 1);
  CHECK_MESSAGE(r.err.find("a shard map exists already") != std::string::npos, r.err);

  // They keep serving, and changes cross shards again through the restored streams.
  auto fresh = cluster.Client();
  CHECK(fresh->map().owner[150] == 2);
  testing::RandomFollows(*fresh, model, rng, 200);
  testing::CheckFollows(*fresh, model);
  // Maps written after the restore (revisions 2, 3, ...) are taken too.
  Move(nats.url(), 200, 299, 2);
  fresh = cluster.Client();
  CHECK(fresh->map().owner[250] == 2);
  testing::RandomFollows(*fresh, model, rng, 200);
  testing::CheckFollows(*fresh, model);
}

TEST_CASE("a shard down while the store was lost waits for the restore instead of a fresh map") {
  testing::TestDir dir;
  testing::NatsServerProcess nats(dir.path());
  testing::ShardCluster cluster(dir.path(), nats.url(), 2);
  auto client = cluster.Client();
  testing::FollowModel model;
  std::mt19937_64 rng(46);
  Move(nats.url(), 0, 99, 2);
  testing::RandomFollows(*client, model, rng, 200);
  testing::CheckFollows(*client, model);
  cluster.StopShard(1);
  cluster.StopShard(2);
  WipeJetStream(nats, dir.path());

  // Nothing listens at the shards' addresses: init says so and writes the map.
  AdminResult r =
      Admin({"cluster", "init", "--nats=" + nats.url(), "--shards=" + cluster.shards_flag});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK_MESSAGE(r.err.find("shard 1 at 127.0.0.1:" + std::to_string(cluster.port[1]) +
                           " is not running") != std::string::npos,
                r.err);
  // Shard 1 saved the moved map: it serves by it and does not join the fresh one.
  cluster.StartShard(1);
  for (int i = 0; i < 20 && cluster.Info(1)["cluster_joined"] == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(cluster.Info(1)["cluster_joined"] == 0);
  // Its saved map is the backup: restored over the fresh one with --force.
  const std::string saved = cluster.DataDir(1) + "/cluster-map";
  r = Admin({"cluster", "import-map", "--nats=" + nats.url(), "--in=" + saved, "--force"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  cluster.StartShard(2);
  net::ShardMap restored = ReadFile(saved);
  restored.generation = 2;
  WaitShardsHold(cluster, restored, 2);
  CHECK(cluster.Info(1)["cluster_joined"] == 1);
  auto fresh = cluster.Client();
  CHECK(fresh->map().owner[50] == 2);
  testing::RandomFollows(*fresh, model, rng, 200);
  testing::CheckFollows(*fresh, model);
}

}  // namespace
}  // namespace relgraph
