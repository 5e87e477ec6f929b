#include <doctest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "engine/edge_list.h"
#include "engine/edge_list_import.h"
#include "engine/graph.h"
#include "engine/recovery.h"
#include "storage/file_names.h"

namespace relgraph {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  TempDir()
      : path(fs::temp_directory_path() / ("relgraph_edge_list_" + std::to_string(::getpid()))) {
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string Write(const std::string& name, const std::string& text, bool gzip = false) {
    const std::string p = (path / name).string();
    if (gzip) {
      gzFile f = gzopen(p.c_str(), "wb");
      gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
      gzclose(f);
    } else {
      std::ofstream(p, std::ios::binary) << text;
    }
    return p;
  }
  fs::path path;
};

GraphOptions ImportOptions(uint32_t cap = 1000) {
  GraphOptions o;
  o.rate_limit.enabled = false;
  o.max_following = cap;
  return o;
}

TEST_CASE("edge_list: comments, CRLF, blank lines, ts column; plain and gzip read alike") {
  TempDir dir;
  const std::string text = "# header\r\n1\t2\r\n\r\n  3 4 1700000000000\r\n#x\n5\t6";
  for (bool gz : {false, true}) {
    auto reader = EdgeListReader::Open(dir.Write(gz ? "a.gz" : "a.txt", text, gz));
    REQUIRE(reader.ok());
    EdgeRecord e;
    std::vector<EdgeRecord> got;
    while ((*reader)->Next(&e)) got.push_back(e);
    REQUIRE((*reader)->status().ok());
    REQUIRE(got.size() == 3);
    CHECK(got[0].follower == 1);
    CHECK_FALSE(got[0].ts.has_value());
    CHECK(got[1].ts == 1'700'000'000'000);
    CHECK(got[1].line == 4);
    CHECK(got[2].followee == 6);  // last line without a newline
  }
}

TEST_CASE("edge_list: a malformed line stops the read with its line number and text") {
  TempDir dir;
  for (const char* bad : {"1 x", "1", "1 2 3 4", "-1 2", "1 2 99999999999999999", "1,2"}) {
    auto reader = EdgeListReader::Open(dir.Write("bad.txt", std::string("1 2\n") + bad + "\n"));
    REQUIRE(reader.ok());
    EdgeRecord e;
    CHECK((*reader)->Next(&e));
    CHECK_FALSE((*reader)->Next(&e));
    CAPTURE(bad);
    CHECK((*reader)->status().code() == Code::kInvalidArgument);
    CHECK((*reader)->status().message().find("bad.txt:2") != std::string::npos);
  }
  CHECK(EdgeListReader::Open((dir.path / "missing").string()).status().code() == Code::kIOError);
}

TEST_CASE("load: self-loops, duplicates and over-cap edges are counted, not fatal") {
  TempDir dir;
  const std::string p = dir.Write("g.txt", "1 2\n1 1\n1 3\n1 2\n1 4\n2 1\n");
  Graph g(ImportOptions(2));
  auto stats = LoadEdgeList(p, g);
  REQUIRE(stats.ok());
  CHECK(stats->edges_read == 6);
  CHECK(stats->added == 3);
  CHECK(stats->self_loops == 1);
  CHECK(stats->duplicates == 1);
  CHECK(stats->over_cap == 1);
  CHECK(g.user_count() == 3);  // user 4 is named only by a skipped edge
}

TEST_CASE("load: id 0 needs an offset, and the error says so") {
  TempDir dir;
  const std::string p = dir.Write("z.txt", "0 1\n");
  Graph g(ImportOptions());
  auto stats = LoadEdgeList(p, g);
  CHECK(stats.status().code() == Code::kInvalidUserId);
  CHECK(stats.status().message().find("offset") != std::string::npos);
  Graph g2(ImportOptions());
  REQUIRE(LoadEdgeList(p, g2, {.id_offset = 1}).ok());
  CHECK(*g2.GetRelation(1, 2) == Relation::kFollowing);
}

TEST_CASE("load: soc-Epinions1 with the default cap gives the documented figures") {
  const char* dir = std::getenv("RELGRAPH_SHARED_DATA");
  const std::string path = std::string(dir ? dir : "../shared/data") + "/soc-Epinions1.txt.gz";
  if (!fs::exists(path)) {
    if (std::getenv("RELGRAPH_SKIP_SHARED_DATA")) return;
    FAIL("shared data set missing: ", path, " (set RELGRAPH_SKIP_SHARED_DATA=1 to skip)");
  }
  Graph g(ImportOptions());
  auto stats = LoadEdgeList(path, g, {.id_offset = 1});
  REQUIRE_MESSAGE(stats.ok(), stats.status().ToString());
  CHECK(stats->added == 506'618);
  CHECK(g.edge_count() == 506'618);
  CHECK(g.user_count() == 75'276);
  CHECK(stats->skipped() == 2'219);
  CHECK(stats->over_cap == 2'219);

  // The users over the cap keep their first 1,000 followees in file order.
  auto reader = EdgeListReader::Open(path);
  REQUIRE(reader.ok());
  std::map<UserId, std::vector<UserId>> first;
  std::map<UserId, uint32_t> out_degree;
  EdgeRecord e;
  while ((*reader)->Next(&e)) {
    ++out_degree[e.follower + 1];
    auto& v = first[e.follower + 1];
    if (v.size() < 1000) v.push_back(e.followee + 1);
  }
  int capped = 0;
  for (const auto& [u, deg] : out_degree) {
    if (deg <= 1000) continue;
    ++capped;
    CHECK(g.GetCounts(u)->following == 1000);
    PageRequest all;
    all.limit = 1000;
    auto page = g.Following(u, all);
    std::set<UserId> kept;
    for (const ListEntry& le : page->entries) kept.insert(le.user);
    CHECK(kept == std::set<UserId>(first[u].begin(), first[u].end()));
  }
  CHECK(capped == 4);
}

}  // namespace
}  // namespace relgraph

namespace relgraph {
namespace {

TEST_CASE("import: the direct import to a snapshot equals loading the same list into a graph") {
  // Both paths count self-loops, duplicates and over-cap edges the same way and keep the same
  // edges; groups of both sizes (the short-group scan and the sorted path) occur.
  TempDir dir;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    const uint32_t cap = seed % 2 ? 5 : 40;
    std::string text;
    for (int i = 0; i < 20'000; ++i) {
      // A few heavy followers with long groups, many light ones; few followees: duplicates.
      const uint64_t a = rng() % 4 == 0 ? 1 + rng() % 3 : 1 + rng() % 2'000;
      const uint64_t b = 1 + rng() % 60;
      text += std::to_string(a) + " " + std::to_string(b) + " " +
              std::to_string(1'600'000'000'000 + rng() % 50) + "\n";
    }
    const std::string list = dir.Write("list" + std::to_string(seed) + ".txt", text);
    Graph loaded(ImportOptions(cap));
    auto load_stats = LoadEdgeList(list, loaded, {});
    REQUIRE(load_stats.ok());
    const std::string data = (dir.path / ("data" + std::to_string(seed))).string();
    fs::create_directories(data);
    auto imported = ImportEdgeListToSnapshot(Env::Posix(), list, data, {.max_following = cap});
    REQUIRE_MESSAGE(imported.ok(), imported.status().ToString());
    CHECK(imported->stats.added == load_stats->added);
    CHECK(imported->stats.duplicates == load_stats->duplicates);
    CHECK(imported->stats.over_cap == load_stats->over_cap);
    CHECK(imported->stats.self_loops == load_stats->self_loops);
    CHECK(imported->users == loaded.user_count());
    SnapshotInfo info;
    auto graph =
        LoadSnapshotGraph(Env::Posix(), JoinPath(data, SnapshotName(0)), ImportOptions(cap), &info);
    REQUIRE(graph.ok());
    CHECK((*graph)->Digest() == loaded.Digest());
    CHECK(load_stats->over_cap > 0);
    CHECK(load_stats->duplicates > 0);
  }
}

}  // namespace
}  // namespace relgraph
