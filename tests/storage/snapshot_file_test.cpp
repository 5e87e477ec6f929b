#include <doctest.h>

#include <map>
#include <random>
#include <vector>

#include "storage/fault_injection_env.h"
#include "storage/file_names.h"
#include "storage/snapshot_file.h"
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

Result<SnapshotInfo> Write(Env* env, const std::string& dir, uint64_t lsn, const Lists& lists) {
  auto w = SnapshotWriter::Create(env, dir, lsn, 123);
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

TEST_CASE("snapshot_file: any bit flip or truncation is detected, never loaded") {
  TestDir dir;
  Env* env = Env::Posix();
  REQUIRE(Write(env, dir.path(), 5, RandomLists(2, 300, 500)).ok());
  const std::string path = JoinPath(dir.path(), SnapshotName(5));
  const std::string original = *env->ReadFile(path);
  std::mt19937 rng(3);
  auto put = [&](const std::string& bytes) {
    auto f = env->OpenWritable(path, true);
    REQUIRE((*f)->Append(bytes).ok());
    REQUIRE((*f)->Close().ok());
  };
  for (int trial = 0; trial < 300; ++trial) {
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
}

}  // namespace
}  // namespace relgraph
