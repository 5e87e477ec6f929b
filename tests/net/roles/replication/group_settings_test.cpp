// The replication group's settings file: absent means never set, a save is read back, a
// damaged file is refused naming it, and a save replaces the file whole.
#include "net/roles/replication/group_settings.h"

#include <doctest.h>

#include "tests/storage/test_dir.h"

namespace relgraph {
namespace {

TEST_CASE("group settings: a directory without the file has none") {
  testing::TestDir dir;
  auto got = LoadGroupSettings(Env::Posix(), dir.path());
  REQUIRE(got.ok());
  CHECK_FALSE(got->has_value());
}

TEST_CASE("group settings: a save is read back, and a later save replaces it") {
  testing::TestDir dir;
  for (uint32_t n : {1u, 0u, 16u}) {
    REQUIRE(SaveGroupSettings(Env::Posix(), dir.path(), GroupSettings{n}).ok());
    auto got = LoadGroupSettings(Env::Posix(), dir.path());
    REQUIRE(got.ok());
    REQUIRE(got->has_value());
    CHECK((*got)->sync_replicas == n);
  }
  CHECK_FALSE(Env::Posix()->Exists(JoinPath(dir.path(), std::string(kGroupSettingsFile) + ".tmp")));
}

TEST_CASE("group settings: a damaged file is refused, naming it") {
  testing::TestDir dir;
  const std::string path = JoinPath(dir.path(), kGroupSettingsFile);
  for (const char* text : {"", "sync_replicas=", "sync_replicas=x\n", "sync_replicas=1 2\n",
                           "replicas=1\n", "sync_replicas=99999999999\n"}) {
    CAPTURE(text);
    {
      auto f = Env::Posix()->OpenWritable(path, /*truncate=*/true);
      REQUIRE(f.ok());
      REQUIRE((*f)->Append(text).ok());
      REQUIRE((*f)->Close().ok());
    }
    auto got = LoadGroupSettings(Env::Posix(), dir.path());
    REQUIRE_FALSE(got.ok());
    CHECK(got.status().code() == Code::kCorruption);
    CHECK(got.status().message().find(path) != std::string::npos);
  }
}

}  // namespace
}  // namespace relgraph
