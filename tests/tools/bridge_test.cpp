// relgraph-bridge against a real nats-server with JetStream: every event reaches the stream
// exactly once, in order, across a SIGKILL of the bridge and its restart.
#include <doctest.h>
#include <nats/nats.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "net/client/event_format.h"
#include "relgraph_version.h"
#include "net/auth/client_registry.h"
#include "tests/net/server/server_test_util.h"
#include "tests/net/tls/test_certs.h"
#include "tests/storage/test_dir.h"
#include "tests/tools/nats_server_process.h"
#include "tests/tools/run_command.h"
#include "net/roles/service/event_subscription.h"

namespace relgraph {
namespace {

pid_t StartBridge(const std::vector<std::string>& args, const std::string& log) {
  std::fflush(nullptr);  // the child must not write the parent's buffered output again
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::vector<std::string> copy = args;
    std::vector<char*> argv;
    std::string path = RELGRAPH_BRIDGE_PATH;
    argv.push_back(path.data());
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    freopen(log.c_str(), "w", stderr);
    ::execv(path.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

int Stop(pid_t pid, int sig) {
  ::kill(pid, sig);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The stream's messages, read back with the NATS C client: (message id, subject, data).
struct Stored {
  uint64_t lsn;
  std::string subject, data;
};

struct Reader {
  // `tls`: the CA, certificate and key files for a NATS server that wants TLS (none: plain).
  explicit Reader(const std::string& url, std::string stream_name = "RELGRAPH",
                  const std::vector<std::string>& tls = {})
      : stream(std::move(stream_name)) {
    natsOptions* options = nullptr;
    REQUIRE(natsOptions_Create(&options) == NATS_OK);
    REQUIRE(natsOptions_SetURL(options, url.c_str()) == NATS_OK);
    if (tls.size() == 3) {
      REQUIRE(natsOptions_SetSecure(options, true) == NATS_OK);
      REQUIRE(natsOptions_LoadCATrustedCertificates(options, tls[0].c_str()) == NATS_OK);
      REQUIRE(natsOptions_LoadCertificatesChain(options, tls[1].c_str(), tls[2].c_str()) ==
              NATS_OK);
    }
    REQUIRE(natsConnection_Connect(&nc, options) == NATS_OK);
    natsOptions_Destroy(options);
    REQUIRE(natsConnection_JetStream(&js, nc, nullptr) == NATS_OK);
  }
  ~Reader() {
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
  }
  uint64_t LastSeq() {
    jsStreamInfo* si = nullptr;
    if (js_GetStreamInfo(&si, js, stream.c_str(), nullptr, nullptr) != NATS_OK) return 0;
    const uint64_t seq = si->State.LastSeq;
    jsStreamInfo_Destroy(si);
    return seq;
  }
  Stored Get(uint64_t seq) {
    natsMsg* msg = nullptr;
    REQUIRE(js_GetMsg(&msg, js, stream.c_str(), seq, nullptr, nullptr) == NATS_OK);
    const char* id = nullptr;
    REQUIRE(natsMsgHeader_Get(msg, "Nats-Msg-Id", &id) == NATS_OK);
    Stored s{std::stoull(id), natsMsg_GetSubject(msg),
             std::string(natsMsg_GetData(msg), natsMsg_GetDataLength(msg))};
    natsMsg_Destroy(msg);
    return s;
  }
  // Waits until the stream's last message is the one with `lsn` (20 s at most).
  bool WaitForLsn(uint64_t lsn) {
    for (int i = 0; i < 1000; ++i) {
      const uint64_t seq = LastSeq();
      if (seq > 0 && Get(seq).lsn >= lsn) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  const std::string stream;
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
};

TEST_CASE("bridge: every event reaches JetStream once, across a SIGKILL and a restart") {
  testing::TestDir dir, nats_dir;
  testing::TestServer ts({}, dir.path());
  testing::NatsServerProcess nats(nats_dir.path());
  auto c = ts.Connect();
  auto write = [&](uint64_t base, int n) {
    for (int i = 0; i < n; ++i) {
      c->Queue(net::FollowRequest{base + i, base + i + 1, std::nullopt});
      if (i % 10 == 0) c->Queue(net::PublishRequest{base + i, base + i, 1, std::nullopt});
    }
    REQUIRE(c->Flush().ok());
  };
  write(1, 3000);
  const std::vector<std::string> args = {
      "--relgraph=127.0.0.1:" + std::to_string(ts.server->port()), "--nats=" + nats.url(),
      "--from=1"};
  const std::string log = dir.path() + "/bridge.log";
  pid_t bridge = StartBridge(args, log);
  Reader reader(nats.url());
  // Kill it mid-stream: once part of the backlog is in JetStream, while writes go on.
  for (int i = 0; i < 1000 && reader.LastSeq() < 500; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  write(100000, 1000);
  CHECK(Stop(bridge, SIGKILL) == 128 + SIGKILL);
  write(200000, 2000);
  bridge = StartBridge(args, log + ".2");
  const uint64_t last = ts.db->last_lsn();
  REQUIRE_MESSAGE(reader.WaitForLsn(last), "the bridge did not catch up");
  CHECK(Stop(bridge, SIGTERM) == 0);

  // Exactly the change stream: each event once, in LSN order, with its subject and JSON.
  std::vector<net::WireEvent> want;
  auto events = ts.db->OpenChanges(1);
  REQUIRE(events.ok());
  while ((*events)->next_lsn() <= last) {
    REQUIRE((*events)->Read(4096, [&](const ChangeEvent& e) { want.push_back(ToWire(e)); }).ok());
  }
  const uint64_t stored = reader.LastSeq();
  REQUIRE(stored == want.size());
  for (uint64_t seq = 1; seq <= stored; ++seq) {
    const Stored s = reader.Get(seq);
    const net::WireEvent& e = want[seq - 1];
    REQUIRE(s.lsn == e.lsn);
    CHECK(s.subject == "relgraph." + std::string(net::EventKindName(e.kind)));
    CHECK(s.data == net::EventJson(e, false));
  }
  // Its cursor is where it stopped: a new bridge would publish nothing twice.
  auto cursors = c->Cursors();
  REQUIRE(cursors.ok());
  REQUIRE(cursors->size() == 1);
  CHECK((*cursors)[0].name == "relgraph-bridge");
  CHECK((*cursors)[0].acked_lsn == want.back().lsn);

  // A one-off copy of the history into another stream: --until-lsn stops it when done.
  const pid_t copy = StartBridge(
      {"--relgraph=127.0.0.1:" + std::to_string(ts.server->port()), "--nats=" + nats.url(),
       "--stream=COPY", "--subject-prefix=copy", "--cursor=copy", "--from=1", "--kinds=publish",
       "--until-lsn=" + std::to_string(last)},
      log + ".copy");
  int status = 0;
  ::waitpid(copy, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  Reader copied(nats.url(), "COPY");
  uint64_t publishes = 0;
  for (const net::WireEvent& e : want) publishes += e.kind == net::EventKind::kPublish;
  REQUIRE(copied.LastSeq() == publishes);
  CHECK(copied.Get(1).subject == "copy.publish");
}

TEST_CASE("bridge: --until-lsn=N publishes nothing past N and leaves its cursor at N") {
  // The whole history is written before the bridge starts, so its first EVENTS frames reach
  // far past N: the stop must fall inside a frame, not at a frame's end.
  testing::TestDir dir, nats_dir;
  testing::TestServer ts({}, dir.path());
  testing::NatsServerProcess nats(nats_dir.path());
  auto c = ts.Connect();
  for (uint64_t i = 1; i <= 2000; ++i) {
    c->Queue(net::FollowRequest{i, i + 1, std::nullopt});
    if (i % 7 == 0) c->Queue(net::PublishRequest{i, i, 1, std::nullopt});
  }
  REQUIRE(c->Flush().ok());
  std::vector<net::WireEvent> history;  // the reference: every event, in LSN order
  auto events = ts.db->OpenChanges(1);
  REQUIRE(events.ok());
  while ((*events)->next_lsn() <= ts.db->last_lsn()) {
    REQUIRE(
        (*events)->Read(4096, [&](const ChangeEvent& e) { history.push_back(ToWire(e)); }).ok());
  }
  REQUIRE(history.size() == ts.db->last_lsn());

  std::mt19937_64 rng(43);
  std::vector<std::pair<uint64_t, std::string>> runs = {
      {3, ""}, {history.size(), ""}, {3, "publish"}};
  for (int i = 0; i < 4; ++i) {
    runs.push_back({1 + rng() % history.size(), i % 2 == 0 ? "" : "publish,unfollow"});
  }
  for (size_t run = 0; run < runs.size(); ++run) {
    const auto& [until, kinds] = runs[run];
    CAPTURE(until);
    CAPTURE(kinds);
    const std::string name = "UNTIL" + std::to_string(run);
    std::vector<std::string> args = {"--relgraph=127.0.0.1:" + std::to_string(ts.server->port()),
                                     "--nats=" + nats.url(),
                                     "--stream=" + name,
                                     "--subject-prefix=" + name,
                                     "--cursor=" + name,
                                     "--from=1",
                                     "--until-lsn=" + std::to_string(until)};
    if (!kinds.empty()) args.push_back("--kinds=" + kinds);
    const pid_t bridge = StartBridge(args, dir.path() + "/" + name + ".log");
    int status = 0;
    ::waitpid(bridge, &status, 0);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);

    std::vector<uint64_t> want;
    for (const net::WireEvent& e : history) {
      const std::string kind(net::EventKindName(e.kind));
      const bool wanted = kinds.empty() || kind == "publish" ||
                          (kind == "unfollow" && kinds.find("unfollow") != std::string::npos);
      if (e.lsn <= until && wanted) want.push_back(e.lsn);
    }
    Reader reader(nats.url(), name);
    std::vector<uint64_t> got;
    for (uint64_t seq = 1; seq <= reader.LastSeq(); ++seq) got.push_back(reader.Get(seq).lsn);
    CHECK(got == want);
    auto cursors = c->Cursors();
    REQUIRE(cursors.ok());
    bool found = false;
    for (const net::CursorEntry& k : *cursors) {
      if (k.name != name) continue;
      found = true;
      CHECK(k.acked_lsn == until);
    }
    CHECK(found);
  }
}

TEST_CASE("bridge: over TLS to relgraphd and to NATS, as a certificate client with stream only") {
  testing::TestDir dir, nats_dir;
  const testing::TestPki pki = testing::MakeTestPki(dir.path() + "/pki");
  const testing::CertFiles bridge = testing::IssueClientCert(pki, "bridge");
  const testing::CertFiles reader = testing::IssueClientCert(pki, "reader");
  {
    std::ofstream f(dir.path() + "/clients");
    f << "bridge stream cert\nreader read cert\nwriter write " << net::TokenCredential("w")
      << "\n";
  }
  net::ServerOptions options;
  options.clients_file = dir.path() + "/clients";
  options.tls = {pki.server.cert, pki.server.key, pki.ca, /*require_client_cert=*/false};
  testing::TestServer ts(options, dir.path() + "/data");
  net::ClientOptions writer = ts.ClientOptions("w");
  writer.tls.enabled = true;
  writer.tls.ca_file = pki.ca;
  auto c = net::Client::Connect(writer);
  REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  for (uint64_t i = 1; i <= 300; ++i) c->get()->Queue(net::FollowRequest{i, i + 1, std::nullopt});
  REQUIRE((*c)->Flush().ok());
  testing::NatsServerProcess nats(nats_dir.path(), {"--tlsverify", "--tlscert", pki.server.cert,
                                                    "--tlskey", pki.server.key, "--tlscacert",
                                                    pki.ca});
  auto args = [&](const testing::CertFiles& who) {
    return std::vector<std::string>{"--relgraph=127.0.0.1:" + std::to_string(ts.server->port()),
                                    "--nats=" + nats.url(), "--stream=SEC", "--subject-prefix=SEC",
                                    "--cursor=SEC", "--from=1", "--until-lsn=300",
                                    "--tls-ca=" + pki.ca, "--tls-cert=" + who.cert,
                                    "--tls-key=" + who.key, "--nats-tls-ca=" + pki.ca,
                                    "--nats-tls-cert=" + who.cert, "--nats-tls-key=" + who.key};
  };
  // A client without the stream permission is refused, and the bridge says so.
  const pid_t refused = StartBridge(args(reader), dir.path() + "/refused.log");
  CHECK(Stop(refused, 0) != 0);
  CHECK(testing::RunShell("cat " + dir.path() + "/refused.log").out.find("permission_denied") !=
        std::string::npos);
  const pid_t run = StartBridge(args(bridge), dir.path() + "/bridge.log");
  CHECK(Stop(run, 0) == 0);
  Reader stream(nats.url(), "SEC", {pki.ca, bridge.cert, bridge.key});
  REQUIRE(stream.LastSeq() == 300);
  for (uint64_t seq = 1; seq <= 300; ++seq) CHECK(stream.Get(seq).lsn == seq);
}

TEST_CASE("bridge: --version prints the version and connects to nothing") {
  const testing::Ran ran =
      testing::RunShell(std::string("'") + RELGRAPH_BRIDGE_PATH + "' --version");
  CHECK(ran.exit_code == 0);
  CHECK(ran.out == std::string("relgraph-bridge ") + kVersion + "\n");
}

}  // namespace
}  // namespace relgraph
