// relgraph-bench as a user runs it, on a tiny graph: every durability row comes out with its
// operations counted (the restart row runs the bench again in child processes), the feed rows
// come out with their notes, and bad flags and directories fail with a non-zero exit.
#include <doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "tests/net/tls/test_certs.h"
#include "tests/storage/test_dir.h"
#include "relgraph_version.h"
#include "tests/tools/relgraphd_process.h"
#include "tests/tools/run_command.h"

namespace relgraph {
namespace {

using testing::Ran;

// Runs relgraph-bench with `args` (already shell-quoted where needed), stderr discarded.
Ran RunBench(const std::string& args) {
  return testing::RunShell(std::string("'") + RELGRAPH_BENCH_PATH + "' " + args + " 2>/dev/null");
}

// Text rows by workload name -> the whole line.
std::map<std::string, std::string> TextRows(const std::string& text) {
  std::map<std::string, std::string> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) rows[line.substr(0, line.find(' '))] = line;
  return rows;
}

// The ops column of a text row (0 when it has none).
uint64_t OpsOf(const std::string& row) {
  std::istringstream in(row);
  std::string workload;
  uint64_t ops = 0;
  in >> workload >> ops;
  return ops;
}

// CSV rows `workload,ops,...` by workload name -> ops.
std::map<std::string, uint64_t> RowOps(const std::string& csv) {
  std::map<std::string, uint64_t> rows;
  std::istringstream in(csv);
  for (std::string line; std::getline(in, line);) {
    const size_t comma = line.find(',');
    if (comma == std::string::npos || line[0] == '#') continue;
    const size_t next = line.find(',', comma + 1);
    const std::string ops = line.substr(comma + 1, next - comma - 1);
    if (ops.empty() || ops.find_first_not_of("0123456789") != std::string::npos) continue;
    rows[line.substr(0, comma)] = std::stoull(ops);
  }
  return rows;
}

TEST_CASE("relgraph-bench: the snapshot workload reports recovery in-process and as a restart") {
  testing::TestDir dir;
  const Ran ran = RunBench(
      "--edges=2000 --workloads=snapshot,recovery_wal --wal-ops=500 "
      "--format=csv --data-dir='" +
      dir.path() + "/scratch'");
  REQUIRE(ran.exit_code == 0);
  const auto rows = RowOps(ran.out);
  for (const char* name : {"snapshot_write_offline", "recovery_snapshot_restart",
                           "recovery_snapshot", "snapshot_write_online"}) {
    INFO(name << "\n" << ran.out);
    REQUIRE(rows.count(name) == 1);
    CHECK(rows.at(name) > 1000);  // edges loaded or written, not an error row's 0
  }
  CHECK(rows.at("recovery_snapshot_restart") == rows.at("snapshot_write_offline"));
  CHECK(rows.at("recovery_wal") > 0);
}

TEST_CASE("relgraph-bench: replica_apply copies a closed primary's WAL into an equal replica") {
  // Text, not csv: the digests' comparison is in the row's note.
  testing::TestDir dir;
  const Ran ran = RunBench("--edges=3000 --workloads=replica_apply,first_touch --data-dir='" +
                           dir.path() + "/scratch'");
  INFO(ran.out);
  REQUIRE(ran.exit_code == 0);
  CHECK(ran.out.find("digests equal") != std::string::npos);
  CHECK(ran.out.find("DIFFER") == std::string::npos);
  CHECK(ran.out.find("first touch ") != std::string::npos);
}

TEST_CASE("relgraph-bench: the feed workloads run on a tiny graph and report their notes") {
  // Text, not csv: the notes are in the text rows only.
  const Ran ran = RunBench(
      "--edges=20000 --workloads=publish,fanout,timeline_first_page,timeline_deep_page,"
      "timeline_heavy_reader --feed-readers=2000 --feed-posts=3000 --ops=200");
  INFO(ran.out);
  REQUIRE(ran.exit_code == 0);
  std::map<std::string, std::string> rows = TextRows(ran.out);
  for (const char* name : {"publish", "fanout", "timeline_first_page", "timeline_deep_page",
                           "timeline_heavy_reader"}) {
    REQUIRE(rows.count(name) == 1);
    CHECK(OpsOf(rows[name]) > 0);
  }
  // The million-fan author lives on a graph of its own, so it has its million here too.
  CHECK(rows["publish"].find("pulled p50") != std::string::npos);
  CHECK(rows["publish"].find("pushed p50") != std::string::npos);
  CHECK(rows["fanout"].find("B/entry in their blocks") != std::string::npos);
}

TEST_CASE("relgraph-bench: the access workloads run on a tiny graph and say what they did") {
  const Ran ran = RunBench(
      "--edges=20000 --ops=2000 --workloads=relation,block,relation_blocked,unblock,"
      "follow_request,approve,reject,block_celebrity,go_public");
  INFO(ran.out);
  REQUIRE(ran.exit_code == 0);
  std::map<std::string, std::string> rows = TextRows(ran.out);
  for (const char* name : {"relation", "block", "relation_blocked", "unblock", "follow_request",
                           "approve", "reject", "block_celebrity", "go_public"}) {
    CAPTURE(name);
    REQUIRE(rows.count(name) == 1);
    CHECK(OpsOf(rows[name]) > 0);
  }
  CHECK(rows["block"].find("2000 fans and") != std::string::npos);  // every block removed a fan
  CHECK(rows["unblock"].find("2000 blocks lifted") != std::string::npos);
  CHECK(rows["relation_blocked"].find("answers blocking or blocked_by") != std::string::npos);
  // Each request made is answered: approve takes half, reject the other half.
  CHECK(rows["approve"].find(" edges made") != std::string::npos);
  CHECK(rows["reject"].find(" requests removed") != std::string::npos);
  // The big accounts live on graphs of their own, so they have their million here too.
  CHECK(rows["block_celebrity"].find("account with 1000000 fans") != std::string::npos);
  CHECK(rows["go_public"].find("approved 1000000 of 1000000 pending requests") !=
        std::string::npos);
}

TEST_CASE("relgraph-bench: the server target runs against a real relgraphd, idle connections too") {
  testing::TestDir dir;
  const std::string log = dir.path() + "/log";
  const pid_t pid = Spawn({"--listen=127.0.0.1:0", "--data-dir=" + dir.path() + "/data",
                           "--rate-limit=off", "--snapshot-interval-s=0"},
                          log);
  const uint16_t port = WaitForPort(log, pid);
  const Ran ran = RunBench("--target=server --server=127.0.0.1:" + std::to_string(port) +
                           " --edges=2000 --ops=2000 --latency-ops=200 --idle-connections=300 "
                           "--busy-connections=8 --workloads=load,counts,counts_unpipelined,"
                           "idle_connections");
  ::kill(pid, SIGTERM);
  CHECK(WaitExit(pid) == 0);
  CHECK(ran.exit_code == 0);
  for (const char* row : {"load ", "counts ", "counts_unpipelined ", "idle_connections "}) {
    CAPTURE(row);
    CHECK(ran.out.find(std::string("\n") + row) != std::string::npos);
  }
  CHECK(ran.out.find("with 300 idle") != std::string::npos);
  CHECK(ran.out.find("B per idle connection") != std::string::npos);
  CHECK(ran.out.find("error replies") == std::string::npos);
}

TEST_CASE("relgraph-bench: the server target over mutual TLS as a cert client; connects timed") {
  testing::TestDir dir;
  const testing::TestPki pki = testing::MakeTestPki(dir.path() + "/pki");
  const testing::CertFiles bench = testing::IssueClientCert(pki, "bench");
  const std::string clients = dir.path() + "/clients";
  std::ofstream(clients) << "bench read,write,admin cert\n";
  const std::string log = dir.path() + "/log";
  const pid_t pid = Spawn({"--listen=127.0.0.1:0", "--data-dir=" + dir.path() + "/data",
                           "--rate-limit=off", "--snapshot-interval-s=0", "--http=off",
                           "--tls-cert=" + pki.server.cert, "--tls-key=" + pki.server.key,
                           "--tls-ca=" + pki.ca, "--tls-require-client-cert",
                           "--clients-file=" + clients},
                          log);
  const std::string server =
      "--target=server --server=127.0.0.1:" + std::to_string(WaitForPort(log, pid));
  const std::string tls = " --tls-ca=" + pki.ca + " --tls-cert=" + bench.cert +
                          " --tls-key=" + bench.key;
  const Ran ran = RunBench(server + tls + " --edges=2000 --ops=2000 --latency-ops=50 "
                                          "--workloads=load,counts,connect");
  // Without the client certificate the server refuses the bench, which says so.
  const Ran refused = RunBench(server + " --tls-ca=" + pki.ca + " --edges=100 --workloads=load");
  ::kill(pid, SIGTERM);
  CHECK(WaitExit(pid) == 0);
  CHECK(ran.exit_code == 0);
  const auto rows = TextRows(ran.out);
  REQUIRE(rows.count("connect") == 1);
  CHECK(OpsOf(rows.at("connect")) == 50);
  CHECK(rows.at("connect").find("TLS handshake + HELLO + PING each") != std::string::npos);
  CHECK(OpsOf(rows.at("counts")) == 2000);
  CHECK(refused.exit_code != 0);
}

TEST_CASE("relgraph-bench: the scale run's halves: a snapshot relgraphd restarts from, then rows") {
  testing::TestDir dir;
  const std::string data = dir.path() + "/data";
  const Ran built = RunBench("--target=scale-build --edges=30000 --data-dir=" + data);
  REQUIRE(built.exit_code == 0);
  const auto rows = TextRows(built.out);
  REQUIRE(rows.count("scale_import"));
  REQUIRE(rows.count("scale_snapshot_write"));
  const uint64_t edges = OpsOf(rows.at("scale_import"));
  CHECK(edges > 29'000);
  CHECK(OpsOf(rows.at("scale_snapshot_write")) == edges);
  CHECK(built.out.find("peak RSS of the build") != std::string::npos);

  // relgraphd restarts from that snapshot alone and holds every edge.
  const std::string log = dir.path() + "/log";
  const pid_t pid = Spawn(
      {"--listen=127.0.0.1:0", "--data-dir=" + data, "--rate-limit=off", "--snapshot-interval-s=0"},
      log);
  const uint16_t port = WaitForPort(log, pid);
  const Ran info = testing::RunShell(std::string("'") + RELGRAPH_CLI_PATH + "' -p " +
                                     std::to_string(port) + " info");
  CHECK(info.out.find("edges: " + std::to_string(edges) + "\n") != std::string::npos);
  const Ran served =
      RunBench("--target=scale-server --edges=30000 --latency-ops=300 --server=127.0.0.1:" +
               std::to_string(port));
  // The follow row's pairs are new edges, and the unfollow row takes exactly those back.
  const Ran after = testing::RunShell(std::string("'") + RELGRAPH_CLI_PATH + "' -p " +
                                      std::to_string(port) + " info");
  ::kill(pid, SIGTERM);
  CHECK(WaitExit(pid) == 0);
  REQUIRE(served.exit_code == 0);
  const auto tcp = TextRows(served.out);
  for (const char* row :
       {"relation_unpipelined", "counts_unpipelined", "following_page_unpipelined",
        "fans_page_deep_unpipelined", "follow_unpipelined", "unfollow_unpipelined"}) {
    CAPTURE(row);
    REQUIRE(tcp.count(row));
    CHECK(OpsOf(tcp.at(row)) == 300);
  }
  CHECK(tcp.at("follow_unpipelined").find("300 of them changed") != std::string::npos);
  CHECK(tcp.at("unfollow_unpipelined").find("300 of them changed") != std::string::npos);
  CHECK(tcp.at("fans_page_deep_unpipelined").find(" entries per page; the top account has ") !=
        std::string::npos);
  CHECK(served.out.find("error replies") == std::string::npos);
  CHECK(after.out.find("edges: " + std::to_string(edges) + "\n") != std::string::npos);
  // Without a directory the build refuses to start.
  CHECK(RunBench("--target=scale-build --edges=1000").exit_code == 2);
}

TEST_CASE("relgraph-bench: bad flags exit 2; --open-only on a bad directory exits 1") {
  CHECK(RunBench("--workloads=nonsense").exit_code == 2);
  CHECK(RunBench("--edges=ten").exit_code == 2);
  CHECK(RunBench("--target=mysql://127.0.0.1:3306").exit_code == 2);
  // A row only relgraphd has, asked of another design, is refused before anything runs.
  const Ran ping = testing::RunShell(std::string("'") + RELGRAPH_BENCH_PATH +
                                     "' --target=redis://127.0.0.1:1 --edges=100 "
                                     "--workloads=ping 2>&1");
  CHECK(ping.exit_code == 2);
  CHECK(ping.out.find("'ping' does not run against redis://127.0.0.1:1") != std::string::npos);
  // An unreachable design: exit 1, naming it.
  const Ran down = testing::RunShell(std::string("'") + RELGRAPH_BENCH_PATH +
                                     "' --target=redis://127.0.0.1:1 --edges=100 "
                                     "--workloads=counts 2>&1");
  CHECK(down.exit_code == 1);
  CHECK(down.out.find("cannot connect to Redis at 127.0.0.1:1") != std::string::npos);
  const Ran bad = RunBench("--open-only=/proc/no-such-dir/x");
  CHECK(bad.exit_code == 1);
  CHECK(bad.out.find("/proc/no-such-dir/x") != std::string::npos);
}

TEST_CASE("bench: --version prints the version and runs nothing") {
  const Ran ran = testing::RunShell(std::string("'") + RELGRAPH_BENCH_PATH + "' --version");
  CHECK(ran.exit_code == 0);
  CHECK(ran.out == std::string("relgraph-bench ") + kVersion + "\n");
}

}  // namespace
}  // namespace relgraph
