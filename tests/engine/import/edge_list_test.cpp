#include <doctest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "engine/import/edge_list.h"
#include "engine/import/edge_list_import.h"
#include "engine/graph/graph.h"
#include "engine/durable/recovery.h"
#include "storage/env/file_names.h"

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

// What a line means, by the format's definition, written independently of the reader: blank
// and comment lines are skipped; otherwise 2 or 3 fields of digits separated by blanks, each
// below 2^64 (any number of leading zeros), and a time of at most kMaxTimestampMs.
struct ReferenceLine {
  bool skip = false, ok = false;
  EdgeRecord record;
};

ReferenceLine ParseReference(std::string line, uint64_t number) {
  ReferenceLine r;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  std::vector<std::string> fields;
  std::string field;
  for (char c : line + " ") {
    if (c == ' ' || c == '\t') {
      if (!field.empty()) fields.push_back(field);
      field.clear();
    } else {
      field += c;
    }
  }
  if (fields.empty() || fields[0][0] == '#') {
    r.skip = true;
    return r;
  }
  if (fields.size() < 2 || fields.size() > 3) return r;
  uint64_t v[3];
  for (size_t i = 0; i < fields.size(); ++i) {
    uint64_t x = 0;
    for (char c : fields[i]) {
      if (c < '0' || c > '9') return r;
      const auto d = static_cast<uint64_t>(c - '0');
      if (x > (UINT64_MAX - d) / 10) return r;  // x * 10 + d would pass 2^64 - 1
      x = x * 10 + d;
    }
    v[i] = x;
  }
  if (fields.size() == 3 && v[2] > uint64_t(kMaxTimestampMs)) return r;
  r.ok = true;
  r.record = {v[0], v[1],
              fields.size() == 3 ? std::optional<TimestampMs>(static_cast<TimestampMs>(v[2]))
                                 : std::nullopt,
              number};
  return r;
}

// A decimal number below 2^64, of any width up to 20 digits, or with leading zeros.
std::string RandomNumber(std::mt19937_64& rng) {
  switch (rng() % 5) {
    case 0:
      return std::to_string(rng() % 10);
    case 1:
      return std::to_string(rng());  // up to 20 digits
    case 2:
      return std::to_string(UINT64_MAX - rng() % 3);  // at the limit
    case 3:
      return std::string(1 + rng() % 4, '0') + std::to_string(rng() % 1000000);
    default:
      return std::to_string(rng() % (uint64_t{1} << (1 + rng() % 63)));
  }
}

// A number the format refuses, or a field that is not a number.
std::string RandomBadField(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:
      return "1844674407370955161" + std::to_string(6 + rng() % 4);  // 2^64 .. + 3
    case 1:
      return std::to_string(rng() % 10000000000000000000u + 10000000000000000000u) + "0";
    case 2:
      return std::string(3, '0') + std::to_string(rng());  // 21+ digits: allowed if < 2^64
    case 3:
      return "-1";
    case 4:
      return "1x";
    default:
      return "+5";
  }
}

// Lines of every shape the format allows; with bad_one_in > 0, one line in bad_one_in has a bad
// field or a fourth one.
std::string RandomEdgeListText(std::mt19937_64& rng, int lines, int bad_one_in) {
  std::string text;
  auto blank = [&] { return std::string(1 + rng() % 2, rng() % 4 ? ' ' : '\t'); };
  for (int i = 0; i < lines; ++i) {
    const uint64_t shape = rng() % 100;
    std::string line;
    if (shape < 3) {
      line = rng() % 2 ? "# comment 1 2" : "";
    } else {
      std::vector<std::string> fields = {RandomNumber(rng), RandomNumber(rng)};
      if (rng() % 3) fields.push_back(std::to_string(rng() % 2'000'000'000'000));
      if (bad_one_in > 0 && rng() % bad_one_in == 0) {
        if (rng() % 4 == 0) {
          fields.push_back("7");
        } else {
          fields[rng() % fields.size()] = RandomBadField(rng);
        }
      }
      for (size_t f = 0; f < fields.size(); ++f)
        line += (f > 0 ? (shape < 90 ? " " : blank()) : "") + fields[f];
      if (shape >= 97) line = blank() + line + blank();
    }
    text += line + (rng() % 10 ? "\n" : "\r\n");
  }
  if (rng() % 2 && !text.empty()) text.pop_back();  // maybe no newline at the end
  return text;
}

