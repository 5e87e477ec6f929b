// Real redis-server and PostgreSQL processes for tests of the comparison designs: each started
// with fork/exec on a free loopback port, in the test's directory, and stopped by its pid.
// PostgreSQL refuses to run as root; as root, its processes run as the `postgres` user the
// Debian package creates, in a directory handed to that user.
#pragma once

#include <arpa/inet.h>
#include <doctest.h>
#include <hiredis/hiredis.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/tools/child_process.h"
#include "tests/tools/free_port.h"

namespace relgraph::testing {

// Runs `argv` with stdout and stderr appended to `log`, as user `run_as` when given.
inline pid_t SpawnAs(const std::vector<std::string>& argv, const std::string& log,
                     const passwd* run_as) {
  return SpawnProgram(argv,
                      {.stderr_path = log, .stdout_path = log, .append = true, .run_as = run_as});
}

struct RedisServerProcess {
  explicit RedisServerProcess(const std::string& dir) {
    std::filesystem::create_directories(dir);
    port = FreeLoopbackPort();
    pid = SpawnAs({REDIS_SERVER_PATH, "--port", std::to_string(port), "--bind", "127.0.0.1",
                   "--save", "", "--appendonly", "no", "--dir", dir},
                  dir + "/redis.log", nullptr);
    for (int i = 0; i < 500; ++i) {
      redisContext* c = redisConnectWithTimeout("127.0.0.1", port, timeval{1, 0});
      const bool up = c && !c->err;
      if (c) redisFree(c);
      if (up) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    FAIL("redis-server did not start listening (see " << dir << "/redis.log)");
  }
  ~RedisServerProcess() {
    ::kill(pid, SIGTERM);
    WaitExit(pid);
  }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port); }
  pid_t pid = -1;
  uint16_t port = 0;
};

struct PostgresProcess {
  explicit PostgresProcess(const std::string& dir) {
    const passwd* user = ::getuid() == 0 ? ::getpwnam("postgres") : nullptr;
    REQUIRE_MESSAGE((::getuid() != 0 || user != nullptr),
                    "running as root needs the postgres user (Debian package postgresql)");
    const std::string data = dir + "/pgdata", log = dir + "/postgres.log";
    std::filesystem::create_directories(dir);
    if (user) REQUIRE(::chown(dir.c_str(), user->pw_uid, user->pw_gid) == 0);
    const pid_t init = SpawnAs({std::string(POSTGRES_BIN_DIR) + "/initdb", "-D", data, "-U",
                                "postgres", "--auth=trust", "--no-sync"},
                               log, user);
    REQUIRE_MESSAGE(WaitExit(init) == 0, "initdb failed (see " << log << ")");
    port = FreeLoopbackPort();
    pid = SpawnAs({std::string(POSTGRES_BIN_DIR) + "/postgres", "-D", data, "-p",
                   std::to_string(port), "-k", dir, "-c", "listen_addresses=127.0.0.1", "-c",
                   "fsync=off", "-c", "synchronous_commit=off"},
                  log, user);
    const std::string ping = "host=127.0.0.1 port=" + std::to_string(port) + " user=postgres";
    for (int i = 0; i < 1000; ++i) {
      if (PQping(ping.c_str()) == PQPING_OK) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    FAIL("postgres did not start listening (see " << log << ")");
  }
  ~PostgresProcess() {
    ::kill(pid, SIGINT);  // fast shutdown: ends the sessions, then stops
    WaitExit(pid);
  }
  std::string url() const {
    return "postgres://postgres@127.0.0.1:" + std::to_string(port) + "/postgres";
  }
  pid_t pid = -1;
  uint16_t port = 0;
};

}  // namespace relgraph::testing
