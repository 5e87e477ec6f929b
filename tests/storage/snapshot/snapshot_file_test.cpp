#include <doctest.h>

#include <array>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include <xxhash.h>

#include "storage/coding.h"
#include "storage/env/fault_injection_env.h"
#include "storage/env/file_names.h"
#include "storage/snapshot/snapshot_file.h"
#include "tests/storage/test_dir.h"

namespace relgraph {
namespace {

using testing::TestDir;
using Lists = std::map<uint64_t, std::vector<std::pair<uint64_t, int64_t>>>;

Lists RandomLists(uint64_t seed, int followers, int celebrity_edges) {
  std::mt19937_64 rng(seed);
  Lists lists;
  for (int f = 0; f < followers; ++f) {
    auto& l = lists[rng() | 1];
    const int n = f == 0 ? celebrity_edges : static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i)
      l.push_back({rng() | 1, static_cast<int64_t>(rng() % (int64_t{1} << 42))});
  }
  return lists;
}

Result<SnapshotInfo> Write(Env* env, const std::string& dir, uint64_t lsn, const Lists& lists,
                           SnapshotCompression compression = SnapshotCompression::kInline) {
  auto w = SnapshotWriter::Create(env, dir, lsn, 123, SnapshotLayout::kEdgeList, compression);
  if (!w.ok()) return w.status();
  for (const auto& [follower, l] : lists) {
    std::vector<SnapshotEdge> edges;
    for (auto [b, ts] : l) edges.push_back({b, ts});
    RELGRAPH_RETURN_IF_ERROR((*w)->Add(follower, edges));
  }
  return (*w)->Finish();
}

Result<Lists> Read(Env* env, const std::string& path) {
  Lists got;
  SnapshotVisitor visitor;
  visitor.edges = [&](uint64_t f, std::span<const SnapshotEdge> edges) {
    for (const SnapshotEdge& e : edges) got[f].push_back({e.followee, e.ts_ms});
    return Status::OK();
  };
  auto info = ReadSnapshot(env, path, visitor);
  if (!info.ok()) return info.status();
  return got;
}

// Rewrites `path` with a random bit flipped or cut short, `trials` times: every read must fail
// with kCorruption naming the file. The original is put back at the end.
void ExpectEveryDamageCaught(Env* env, const std::string& path, int trials, uint32_t seed) {
  const std::string original = *env->ReadFile(path);
  std::mt19937 rng(seed);
  auto put = [&](const std::string& bytes) {
    auto f = env->OpenWritable(path, true);
    REQUIRE((*f)->Append(bytes).ok());
    REQUIRE((*f)->Close().ok());
  };
  for (int trial = 0; trial < trials; ++trial) {
    std::string damaged = original;
    if (trial % 3 == 0) {
      damaged.resize(rng() % original.size());
    } else {
      const size_t at = rng() % damaged.size();
      damaged[at] = static_cast<char>(damaged[at] ^ (1 << (rng() % 8)));
    }
    put(damaged);
    auto r = ReadSnapshot(env, path);
    CAPTURE(trial);
    REQUIRE(r.status().code() == Code::kCorruption);
    CHECK(r.status().message().find(path) != std::string::npos);
  }
  put(original);
  CHECK(ReadSnapshot(env, path).ok());
}

TEST_CASE("snapshot_file: lists round-trip, long lists span blocks, counts match") {
  TestDir dir;
  const Lists lists = RandomLists(1, 2000, 200'000);  // 200k edges: more than one 1 MiB block
  auto info = Write(Env::Posix(), dir.path(), 77, lists);
  REQUIRE_MESSAGE(info.ok(), info.status().ToString());
  CHECK(info->lsn == 77);
  CHECK(info->blocks >= 4);
  const std::string path = JoinPath(dir.path(), SnapshotName(77));
  CHECK_FALSE(Env::Posix()->Exists(JoinPath(dir.path(), SnapshotTempName(77))));
  auto got = Read(Env::Posix(), path);
  REQUIRE(got.ok());
  Lists want = lists;
  std::erase_if(want, [](const auto& kv) { return kv.second.empty(); });
  CHECK(*got == want);
  auto again = ReadSnapshot(Env::Posix(), path);
  CHECK(again->edges == info->edges);
  CHECK(again->created_ms == 123);
}

TEST_CASE("snapshot_file: blocks filled on two threads keep each follower's entries in one run") {
  // Two threads each fill SnapshotEdgeBlocks and append finished blocks as they go, as the
  // import does. Lists longer than a block (70k edges) span blocks; the loader needs every
  // follower's entries consecutive, so no block of the other thread may land inside one.
  TestDir dir;
  std::array<Lists, 2> halves = {RandomLists(5, 3000, 70'000), RandomLists(6, 3000, 150'000)};
  for (int extra = 0; extra < 4; ++extra) {  // more long lists, interleaved with short ones
    halves[extra % 2][(static_cast<uint64_t>(extra) << 40) | 2] =
        RandomLists(7 + extra, 1, 70'000).begin()->second;
  }
  auto w = SnapshotWriter::Create(Env::Posix(), dir.path(), 9, 123);
  REQUIRE(w.ok());
  std::array<Status, 2> status;
  auto fill = [&](int t) {
    SnapshotEdgeBlocks blocks;
    for (const auto& [follower, l] : halves[t]) {
      std::vector<SnapshotEdge> edges;
      for (auto [b, ts] : l) edges.push_back({b, ts});
      status[t] = blocks.Add(follower, edges);
      if (status[t].ok() && blocks.has_finished_blocks())
        status[t] = (*w)->AppendEdgeBlocks(blocks);
      if (!status[t].ok()) return;
    }
    status[t] = blocks.Finish();
    if (status[t].ok()) status[t] = (*w)->AppendEdgeBlocks(blocks);
  };
  std::thread other(fill, 1);
  fill(0);
  other.join();
  REQUIRE(status[0].ok());
  REQUIRE(status[1].ok());
  auto info = (*w)->Finish();
  REQUIRE_MESSAGE(info.ok(), info.status().ToString());

  Lists got, want;
  std::set<uint64_t> finished;  // followers whose run has ended
  uint64_t current = 0;
  bool split = false;
  SnapshotVisitor visitor;
  visitor.edges = [&](uint64_t f, std::span<const SnapshotEdge> edges) {
    if (f != current) {
      if (current != 0) finished.insert(current);
      split = split || finished.count(f) > 0;
      current = f;
    }
    for (const SnapshotEdge& e : edges) got[f].push_back({e.followee, e.ts_ms});
    return Status::OK();
  };
  auto read = ReadSnapshot(Env::Posix(), JoinPath(dir.path(), SnapshotName(9)), visitor);
  REQUIRE_MESSAGE(read.ok(), read.status().ToString());
  CHECK_FALSE(split);
  for (const Lists& half : halves)
    for (const auto& [f, l] : half)
      if (!l.empty()) want[f] = l;
  CHECK(got == want);
  CHECK(read->edges == info->edges);
  CHECK(read->entries > want.size());  // long lists did span blocks
}

TEST_CASE("snapshot_file: any bit flip or truncation is detected, never loaded") {
  TestDir dir;
  Env* env = Env::Posix();
  REQUIRE(Write(env, dir.path(), 5, RandomLists(2, 300, 500)).ok());
  const std::string path = JoinPath(dir.path(), SnapshotName(5));
  ExpectEveryDamageCaught(env, path, 300, 3);
}

TEST_CASE("snapshot_file: an abandoned or failing writer leaves no snapshot behind") {
  TestDir dir;
  FaultInjectionEnv env(Env::Posix());
  {
    auto w = SnapshotWriter::Create(&env, dir.path(), 9, 0);
    REQUIRE(w.ok());
    std::vector<SnapshotEdge> e{{2, 3}};
    REQUIRE((*w)->Add(1, e).ok());
  }  // destroyed unfinished
  CHECK(env.ListDir(dir.path())->empty());
  env.FailNthSync(1);
  auto info = Write(&env, dir.path(), 9, RandomLists(4, 10, 10));
  CHECK(info.status().code() == Code::kIOError);
  CHECK(env.ListDir(dir.path())->empty());
  // A failed append of any block fails the snapshot and leaves nothing behind, also when a
  // background thread appends the blocks and a later call reports the failure.
  for (auto compression : {SnapshotCompression::kInline, SnapshotCompression::kBackground}) {
    for (int n = 2; n <= 6; ++n) {
      CAPTURE(n);
      CAPTURE(static_cast<int>(compression));
      env.FailNthWrite(n);  // counted from now: the header is write 1, blocks follow
      auto failed = Write(&env, dir.path(), 10, RandomLists(5, 2000, 200'000), compression);
      CHECK(failed.status().code() == Code::kIOError);
      CHECK(env.ListDir(dir.path())->empty());
    }
  }
}

}  // namespace
}  // namespace relgraph

namespace relgraph {
namespace {

// Version 3: storage frames the engine's image records without reading them.
std::vector<std::string> RandomRecords(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> records;
  for (int i = 0; i < n; ++i) {
    std::string r(4 * (1 + rng() % (i == 0 ? 100'000 : 500)), '\0');
    for (char& c : r) c = static_cast<char>(rng() % 7);  // compressible, like real records
    records.push_back(std::move(r));
  }
  return records;
}

Result<SnapshotInfo> WriteImage(Env* env, const std::string& dir, uint64_t lsn,
                                const std::vector<std::string>& records) {
  auto w = SnapshotWriter::Create(env, dir, lsn, 5, SnapshotLayout::kGraphImage);
  if (!w.ok()) return w.status();
  (*w)->SetImageCounts(11, 22);
  for (const std::string& r : records) RELGRAPH_RETURN_IF_ERROR((*w)->AddImageRecord(r));
  RELGRAPH_RETURN_IF_ERROR((*w)->AddFeedRecord("feed"));
  return (*w)->Finish();
}

TEST_CASE("snapshot_file: image records round-trip in order, and the footer keeps the counts") {
  TestDir dir;
  const auto records = RandomRecords(1, 3'000);
  auto info = WriteImage(Env::Posix(), dir.path(), 8, records);
  REQUIRE_MESSAGE(info.ok(), info.status().ToString());
  CHECK(info->version == 5);
  const std::string path = JoinPath(dir.path(), SnapshotName(8));
  std::string images, feed;
  SnapshotInfo counts;
  SnapshotVisitor v;
  v.counts = [&](const SnapshotInfo& c) {
    counts = c;
    return Status::OK();
  };
  v.image_block = [&](std::string_view raw) {
    images.append(raw);
    return Status::OK();
  };
  v.feed_block = [&](std::string_view raw) {
    feed.append(raw);
    return Status::OK();
  };
  v.edges = [](uint64_t, std::span<const SnapshotEdge>) {
    return Status::Corruption("no edge lists in an image");
  };
  auto read = ReadSnapshot(Env::Posix(), path, v);
  REQUIRE_MESSAGE(read.ok(), read.status().ToString());
  std::string want;
  for (const std::string& r : records) want += r;
  CHECK(images == want);  // blocks end on record boundaries: concatenated, nothing lost
  CHECK(feed == "feed");
  CHECK(counts.version == 5);
  CHECK(counts.entries == 11);
  CHECK(counts.edges == 22);
  CHECK(read->blocks > 2);
  CHECK(read->feed_blocks == 1);
  CHECK(read->edges == 22);

  // A callback's error stops the read at once (the read-ahead thread is stopped, not waited out).
  int calls = 0;
  SnapshotVisitor stop;
  stop.image_block = [&](std::string_view) {
    ++calls;
    return Status::Corruption("engine says no");
  };
  CHECK(ReadSnapshot(Env::Posix(), path, stop).status().message() == "engine says no");
  CHECK(calls == 1);

  // Every bit flip or cut is still caught by the framing.
  ExpectEveryDamageCaught(Env::Posix(), path, 100, 4);
}

TEST_CASE("snapshot_file: records over 1 MiB and mixed layouts are refused") {
  TestDir dir;
  auto w = SnapshotWriter::Create(Env::Posix(), dir.path(), 1, 0, SnapshotLayout::kGraphImage);
  REQUIRE(w.ok());
  CHECK((*w)->AddImageRecord(std::string(kSnapshotMaxRecord + 1, 'x')).code() ==
        Code::kInvalidArgument);
  std::vector<SnapshotEdge> e{{2, 3}};
  CHECK((*w)->Add(1, e).code() == Code::kInternal);
  auto v2 = SnapshotWriter::Create(Env::Posix(), dir.path(), 2, 0);
  REQUIRE(v2.ok());
  CHECK((*v2)->AddImageRecord("abcd").code() == Code::kInternal);
}

}  // namespace
}  // namespace relgraph

namespace relgraph {
namespace {

// Rewrites the version in a finished file's header and footer, with both checksums.
void SetVersion(const std::string& path, uint32_t version) {
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  EncodeFixed32(bytes.data() + 8, version);
  EncodeFixed64(bytes.data() + 28, XXH3_64bits(bytes.data(), 28));
  const size_t footer = bytes.size() - 48;
  bytes[footer + 7] = static_cast<char>(version);
  EncodeFixed64(bytes.data() + footer + 40, XXH3_64bits(bytes.data() + footer, 40));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST_CASE("snapshot_file: version 3 and 4 images still read; a version past 5 is refused by name") {
  TestDir dir;
  auto info = WriteImage(Env::Posix(), dir.path(), 8, RandomRecords(2, 50));
  REQUIRE(info.ok());
  const std::string path = JoinPath(dir.path(), SnapshotName(8));
  SetVersion(path, 3);
  auto read = ReadSnapshot(Env::Posix(), path);
  REQUIRE_MESSAGE(read.ok(), read.status().ToString());
  CHECK(read->version == 3);
  CHECK(read->feed_blocks == 1);
  SetVersion(path, 4);
  read = ReadSnapshot(Env::Posix(), path);
  REQUIRE_MESSAGE(read.ok(), read.status().ToString());
  CHECK(read->version == 4);
  SetVersion(path, 6);
  read = ReadSnapshot(Env::Posix(), path);
  REQUIRE_FALSE(read.ok());
  CHECK(read.status().message().find("unsupported version 6") != std::string::npos);
}

}  // namespace
}  // namespace relgraph
