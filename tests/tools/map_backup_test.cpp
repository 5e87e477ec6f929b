// What cluster init and import-map decide from the shards' reports (tools/admin/map_backup.h),
// on random reports against the rules written out once more here: init refuses a shard
// holding another map, import a shard holding another newer one, both a shard that did not
// answer, none a shard that is not running; --force turns each refusal into a warning; the
// generation written is above every reported one.
#include "tools/admin/map_backup.h"

#include <doctest.h>

#include <random>

namespace relgraph::admin {
namespace {

net::ShardMap Even(uint32_t shards) {
  std::vector<net::ShardInfo> list;
  for (uint32_t id = 1; id <= shards; ++id)
    list.push_back({id, "127.0.0.1:" + std::to_string(7700 + id)});
  auto m = net::EvenShardMap(list, 64);
  REQUIRE(m.ok());
  return *m;
}

TEST_CASE("init and import refuse by the rules, name each shard, and --force only warns") {
  std::mt19937_64 rng(45);
  const net::ShardMap base = Even(3);
  net::ShardMap moved = base;
  moved.owner[0] = 2;
  for (int i = 0; i < 2000; ++i) {
    net::ShardMap writing = base;
    writing.generation = 1 + rng() % 3;
    writing.version = rng() % 10;
    std::vector<ShardMapReport> reports;
    bool want_conflict = false, want_unreachable = false;
    const MapWrite kind = rng() % 2 == 0 ? MapWrite::kInit : MapWrite::kImport;
    for (uint32_t id = 1; id <= 3; ++id) {
      ShardMapReport r;
      r.id = id;
      r.address = "127.0.0.1:" + std::to_string(7700 + id);
      switch (rng() % 5) {
        case 0:
          r.reached = Status(Code::kIOError, "cannot connect: Connection refused");
          r.listening = false;
          break;
        case 1:
          r.reached = Status(Code::kTimeout, "no answer");
          want_unreachable = true;
          break;
        case 2:  // no map yet
          break;
        default: {
          r.holds_map = true;
          r.generation = 1 + rng() % 3;
          r.version = 1 + rng() % 10;
          const bool same = rng() % 2 == 0;
          r.digest = net::ShardMapDigest(same ? writing : moved);
          net::ShardMap held;
          held.generation = r.generation;
          held.version = r.version;
          if (!same && (kind == MapWrite::kInit || held.NewerThan(writing))) want_conflict = true;
        }
      }
      reports.push_back(r);
    }
    std::vector<std::string> warnings;
    auto warn = [&](const std::string& w) { warnings.push_back(w); };
    const Status s = CheckShardMaps(writing, reports, kind, /*force=*/false, warn);
    CHECK(s.ok() == (!want_conflict && !want_unreachable));
    if (want_conflict) CHECK(s.code() == Code::kAlreadyExists);
    if (!want_conflict && want_unreachable) CHECK(s.code() == Code::kUnavailable);
    for (const ShardMapReport& r : reports) {
      if (!r.listening) {
        CHECK(s.message().find("shard " + std::to_string(r.id) + " at") == std::string::npos);
      }
    }
    warnings.clear();
    const Status forced = CheckShardMaps(writing, reports, kind, /*force=*/true, warn);
    CHECK(forced.ok());
    const size_t not_running = static_cast<size_t>(
        std::count_if(reports.begin(), reports.end(), [](auto& r) { return !r.listening; }));
    CHECK(warnings.size() >= not_running);
    if (!s.ok()) CHECK(warnings.size() > not_running);

    const uint64_t gen = SeedGeneration(writing, reports, kind);
    for (const ShardMapReport& r : reports) {
      if (r.reached.ok() && r.holds_map) CHECK(gen > r.generation);
    }
    if (kind == MapWrite::kImport) CHECK(gen > writing.generation);
  }
}

TEST_CASE("a refusal names the shard, the map it holds, and what to run") {
  const net::ShardMap writing = Even(2);
  net::ShardMap moved = writing;
  moved.owner[0] = 2;
  ShardMapReport r;
  r.id = 2;
  r.address = "10.0.0.2:7707";
  r.holds_map = true;
  r.generation = 1;
  r.version = 12;
  r.digest = net::ShardMapDigest(moved);
  const Status s = CheckShardMaps(writing, {r}, MapWrite::kInit, false, [](const std::string&) {});
  CHECK(s.message().find("shard 2 at 10.0.0.2:7707 holds shard map generation 1 version 12") !=
        std::string::npos);
  CHECK(s.message().find("import-map") != std::string::npos);
  CHECK(s.message().find("--force") != std::string::npos);
  // The same content is no conflict, whatever its version.
  r.digest = net::ShardMapDigest(writing);
  CHECK(CheckShardMaps(writing, {r}, MapWrite::kInit, false, [](const std::string&) {}).ok());
  // An init over shards with no map stays generation 1.
  CHECK(SeedGeneration(writing, {ShardMapReport{}}, MapWrite::kInit) == 1);
}

}  // namespace
}  // namespace relgraph::admin
