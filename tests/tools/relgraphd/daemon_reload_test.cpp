// What a reload changes: live settings by their value in force, the others as needing a
// restart, keys that went back to their default, and nothing for an unchanged file.
#include "tools/relgraphd/daemon_reload.h"

#include <doctest.h>

namespace relgraph {
namespace {

DaemonConfig Parsed(const std::vector<std::string>& args) {
  auto c = ParseDaemonConfig(args);
  REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  return *c;
}

TEST_CASE("daemon reload: live settings are applied by value, others need a restart") {
  const DaemonConfig a = Parsed({"--slowlog-us=10000", "--max-frame=65536", "--log-level=info"});
  const DaemonConfig b =
      Parsed({"--slowlog-us=500", "--max-frame=131072", "--log-format=json", "--io-threads=2"});
  const ReloadPlan plan = DiffReload(a, b);
  CHECK(plan.applies);
  CHECK(plan.log ==
        std::vector<std::string>{"reload: io-threads (default) -> 2 needs a restart: not applied",
                                 "reload: log-format text -> json",
                                 "reload: max-frame 65536 -> 131072 needs a restart: not applied",
                                 "reload: slowlog-us 10000 -> 500"});
}

TEST_CASE(
    "daemon reload: a key dropped from the file goes back to its default; same value is no "
    "change") {
  const DaemonConfig a = Parsed({"--slowlog-us=off", "--max-connections=10", "--log-level=info"});
  const DaemonConfig b = Parsed({"--max-connections=10"});
  const ReloadPlan plan = DiffReload(a, b);
  CHECK(plan.log == std::vector<std::string>{"reload: slowlog-us -1 -> 10000"});
  CHECK(DiffReload(a, a).log.empty());
  CHECK_FALSE(DiffReload(a, a).applies);
  // A restart-only change alone applies nothing.
  CHECK_FALSE(DiffReload(Parsed({}), Parsed({"--fsync=always"})).applies);
}

TEST_CASE("daemon reload: the live keys") {
  for (const char* k : {"log-level", "log-format", "slowlog-us", "slowlog-max-len",
                        "max-connections", "idle-timeout-ms", "send-timeout-ms",
                        // security: their files are read again on every SIGHUP
                        "tls-cert", "tls-key", "tls-ca", "clients-file", "auth-token"}) {
    CHECK(LiveSetting(k));
  }
  for (const char* k : {"listen", "data-dir", "fsync", "io-threads", "max-frame", "link-tls",
                        "require-tls"}) {
    CHECK_FALSE(LiveSetting(k));
  }
}

}  // namespace
}  // namespace relgraph
