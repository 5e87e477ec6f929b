// The relgraphd binary as an operator runs it: flags, then SIGTERM in the middle of a write
// load under fsync=always, which must lose no acknowledged write.
#include <doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include <fstream>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "engine/db.h"
#include "net/client/client.h"
#include "relgraph_version.h"
#include "tests/storage/test_dir.h"
#include "tests/tools/relgraphd_process.h"
#include "tests/tools/run_command.h"

namespace relgraph {
namespace {

TEST_CASE("relgraphd: --help exits 0, a bad flag exits 2 naming it") {
  testing::TestDir dir;
  const std::string log = dir.path() + "/log";
  CHECK(WaitExit(Spawn({"--help"}, log)) == 0);
  CHECK(WaitExit(Spawn({"--fsync=sometimes"}, log)) == 2);
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("--fsync=sometimes") != std::string::npos);
}

// A unix datagram socket standing in for systemd's $NOTIFY_SOCKET.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    REQUIRE(path.size() < sizeof addr.sun_path);
    std::memcpy(addr.sun_path, path.data(), path.size());
    REQUIRE(bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
  }
  ~NotifySocket() { close(fd_); }
  // The next datagram within 10 s, or "" if none came.
  std::string Next() {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 10'000) != 1) return "";
    char buf[4096];
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }

 private:
  std::string path_;
  int fd_ = -1;
};

TEST_CASE("relgraphd: tells systemd it is ready once it serves, and that it stops (sd_notify)") {
  testing::TestDir dir;
  const std::string log = dir.path() + "/log";
  NotifySocket notify(dir.path() + "/notify");
  REQUIRE(setenv("NOTIFY_SOCKET", (dir.path() + "/notify").c_str(), 1) == 0);
  const pid_t pid = Spawn({"--listen=127.0.0.1:0", "--data-dir=" + dir.path() + "/data"}, log);
  unsetenv("NOTIFY_SOCKET");
  const std::string ready = notify.Next();
  CHECK(ready.rfind("READY=1\n", 0) == 0);
  CHECK(ready.find("STATUS=serving on 127.0.0.1:") != std::string::npos);
  // Ready means ready: the port it names accepts a request at once.
  net::ClientOptions options;
  options.port = WaitForPort(log);
  CHECK(ready.find(":" + std::to_string(options.port) + " at lsn 0") != std::string::npos);
  auto client = net::Client::Connect(options);
  REQUIRE(client.ok());
  CHECK((*client)->Ping().ok());
  REQUIRE(kill(pid, SIGTERM) == 0);
  CHECK(notify.Next().rfind("STOPPING=1", 0) == 0);
  CHECK(WaitExit(pid) == 0);
}

TEST_CASE("relgraphd: SIGTERM during a write load loses no acknowledged write (fsync=always)") {
  testing::TestDir dir;
  const std::string data = dir.path() + "/data";
  const std::string log = dir.path() + "/log";
  const pid_t pid = Spawn({"--listen=127.0.0.1:0", "--data-dir=" + data, "--fsync=always",
                           "--rate-limit=off", "--snapshot-interval-s=0"},
                          log);
  net::ClientOptions options;
  options.port = WaitForPort(log);

  std::mutex mu;
  std::set<std::pair<uint64_t, uint64_t>> acked;
  std::atomic<uint64_t> total{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 6; ++t) {
    writers.emplace_back([&, t] {
      auto client = net::Client::Connect(options);
      if (!client.ok()) return;
      for (uint64_t round = 0;; ++round) {
        std::vector<std::pair<uint64_t, uint64_t>> batch;
        for (uint64_t k = 0; k < 16; ++k) {
          const uint64_t a = uint64_t(t + 1) * 1'000'000 + round * 16 + k;
          batch.emplace_back(a, a % 997 + 1);
          (*client)->Queue(net::FollowRequest{a, a % 997 + 1, std::nullopt});
        }
        auto replies = (*client)->Flush();
        if (!replies.ok()) return;  // the server is going away
        std::lock_guard lock(mu);
        for (size_t i = 0; i < batch.size(); ++i) {
          if ((*replies)[i].status.ok()) acked.insert(batch[i]);
        }
        total += batch.size();
      }
    });
  }
  while (total.load() < 3000) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::kill(pid, SIGTERM);
  for (auto& w : writers) w.join();
  CHECK(WaitExit(pid) == 0);

  DbOptions o;
  o.graph.rate_limit.enabled = false;
  auto db = Db::Open(data, o);
  REQUIRE(db.ok());
  size_t missing = 0;
  (*db)->Read([&](const Graph& g) {
    for (const auto& [a, b] : acked) {
      auto r = g.GetRelation(a, b);
      if (!r.ok() || (*r != Relation::kFollowing && *r != Relation::kMutual)) ++missing;
    }
    return 0;
  });
  MESSAGE(acked.size() << " writes acknowledged before the shutdown");
  CHECK(acked.size() >= 3000);
  CHECK(missing == 0);
}

TEST_CASE("relgraphd: --version prints the version from CMake's project() and exits 0") {
  const testing::Ran ran =
      testing::RunShell(std::string("'") + RELGRAPHD_PATH + "' --version --data-dir=/nonexistent");
  CHECK(ran.exit_code == 0);
  CHECK(ran.out == std::string("relgraphd ") + kVersion + "\n");
}

}  // namespace
}  // namespace relgraph