std::vector<ReferenceLine> ParseReferenceText(const std::string& text) {
  std::vector<ReferenceLine> out;
  uint64_t number = 0;
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(ParseReference(text.substr(at, nl - at), ++number));
    at = nl + 1;
  }
  return out;
}

bool SameRecord(const EdgeRecord& a, const EdgeRecord& b) {
  return a.follower == b.follower && a.followee == b.followee && a.ts == b.ts && a.line == b.line;
}

TEST_CASE("edge_list: the reader matches the format's definition on random lines of any shape") {
  // Over 1 MiB per file, so lines also straddle the reader's buffer refills; canonical lines
  // take the eight-digits-a-step path, the rest the general one, and both must agree with
  // the definition, errors (with their line number) included.
  TempDir dir;
  int files_with_errors = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    const std::string text = RandomEdgeListText(rng, 30'000, seed % 2 ? 0 : 10'000);
    const auto want = ParseReferenceText(text);
    for (bool gz : {false, true}) {
      auto reader = EdgeListReader::Open(dir.Write(gz ? "r.gz" : "r.txt", text, gz));
      REQUIRE(reader.ok());
      EdgeRecord e;
      size_t i = 0;
      bool failed = false;
      for (; i < want.size(); ++i) {
        if (want[i].skip) continue;
        if (!want[i].ok) {
          CHECK_FALSE((*reader)->Next(&e));
          const std::string where = ":" + std::to_string(i + 1) + ":";
          CHECK((*reader)->status().message().find(where) != std::string::npos);
          files_with_errors += !gz;
          failed = true;
          break;
        }
        REQUIRE((*reader)->Next(&e));
        CAPTURE(i);
        REQUIRE(SameRecord(e, want[i].record));
      }
      if (!failed) {
        CHECK_FALSE((*reader)->Next(&e));
        CHECK((*reader)->status().ok());
      }
    }
  }
  CHECK(files_with_errors >= 2);
}

