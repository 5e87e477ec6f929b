// A relgraphd node for replication tests (real processes on loopback): its own data
// directory, log and port (kept across restarts, so a restarted primary keeps its address),
// started with the test's flags and stopped by its PID.
#pragma once

#include <doctest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "net/client/client.h"
#include "tests/storage/test_dir.h"
#include "tests/tools/relgraphd_process.h"
#include "tools/admin/admin_commands.h"

namespace relgraph::testing {

// A port nobody listens on now, kept for the node's life so that a restarted primary keeps
// its address. Drawn below the kernel's ephemeral range (32768-60999), which the outgoing
// connections of every test running beside this one use: a port from there could be taken
// between two runs of the same node.
inline uint16_t FreePort() {
  static std::mt19937 rng(static_cast<uint32_t>(::getpid()));
  for (;;) {
    const auto port = static_cast<uint16_t>(20000 + rng() % 12000);
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    if (free) return port;
  }
}

struct Node {
  TestDir dir;
  std::string log = dir.path() + "/relgraphd.log";
  std::string data = dir.path() + "/data";
  uint16_t port = FreePort();
  pid_t pid = 0;
  net::ClientOptions client;  // token and TLS of the test's connections (host and port: ours)

  void Start(std::vector<std::string> extra) {
    std::vector<std::string> args = {"--listen=127.0.0.1:" + std::to_string(port),
                                     "--data-dir=" + data,
                                     "--rate-limit=off",
                                     "--snapshot-interval-s=0",
                                     "--max-following=60",
                                     "--feed-celebrity-fans=25",
                                     "--feed-posts-per-author=8",
                                     "--wal-segment-bytes=65536",
                                     "--keep-snapshots=1",
                                     "--log-level=info"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::remove(log.c_str());  // or WaitForPort could read the last run's "listening on"
    pid = Spawn(args, log);
    REQUIRE(WaitForPort(log, pid) == port);
  }
  void Signal(int sig) { ::kill(pid, sig); }
  void Kill() {
    ::kill(pid, SIGKILL);
    WaitExit(pid);
    pid = 0;
  }
  void Stop() {
    ::kill(pid, SIGTERM);
    CHECK(WaitExit(pid) == 0);
    pid = 0;
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port); }
  std::unique_ptr<net::Client> Connect() const {
    net::ClientOptions o = client;
    o.host = "127.0.0.1";
    o.port = port;
    o.io_timeout = std::chrono::milliseconds(20000);
    auto c = net::Client::Connect(o);
    REQUIRE_MESSAGE(c.ok(), c.status().ToString());
    return std::move(*c);
  }
  uint64_t Info(const char* field) const {
    auto info = Connect()->Info();
    REQUIRE(info.ok());
    return info->Get(field).value_or(0);
  }
  ~Node() {
    if (pid != 0) Kill();
  }
};

// Waits until the replica streams from its primary and has applied everything the primary had
// logged when the wait began. Its link state is read first: a replica told to --resync still
// reports the LSN of the data it is about to discard until the copy is done, and streams only
// after it.
inline void WaitCaughtUp(const Node& primary, const Node& replica) {
  const uint64_t want = primary.Info("last_lsn");
  for (int i = 0; i < 1500; ++i) {
    auto link = replica.Connect()->Replication();
    if (link.ok() && link->state == "streaming" && replica.Info("last_lsn") >= want) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto r = replica.Connect()->Replication();
  FAIL("replica stuck at LSN " << replica.Info("last_lsn") << " of " << want << ": "
                               << (r.ok() ? r->state + " " + r->message : r.status().ToString()));
}

// The digest lines `relgraph-admin verify` prints for the node's data directory.
inline std::string VerifyDigests(const Node& node) {
  std::ostringstream out, err;
  const int code = admin::Run({"verify", node.data}, out, err);
  REQUIRE_MESSAGE(code == 0, err.str());
  const std::string text = out.str();
  const size_t at = text.find("\ndigest ");
  REQUIRE(at != std::string::npos);
  return text.substr(at + 1);
}

}  // namespace relgraph::testing
