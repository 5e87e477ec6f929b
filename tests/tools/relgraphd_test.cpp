// The relgraphd binary as an operator runs it: flags, then SIGTERM in the middle of a write
// load under fsync=always, which must lose no acknowledged write, and a full disk.
#include <doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include <atomic>
#include <filesystem>

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

TEST_CASE("relgraphd: --follow-time-resolution=1s answers whole seconds; at 1ms it refuses the data") {
  testing::TestDir dir;
  const std::string data = dir.path() + "/data", log = dir.path() + "/log";
  const pid_t pid = Spawn({"--listen=127.0.0.1:0", "--data-dir=" + data,
                           "--follow-time-resolution=1s", "--rate-limit=off"},
                          log);
  net::ClientOptions o;
  o.port = WaitForPort(log, pid);
  auto client = net::Client::Connect(o);
  REQUIRE(client.ok());
  auto engine_time = (*client)->Follow(1, 2);
  REQUIRE(engine_time.ok());
  CHECK(engine_time->followed_at % 1000 == 0);
  auto given = (*client)->Follow(1, 3, 1'700'000'000'999);
  REQUIRE(given.ok());
  CHECK(given->followed_at == 1'700'000'000'000);
  // A cursor between two seconds keeps the entries of the second below it.
  auto page = (*client)->Following({.user = 1, .limit = 5, .after = net::WireCursor{1'700'000'000'500, 1}});
  REQUIRE(page.ok());
  REQUIRE(page->entries.size() == 1);
  CHECK(page->entries[0].user == 3);
  CHECK(page->entries[0].ts == 1'700'000'000'000);
  REQUIRE((*client)->Snapshot().ok());
  client->reset();
  REQUIRE(kill(pid, SIGTERM) == 0);
  REQUIRE(WaitExit(pid) == 0);

  const std::string log2 = dir.path() + "/log2";
  CHECK(WaitExit(Spawn({"--listen=127.0.0.1:0", "--data-dir=" + data}, log2)) != 0);
  std::ifstream in(log2);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK_MESSAGE(text.find("--follow-time-resolution=1s") != std::string::npos, text);
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
  options.port = WaitForPort(log, pid);
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
  options.port = WaitForPort(log, pid);

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

// Runs relgraphd on a small tmpfs of its own: the script mounts one on the data directory in
// a private mount namespace (unshare -rm), so nothing outlives the process, runs relgraphd
// (passing SIGTERM on), then copies the data out for the test to open, and exits with
// relgraphd's status.
constexpr const char* kSmallDiskScript = R"(#!/bin/sh
data=$1; out=$2; shift 2
mount -t tmpfs -o size=4m tmpfs "$data" || exit 99
"$@" &
child=$!
trap 'kill -TERM $child' TERM
wait $child; rc=$?
while kill -0 $child 2>/dev/null; do wait $child; rc=$?; done
cp -a "$data"/. "$out"/
exit $rc
)";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Fills the filesystem holding `path` (a file it creates) until a write fails.
void FillDisk(const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  const std::string chunk(64 << 10, 'f');
  for (int i = 0; i < 4096 && out.write(chunk.data(), chunk.size()).flush(); ++i) {
  }
}