TEST_CASE("edge_list: a file read in ranges gives the records of a whole read, numbered alike") {
  TempDir dir;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    std::mt19937_64 rng(seed);
    const std::string path =
        dir.Write("s.txt", RandomEdgeListText(rng, seed == 1 ? 3 : 20'000 * seed, 0));
    std::vector<EdgeRecord> whole;
    auto reader = EdgeListReader::Open(path);
    EdgeRecord e;
    while ((*reader)->Next(&e)) whole.push_back(e);
    REQUIRE((*reader)->status().ok());
    for (int parts : {1, 2, 3, 7}) {
      CAPTURE(seed);
      CAPTURE(parts);
      auto ranges = EdgeListReader::Split(path, parts);
      REQUIRE(ranges.ok());
      CHECK(ranges->size() <= static_cast<size_t>(parts));
      if (seed > 1) CHECK(ranges->size() == static_cast<size_t>(parts));
      std::vector<EdgeRecord> pieces;
      uint64_t lines = 0;
      for (EdgeListRange range : *ranges) {
        range.first_line = lines;
        auto part = EdgeListReader::Open(path, range);
        REQUIRE(part.ok());
        while ((*part)->Next(&e)) pieces.push_back(e);
        REQUIRE((*part)->status().ok());
        lines = (*part)->lines();
      }
      REQUIRE(pieces.size() == whole.size());
      for (size_t i = 0; i < whole.size(); ++i) REQUIRE(SameRecord(pieces[i], whole[i]));
    }
  }
  // A gzip file is one range: it can only be read from its start.
  auto ranges = EdgeListReader::Split(dir.Write("s.gz", "1 2\n3 4\n5 6\n", true), 2);
  REQUIRE(ranges.ok());
  CHECK(ranges->size() == 1);
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
  const std::string path = std::string(RELGRAPH_TEST_DATA) + "/soc-Epinions1.txt.gz";
  REQUIRE_MESSAGE(fs::exists(path), "the repository's copy is missing: ", path);
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

// Imports `list` into the new directory `data` and loads it into a graph: both must count
// every kind of edge alike, name as many users and hold the same edges. Returns the load's
// counts.
EdgeListLoadStats ExpectImportEqualsLoad(const std::string& list, const std::string& data,
                                         uint32_t cap) {
  Graph loaded(ImportOptions(cap));
  auto load_stats = LoadEdgeList(list, loaded, {});
  REQUIRE(load_stats.ok());
  fs::create_directories(data);
  auto imported = ImportEdgeListToSnapshot(Env::Posix(), list, data, {.max_following = cap});
  REQUIRE_MESSAGE(imported.ok(), imported.status().ToString());
  CHECK(imported->stats.edges_read == load_stats->edges_read);
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
  return *load_stats;
}

TEST_CASE("import: the direct import to a snapshot equals loading the same list into a graph") {
  // Both paths count self-loops, duplicates and over-cap edges the same way and keep the same
  // edges; groups of both sizes (the short-group scan and the sorted path) occur. Plain files
  // are parsed in two ranges on two threads, gzip ones whole; seed 7 has no cap and a list
  // longer than a snapshot block.
  TempDir dir;
  for (uint64_t seed = 1; seed <= 7; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    const uint32_t cap = seed == 7 ? kMaxFollowingLimit : seed % 2 ? 5 : 40;
    std::string text;
    for (int i = 0; i < 20'000; ++i) {
      // A few heavy followers with long groups, many light ones; few followees: duplicates.
      const uint64_t a = rng() % 4 == 0 ? 1 + rng() % 3 : 1 + rng() % 2'000;
      const uint64_t b = 1 + rng() % 60;
      text += std::to_string(a) + " " + std::to_string(b) + " " +
              std::to_string(1'600'000'000'000 + rng() % 50) + "\n";
    }
    if (seed == 7) {
      for (int i = 0; i < 70'000; ++i) {  // with times: each path reads a clock of its own
        text += "5000 " + std::to_string(10'000 + i) + " " + std::to_string(1'600'000'000'000 + i) +
                "\n";
      }
    }
    const std::string list = dir.Write(
        "list" + std::to_string(seed) + (seed % 3 == 0 ? ".gz" : ".txt"), text, seed % 3 == 0);
    const EdgeListLoadStats load_stats =
        ExpectImportEqualsLoad(list, (dir.path / ("data" + std::to_string(seed))).string(), cap);
    if (seed != 7) CHECK(load_stats.over_cap > 0);
    CHECK(load_stats.duplicates > 0);
  }
}

TEST_CASE("import: tiny lists import as they load") {
  // Fewer rows than buckets, a file too short to split, no edge at all. (A shift by 64 for
  // a bucket count of 1 once crashed the import of a one-line file.)
  TempDir dir;
  const std::vector<std::string> texts = {"",      "# only a comment\n\n", "1 2 5",
                                          "1 1\n", "1 2 5\n3 4 5",         "1 2 5\n1 2 6\n2 1 7\n"};
  for (size_t i = 0; i < texts.size(); ++i) {
    CAPTURE(i);
    ExpectImportEqualsLoad(dir.Write("tiny" + std::to_string(i) + ".txt", texts[i]),
                           (dir.path / ("tiny_data" + std::to_string(i))).string(), 1000);
  }
}

TEST_CASE("import: a bad line anywhere is named exactly as a load names it") {
  // The import parses a plain file in two ranges on two threads; an error in the second range
  // must still carry its line number from the file's start, and the first bad line wins.
  TempDir dir;
  std::string good;
  for (int i = 0; i < 5'000; ++i)
    good += std::to_string(1 + i) + " " + std::to_string(2 + i) + "\n";
  const std::string early = "1 x\n", late_id0 = "0 7\n", late_bad = "8 9 10 11\n";
  const std::vector<std::string> files = {
      good + good + late_bad + good,          // in the second half
      good + good + late_id0 + good,          // id 0 without an offset, second half
      early + good + good + late_bad + good,  // both halves: the first one is reported
      good + early + good + good,             // first half
  };
  for (size_t i = 0; i < files.size(); ++i) {
    CAPTURE(i);
    const std::string list = dir.Write("bad" + std::to_string(i) + ".txt", files[i]);
    Graph loaded(ImportOptions());
    auto load = LoadEdgeList(list, loaded, {});
    REQUIRE_FALSE(load.ok());
    const std::string data = (dir.path / ("bad_data" + std::to_string(i))).string();
    fs::create_directories(data);
    auto imported = ImportEdgeListToSnapshot(Env::Posix(), list, data, {});
    REQUIRE_FALSE(imported.ok());
    CHECK(imported.status().code() == load.status().code());
    CHECK(imported.status().message() == load.status().message());
    CHECK_FALSE(fs::exists(JoinPath(data, SnapshotName(0))));
  }
}

}  // namespace
}  // namespace relgraph
