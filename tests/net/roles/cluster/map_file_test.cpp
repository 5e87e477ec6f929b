// The saved shard map (net/roles/cluster/map_file.h): maps come back with their version, move
// line included; a newer save replaces the older; a missing file is kNotFound; a damaged one,
// or one cut short, is kCorruption naming the file; a temp file left by a crash is ignored.
#include "net/roles/cluster/map_file.h"

#include <doctest.h>

#include <fstream>
#include <random>

#include "tests/storage/test_dir.h"

namespace relgraph {
namespace {

net::ShardMap RandomMap(std::mt19937_64& rng) {
  std::vector<net::ShardInfo> shards;
  const uint32_t n = 1 + static_cast<uint32_t>(rng() % 5);
  for (uint32_t id = 1; id <= n; ++id) {
    shards.push_back({id, "127.0.0.1:" + std::to_string(7700 + id)});
  }
  auto m = net::EvenShardMap(shards, 1 + static_cast<uint32_t>(rng() % 5000));
  REQUIRE(m.ok());
  m->version = 1 + rng() % 100000;
  if (n >= 2 && rng() % 2 == 0) {
    const uint32_t to = m->owner[0] == 1 ? 2 : 1;
    m->move = net::BucketMove{0, 0, m->owner[0], to, net::MovePhase::kPrepare, 1 + rng()};
    if (rng() % 2 == 0) {
      m->owner[0] = to;
      m->move->phase = net::MovePhase::kCopy;
      m->move->flipped_ms = rng() % 3 == 0 ? 0 : 1 + rng() % (1ull << 50);
    }
  }
  REQUIRE(net::ValidateShardMap(*m).ok());
  return *m;
}

TEST_CASE("saved shard maps come back with their version; the newest save wins") {
  testing::TestDir dir;
  Env* env = Env::Posix();
  CHECK(LoadShardMapFile(env, dir.path()).status().code() == Code::kNotFound);
  std::mt19937_64 rng(11);
  for (int i = 0; i < 200; ++i) {
    const net::ShardMap m = RandomMap(rng);
    REQUIRE(SaveShardMapFile(env, dir.path(), m).ok());
    auto loaded = LoadShardMapFile(env, dir.path());
    REQUIRE_MESSAGE(loaded.ok(), loaded.status().ToString());
    CHECK(loaded->version == m.version);
    CHECK(loaded->buckets == m.buckets);
    CHECK(loaded->shards == m.shards);
    CHECK(loaded->owner == m.owner);
    CHECK(loaded->move == m.move);
  }
}

TEST_CASE("a damaged saved map is refused naming the file; a leftover temp file is ignored") {
  testing::TestDir dir;
  Env* env = Env::Posix();
  std::mt19937_64 rng(12);
  const net::ShardMap m = RandomMap(rng);
  REQUIRE(SaveShardMapFile(env, dir.path(), m).ok());
  const std::string path = dir.path() + "/cluster-map";
  std::string text = env->ReadFile(path).value();
  {
    std::ofstream(path + ".tmp") << "half a map";  // a crash while saving the next one
  }
  CHECK(LoadShardMapFile(env, dir.path()).value().version == m.version);
  auto write = [&](const std::string& bytes) { std::ofstream(path, std::ios::trunc) << bytes; };
  auto refused = [&](const std::string& words) {
    auto r = LoadShardMapFile(env, dir.path());
    REQUIRE(!r.ok());
    CHECK(r.status().code() == Code::kCorruption);
    CHECK_MESSAGE(r.status().message().find(path) != std::string::npos, r.status().message());
    CHECK_MESSAGE(r.status().message().find(words) != std::string::npos, r.status().message());
  };
  write("relgraph-cluster-map 2\n" + text.substr(text.find('\n') + 1));
  refused("does not start with");
  write("relgraph-cluster-map 1\nversion x\n");
  refused("version N");
  write(text.substr(0, text.find("owner")));  // cut short: buckets without owners
  refused("has no owner");
  write(text);
  CHECK(LoadShardMapFile(env, dir.path()).ok());
}

}  // namespace
}  // namespace relgraph