TEST_CASE("relgraphd: a full disk refuses writes, resumes once space is freed, SIGTERM exits 0") {
  if (std::system("unshare -rm sh -c 'mount -t tmpfs -o size=64k tmpfs /tmp' >/dev/null 2>&1") !=
      0) {
    MESSAGE("skipped: cannot mount a tmpfs in a private mount namespace here");
    return;
  }
  testing::TestDir dir;
  const std::string data = dir.path() + "/data", copy = dir.path() + "/copy";
  const std::string log = dir.path() + "/log", script = dir.path() + "/run.sh";
  std::filesystem::create_directories(data);
  std::filesystem::create_directories(copy);
  std::ofstream(script) << kSmallDiskScript;
  const pid_t pid =
      testing::SpawnProgram({"/usr/bin/unshare", "-rm", "/bin/sh", script, data, copy,
                             RELGRAPHD_PATH, "--listen=127.0.0.1:0", "--data-dir=" + data,
                             "--fsync=always", "--rate-limit=off", "--snapshot-interval-s=0"},
                            {.stderr_path = log});
  net::ClientOptions options;
  options.port = WaitForPort(log);
  // The server's view of its data directory, from outside its mount namespace.
  const std::string inside = "/proc/" + std::to_string(pid) + "/root" + data;

  // Writers, a new edge per write: what was acknowledged, what was refused. Several, since a
  // write applied when the disk filled holds its writer until the WAL is repaired.
  std::mutex mu;
  std::vector<uint64_t> acked, refused;
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (uint64_t t = 0; t < 4; ++t) {
    writers.emplace_back([&, t] {
      auto client = net::Client::Connect(options);
      if (!client.ok()) return;  // the checks below fail
      for (uint64_t a = (t + 1) * 10'000'000; !stop; ++a) {
        auto r = (*client)->Call(net::FollowRequest{a, 1'000'000, std::nullopt});
        std::lock_guard lock(mu);
        if (r.ok()) {
          acked.push_back(a);
        } else if (r.status().code() == Code::kUnavailable) {
          refused.push_back(a);
        } else {
          return;  // the server is going away
        }
      }
    });
  }
  auto wait_for = [&](auto done) {
    for (int i = 0; i < 3000 && !done(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return done();
  };
  auto counts = [&] {
    std::lock_guard lock(mu);
    return std::pair{acked.size(), refused.size()};
  };
  auto info = [&](const char* field) {
    auto client = net::Client::Connect(options);
    REQUIRE(client.ok());
    auto reply = (*client)->Info();
    REQUIRE(reply.ok());
    return reply->Get(field).value_or(99);
  };

  // On a failed REQUIRE: stop the server (the script passes SIGTERM on) and the writers.
  struct Cleanup {
    pid_t pid;
    std::atomic<bool>& stop;
    std::vector<std::thread>& writers;
    bool done = false;
    ~Cleanup() {
      if (done) return;
      stop = true;
      ::kill(pid, SIGTERM);
      for (auto& w : writers) w.join();
      WaitExit(pid);
    }
  } cleanup{pid, stop, writers};
  // A write of the test's own once the server says writes are refused (the writers' writes
  // in flight when the disk filled are held, not refused: they were applied already).
  uint64_t next_probe = 900'000'000;
  auto refused_now = [&] {
    auto client = net::Client::Connect(options);
    REQUIRE(client.ok());
    const uint64_t a = next_probe++;
    auto r = (*client)->Call(net::FollowRequest{a, 1'000'000, std::nullopt});
    std::lock_guard lock(mu);
    if (r.ok()) acked.push_back(a);
    if (r.ok() || r.status().code() != Code::kUnavailable) return std::string();
    refused.push_back(a);
    return r.status().message();
  };

  REQUIRE(wait_for([&] { return counts().first >= 200; }));
  CHECK(info("writes_refused") == 0);
  FillDisk(inside + "/filler");
  REQUIRE(wait_for([&] { return info("writes_refused") == 1; }));
  CHECK(info("writes_refused_reason") == 1);
  const std::string refusal = refused_now();
  CHECK(refusal.find("No space left on device") != std::string::npos);
  CHECK(refusal.find(data + "/wal-") != std::string::npos);
  CHECK(ReadAll(log).find("No space left on device; new writes refused") != std::string::npos);

  std::filesystem::remove(inside + "/filler");
  const size_t before = counts().first;
  REQUIRE(wait_for([&] { return counts().first > before + 100; }));  // resumed, no restart
  CHECK(info("writes_refused") == 0);
  CHECK(ReadAll(log).find("WAL writable again") != std::string::npos);

  // Full again, then a clean stop: nothing acknowledged is lost, so it exits 0.
  FillDisk(inside + "/filler");
  REQUIRE(wait_for([&] { return info("writes_refused") == 1; }));
  CHECK_FALSE(refused_now().empty());
  ::kill(pid, SIGTERM);
  stop = true;
  for (auto& w : writers) w.join();
  cleanup.done = true;
  CHECK(WaitExit(pid) == 0);
  std::filesystem::remove(copy + "/filler");

  DbOptions o;
  o.graph.rate_limit.enabled = false;
  auto db = Db::Open(copy, o);
  REQUIRE_MESSAGE(db.ok(), db.status().ToString());
  size_t missing = 0, present = 0;
  (*db)->Read([&](const Graph& g) {
    for (uint64_t a : acked) missing += g.GetRelation(a, 1'000'000).value() == Relation::kNone;
    for (uint64_t a : refused) present += g.GetRelation(a, 1'000'000).value() != Relation::kNone;
    return 0;
  });
  MESSAGE(acked.size() << " writes acknowledged, " << refused.size() << " refused");
  CHECK(missing == 0);
  CHECK(present == 0);
}

TEST_CASE("relgraphd: --version prints the version from CMake's project() and exits 0") {
  const testing::Ran ran =
      testing::RunShell(std::string("'") + RELGRAPHD_PATH + "' --version --data-dir=/nonexistent");
  CHECK(ran.exit_code == 0);
  CHECK(ran.out == std::string("relgraphd ") + kVersion + "\n");
}

}  // namespace
}  // namespace relgraph
