// relgraph-cli as a person uses it: `help` without a server, commands against a real server,
// readable values (durability by name), and errors that say what to do.
#include <doctest.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "net/auth/client_registry.h"
#include "net/protocol/command_table.h"
#include "relgraph_build.h"
#include "relgraph_version.h"
#include "tests/net/server/server_test_util.h"
#include "tests/net/tls/test_certs.h"
#include "tests/storage/test_dir.h"
#include "tests/tools/free_port.h"
#include "tests/tools/run_command.h"
#include "tools/cli/cli_commands.h"

namespace relgraph {
namespace {

// Runs `relgraph-cli ARGS` and returns its exit code; *out gets stdout and stderr.
int RunCli(const std::string& args, std::string* out) {
  testing::Ran ran = testing::RunShell(std::string(RELGRAPH_CLI_PATH) + " " + args + " 2>&1");
  *out = std::move(ran.out);
  return ran.exit_code;
}

TEST_CASE("cli: 'help' lists every command and needs no server") {
  std::string out;
  // Port 1 on loopback has no server: help must not try to connect.
  CHECK(RunCli("-p 1 help", &out) == 0);
  CHECK(out.find("usage: relgraph-cli") != std::string::npos);
  for (const char* cmd :
       {"follow", "unfollow", "fans", "timeline", "known-followers", "info", "block", "unblock",
        "blocks", "set-private", "is-private", "requests", "approve", "reject", "withdraw"}) {
    CAPTURE(cmd);
    CHECK(out.find(std::string("  ") + cmd) != std::string::npos);
  }
  CHECK(RunCli("--help", &out) == 0);
  CHECK(out.find("commands:") != std::string::npos);
}

TEST_CASE("cli: every request of the command table has a command, or says why it has none") {
  std::map<net::Opcode, std::string> has;
  for (const cli::CliCommand& c : cli::CliCommands()) {
    INFO(c.word);
    CHECK(has.emplace(c.opcode, c.word).second);  // one command per opcode
    std::string word(net::OpcodeName(c.opcode));  // the opcode's name, '-' for '_'
    std::replace(word.begin(), word.end(), '_', '-');
    CHECK(c.word == word);
    CHECK(cli::CommandUsage().find("  " + c.word) != std::string::npos);  // help lists it
  }
  std::set<net::Opcode> without;
  for (const cli::CliLess& c : cli::CliLessRequests()) {
    INFO(net::OpcodeName(c.opcode));
    CHECK(without.insert(c.opcode).second);
    CHECK(!c.why.empty());
  }
  for (const net::CommandInfo& row : net::kCommands) {
    INFO(row.name);
    const bool command = has.contains(row.opcode);
    const bool none = without.contains(row.opcode);
    if (row.direction == net::Direction::kPush) {
      CHECK(!command);  // the server's frames are nothing to type
      CHECK(!none);
    } else {
      CHECK(command != none);  // exactly one of the two
    }
  }
}

TEST_CASE("cli: a command against a real server; unknown commands point at help") {
  testing::TestServer server;
  std::string out;
  const std::string port = "-p " + std::to_string(server.server->port()) + " ";
  CHECK(RunCli(port + "follow 1 2", &out) == 0);
  CHECK(out.find("created: true") != std::string::npos);
  CHECK(RunCli(port + "frobnicate 1", &out) == 2);  // a usage error, as bad arguments are
  CHECK(out.find("unknown command 'frobnicate' (try 'help')") != std::string::npos);
  CHECK(RunCli(port + "follow 1", &out) == 2);  // bad usage shows the usage line
  CHECK(out.find("usage: follow") != std::string::npos);
}

TEST_CASE("cli: over TLS by flags or the environment, as a token or a certificate client") {
  testing::TestDir dir;
  const testing::TestPki pki = testing::MakeTestPki(dir.path() + "/pki");
  const testing::CertFiles ops = testing::IssueClientCert(pki, "ops");
  const std::string clients = dir.path() + "/clients";
  std::ofstream(clients) << "ops read,write cert\n"
                         << "reader read " << net::TokenCredential("r-token") << "\n";
  net::ServerOptions options;
  options.clients_file = clients;
  options.tls = {pki.server.cert, pki.server.key, pki.ca, /*require_client_cert=*/false};
  testing::TestServer server(options);
  const std::string port = "-p " + std::to_string(server.server->port()) + " ";
  const std::string ca = "--tls-ca=" + pki.ca + " ";
  const std::string cert = "--tls-cert=" + ops.cert + " --tls-key=" + ops.key + " ";
  std::string out;
  // The certificate names the client "ops", which may write.
  CHECK(RunCli(port + ca + cert + "follow 1 2", &out) == 0);
  CHECK(out.find("created: true") != std::string::npos);
  // The same from the environment.
  const std::string env = "RELGRAPH_TLS_CA=" + pki.ca + " RELGRAPH_TLS_CERT=" + ops.cert +
                          " RELGRAPH_TLS_KEY=" + ops.key + " ";
  CHECK(testing::RunShell(env + RELGRAPH_CLI_PATH + " " + port + "follow 2 3 2>&1").exit_code == 0);
  // A token decides: the reader reads, and its follow is refused naming the permission.
  CHECK(RunCli(port + ca + "-a r-token counts 1", &out) == 0);
  CHECK(out.find("following: 1") != std::string::npos);
  CHECK(RunCli(port + ca + "-a r-token follow 3 4", &out) == 1);
  CHECK(out.find("permission_denied") != std::string::npos);
  CHECK(out.find("write") != std::string::npos);
  // Neither a token nor a certificate; plain TCP at the TLS port; a server not trusted.
  CHECK(RunCli(port + ca + "counts 1", &out) == 1);
  INFO(out);
  CHECK(out.find("unauthenticated") != std::string::npos);
  CHECK(RunCli(port + "-a r-token counts 1", &out) == 1);
  CHECK(out.find("this port speaks TLS only") != std::string::npos);
  CHECK(RunCli(port + "--tls -a r-token counts 1", &out) == 1);
  CHECK(out.find("certificate verify failed") != std::string::npos);
  CHECK(RunCli(port + "--tls-ca=/nonexistent/ca.pem counts 1", &out) != 0);
  CHECK(out.find("/nonexistent/ca.pem") != std::string::npos);
}

TEST_CASE("cli: an interactive session reads commands from stdin until quit") {
  testing::TestServer server;
  std::string out;
  const std::string port = std::to_string(server.server->port());
  const int code = RunCli("-p " + port + " < /dev/null", &out);
  CHECK(code == 0);  // EOF ends a session with no command
  const std::string script =
      "printf 'follow 1 2\\nfrobnicate\\n\\ncounts 2\\nhelp\\nquit\\nfollow 3 4\\n' | ";
  const testing::Ran session =
      testing::RunShell(script + RELGRAPH_CLI_PATH + " -p " + port + " 2>&1");
  CHECK(session.exit_code == 1);  // one command failed
  out = session.out;
  CHECK(out.find("created: true") != std::string::npos);
  CHECK(out.find("unknown command 'frobnicate'") != std::string::npos);
  CHECK(out.find("fans: 1") != std::string::npos);
  CHECK(out.find("  known-followers") != std::string::npos);  // help
  auto c = server.Connect();
  CHECK(*c->Relation(3, 4) == net::RelationCode::kNone);  // nothing ran after quit
}

TEST_CASE("cli: info shows the durability mode by name, in text and JSON") {
  for (DurabilityMode mode : {DurabilityMode::kEverySec, DurabilityMode::kNone}) {
    testing::TestDir dir;
    DbOptions o = testing::TestServer::NoRateLimit();
    o.durability = mode;
    testing::TestServer server({}, dir.path(), o);
    auto client = server.Connect();
    auto text = cli::RunCommand(*client, {"info"}, false);
    REQUIRE(text.ok());
    const std::string name = DurabilityModeName(mode);
    CHECK(text->find("durability: " + name + "\n") != std::string::npos);
    auto json = cli::RunCommand(*client, {"info"}, true);
    REQUIRE(json.ok());
    CHECK(json->find("\"durability\":\"" + name + "\"") != std::string::npos);
  }
}

TEST_CASE("cli: subscribe prints each event as a line or a JSON object, from any LSN") {
  testing::TestDir dir;
  testing::TestServer server({}, dir.path());
  auto c = server.Connect();
  REQUIRE(c->Follow(1, 2, int64_t{1000}).ok());
  REQUIRE(c->Follow(2, 1, int64_t{2000}).ok());
  REQUIRE(c->Publish(2, 500, 3, int64_t{3000}).ok());
  REQUIRE(c->Mute(1, 2, true).ok());
  const std::string port = "-p " + std::to_string(server.server->port()) + " ";
  std::string out;
  REQUIRE(RunCli(port + "subscribe --from=1 --count=3", &out) == 0);
  CHECK(out ==
        "1 follow 1 -> 2 at 1000\n"
        "2 follow 2 -> 1 at 2000 (friends)\n"
        "3 publish 2 post 500 kind 3 at 3000\n");
  REQUIRE(RunCli(port + "--json subscribe --from=2 --kinds=publish,mute --count=2", &out) == 0);
  CHECK(out.rfind("{\"lsn\":3,\"kind\":\"publish\",\"author\":2,\"post\":500,\"ts\":3000,"
                  "\"post_kind\":3,\"evicted\":0}\n{\"lsn\":4,\"kind\":\"mute\",\"user\":1,"
                  "\"other\":2,\"ts\":",
                  0) == 0);
  CHECK(RunCli(port + "subscribe --kinds=folow", &out) == 2);
  CHECK(out.find("unknown event kind 'folow'") != std::string::npos);
  CHECK(RunCli(port + "subscribe --frm=1", &out) == 2);
  CHECK(out.find("usage: subscribe") != std::string::npos);
  CHECK(RunCli("-p 1 subscribe", &out) == 1);  // no server: an error, not a wait
  // A named subscriber goes on where the last run with that name stopped.
  REQUIRE(RunCli(port + "subscribe --name=tail --from=1 --count=2", &out) == 0);
  CHECK(out.find("2 follow 2 -> 1") != std::string::npos);
  REQUIRE(RunCli(port + "subscribe --name=tail --count=1", &out) == 0);
  CHECK(out.rfind("3 publish 2 post 500", 0) == 0);
  REQUIRE(RunCli(port + "cursors", &out) == 0);
  CHECK(out.rfind("tail 3 at ", 0) == 0);
  REQUIRE(RunCli(port + "ack tail 1", &out) == 0);
  REQUIRE(RunCli(port + "--json cursors", &out) == 0);
  CHECK(out.rfind("{\"cursors\":[{\"name\":\"tail\",\"acked_lsn\":1,", 0) == 0);
  REQUIRE(RunCli(port + "delete-cursor tail", &out) == 0);
  CHECK(RunCli(port + "delete-cursor tail", &out) == 1);
  CHECK(out.find("not_found") != std::string::npos);
  CHECK(RunCli(port + "fetch-snapshot " + dir.path() + "/s.rgs", &out) == 1);
  CHECK(out.find("not_found") != std::string::npos);
  REQUIRE(c->Snapshot().ok());
  REQUIRE(RunCli(port + "fetch-snapshot " + dir.path() + "/s.rgs", &out) == 0);
  CHECK(out.find("lsn: " + std::to_string(server.db->last_lsn()) + "\n") != std::string::npos);
}

TEST_CASE("cli: blocks, private accounts and requests, in text and JSON, with their errors") {
  testing::TestServer server;
  auto c = server.Connect();
  auto run = [&](std::vector<std::string> words, bool json = false) {
    auto out = cli::RunCommand(*c, words, json);
    REQUIRE_MESSAGE(out.ok(), out.status().ToString());
    return *out;
  };
  CHECK(run({"set-private", "3", "on"}).find("changed: true\napproved: 0\n") == 0);
  CHECK(run({"is-private", "3"}) == "private: true\n");
  CHECK(run({"follow", "1", "3", "1000"}) ==
        "created: true\nrelation: requested\nfollowed_at: 1000\n");
  run({"follow", "4", "3", "2000"});
  CHECK(run({"requests", "3", "--viewer=1"}) ==
        "4\tts=2000\t1 to 4: none\n1\tts=1000\t1 to 1: none\n(2 of 2 entries)\n");
  CHECK(run({"requests", "3", "--limit=1"}, true) ==
        "{\"total\":2,\"entries\":[{\"user\":4,\"ts\":2000,\"viewer_relation\":\"none\","
        "\"mutual\":false}],\"next\":\"2000:4\"}\n");
  CHECK(run({"withdraw", "4", "3"}) == "changed: true\n");
  CHECK(run({"reject", "3", "4"}) == "changed: false\n");
  CHECK(run({"approve", "3", "1"}).find("created: true\nrelation: following\n") == 0);
  const std::string block = run({"block", "3", "1"}, true);
  CHECK(block.find("{\"created\":true,") == 0);
  CHECK(block.find("\"unfollowed\":false,\"lost_follower\":true,\"dropped_request\":false}") !=
        std::string::npos);
  CHECK(run({"relation", "1", "3"}) == "relation: blocked_by\n");
  CHECK(run({"relation", "3", "1"}) == "relation: blocking\n");
  CHECK(run({"blocks", "3"}).find("1\tts=") == 0);
  CHECK(run({"unblock", "3", "1"}) == "changed: true\n");
  CHECK(run({"blocks", "3"}) == "(0 of 0 entries)\n");

  // Errors: a refused follow names the block; a bad on/off is a usage error.
  run({"block", "5", "6"});
  auto refused = cli::RunCommand(*c, {"follow", "6", "5"}, false);
  CHECK(refused.status().code() == Code::kBlocked);
  CHECK(refused.status().message() == "user 6 may not follow user 5: a block stands between them");
  auto usage = cli::RunCommand(*c, {"set-private", "3", "maybe"}, false);
  CHECK(usage.status().message() == "usage: set-private USER on|off");
  auto missing = cli::RunCommand(*c, {"approve", "3", "9"}, false);
  CHECK(missing.status().code() == Code::kNotFound);
}

TEST_CASE("cli: a lone -h or --help prints the usage, --version the version") {
  std::string out;
  CHECK(RunCli("-h", &out) == 0);
  CHECK(out.rfind("usage: relgraph-cli", 0) == 0);
  CHECK(RunCli("--help", &out) == 0);
  CHECK(
      out.find("exit status: 0 done, 1 an error from the server or the connection, 2 bad usage") !=
      std::string::npos);
  CHECK(RunCli("--version", &out) == 0);
  CHECK(out == std::string("relgraph-cli ") + kVersion + "\n");
  // -h with a value still names the host (port 1: nothing listens, so the connection fails).
  CHECK(RunCli("-h 127.0.0.1 -p 1 ping", &out) == 1);
  CHECK(out.find("cannot connect to 127.0.0.1:1") != std::string::npos);
}

TEST_CASE("cli: numbers out of range name the range; usage errors exit 2, the server's 1") {
  testing::TestServer server;
  std::string out;
  const std::string port = "-p " + std::to_string(server.server->port()) + " ";
  CHECK(RunCli(port + "follow 1 99999999999999999999", &out) == 2);
  CHECK(out ==
        "error: invalid_argument: user 99999999999999999999 is out of range [0, "
        "18446744073709551615]\n");
  CHECK(RunCli(port + "fans 2 --limit=100000", &out) == 2);
  CHECK(out == "error: invalid_argument: limit 100000 is out of range [0, 65535]\n");
  CHECK(RunCli(port + "known-followers 1 2 70000", &out) == 2);
  CHECK(out == "error: invalid_argument: limit 70000 is out of range [0, 65535]\n");
  CHECK(RunCli(port + "timeline 1 --kinds=64", &out) == 2);
  CHECK(out == "error: invalid_argument: kind 64 is out of range [0, 63]\n");
  CHECK(RunCli(port + "follow 1 x", &out) == 2);
  CHECK(out == "error: invalid_argument: user 'x' is not a number\n");
  CHECK(RunCli(port + "--json follow 1 x", &out) == 2);
  CHECK(out == "{\"error\":\"invalid_argument\",\"message\":\"user 'x' is not a number\"}\n");
  CHECK(RunCli(port + "--timeout-ms=0 info", &out) == 2);
  CHECK(out.find("--timeout-ms takes milliseconds in [1, 86400000], not '0'") != std::string::npos);
  CHECK(RunCli(port + "--timeout-ms=5s info", &out) == 2);
  CHECK(RunCli(port + "--timeout-ms=60000 info", &out) == 0);
  // The server's own refusals, invalid_argument among them, exit 1.
  CHECK(RunCli(port + "follow 1 1", &out) == 1);
  CHECK(out == "error: self_follow: user 1 cannot follow itself\n");
  CHECK(RunCli(port + "follow 1 2 -5", &out) == 1);
  CHECK(out.rfind("error: invalid_argument: ", 0) == 0);
}

TEST_CASE("cli: a page prints the command of the next one, and each user's relations plainly") {
  testing::TestServer server;
  std::string out;
  const std::string cli =
      std::string(RELGRAPH_CLI_PATH) + " -p " + std::to_string(server.server->port()) + " ";
  auto run = [&](const std::string& args) {
    const testing::Ran ran = testing::RunShell(cli + args + " 2>&1");
    CHECK_MESSAGE(ran.exit_code == 0, args, ": ", ran.out);
    return ran.out;
  };
  run("follow 1 2 1700000001000");
  run("follow 2 1 1700000002000");
  run("follow 3 2 1700000003000");
  // 3 follows 2 alone, 1 and 2 follow each other: "mutual" is about the list's owner, and the
  // viewer's relation is spelled out, "none" included.
  CHECK(run("fans 2 --viewer=1") ==
        "3\tts=1700000003000\tmutual with 2: no\t1 to 3: none\n"
        "1\tts=1700000001000\tmutual with 2: yes\t1 to 1: none\n"
        "(2 entries)\n");
  CHECK(run("fans 2 --viewer=3") ==
        "3\tts=1700000003000\tmutual with 2: no\t3 to 3: none\n"
        "1\tts=1700000001000\tmutual with 2: yes\t3 to 1: none\n"
        "(2 entries)\n");
  CHECK(run("following 1 --viewer=3") ==
        "2\tts=1700000001000\tmutual with 1: yes\t3 to 2: following\n(1 entries)\n");
  const std::string first = run("fans 2 --limit=1");
  CHECK(first ==
        "3\tts=1700000003000\tmutual with 2: no\n(1 entries)\n"
        "next: relgraph-cli fans 2 --limit=1 --after=1700000003000:3\n");
  // The printed command, run as it is (after the program's name), gives the next page.
  const std::string next = first.substr(first.find("next: relgraph-cli ") + 19);
  CHECK(run(next.substr(0, next.size() - 1)) ==
        "1\tts=1700000001000\tmutual with 2: yes\n(1 entries)\n");
  run("publish 2 500 0 1700000004000");
  run("publish 2 501 0 1700000005000");
  CHECK(run("timeline 1 --limit=1") ==
        "501\tby=2\tts=1700000005000\tkind=0\n(1 entries)\n"
        "next: relgraph-cli timeline 1 --limit=1 --after=1700000005000:501\n");
}

TEST_CASE("cli: subscribe --kinds takes event names and numbers; timeline --kinds numbers") {
  testing::TestDir dir;
  testing::TestServer server({}, dir.path());
  auto c = server.Connect();
  REQUIRE(c->Follow(1, 2, int64_t{1000}).ok());
  REQUIRE(c->Publish(2, 500, 3, int64_t{3000}).ok());
  REQUIRE(c->Mute(1, 2, true).ok());
  const std::string port = "-p " + std::to_string(server.server->port()) + " ";
  std::string out;
  const uint32_t publish = static_cast<uint32_t>(net::EventKind::kPublish);
  REQUIRE(RunCli(port + "subscribe --from=1 --count=2 --kinds=follow," + std::to_string(publish),
                 &out) == 0);
  CHECK(out == "1 follow 1 -> 2 at 1000\n2 publish 2 post 500 kind 3 at 3000\n");
  CHECK(RunCli(port + "subscribe --kinds=10", &out) == 2);
  CHECK(out.find("event kind 10 is not one") != std::string::npos);
  CHECK(RunCli(port + "help", &out) == 0);
  CHECK(out.find("timeline USER [--limit=N] [--after=TS:POST] [--kinds=N,N,...]") !=
        std::string::npos);
  CHECK(out.find("subscribe [--from=LSN|now] [--kinds=EVENT,EVENT,...]") != std::string::npos);
}

TEST_CASE("cli: a port where something else listens is named as not relgraphd") {
  // A listener that answers like an ssh server would, whatever it is sent.
  const testing::LoopbackListener listener = testing::ListenOnLoopback();
  const int fd = listener.fd;
  const uint16_t port = listener.port;
  std::thread peer([fd] {
    const int conn = ::accept(fd, nullptr, nullptr);
    if (conn < 0) return;
    const char banner[] = "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n";
    (void)!::write(conn, banner, sizeof banner - 1);
    char buf[256];
    (void)!::read(conn, buf, sizeof buf);
    ::close(conn);
  });
  std::string out;
  CHECK(RunCli("-p " + std::to_string(port) + " ping", &out) == 1);
  peer.join();
  ::close(fd);
  CHECK(out.find("the server at 127.0.0.1:" + std::to_string(port) +
                 " does not speak the relgraph protocol (is it relgraphd?)") != std::string::npos);
}

TEST_CASE("cli: info shows the server's version") {
  testing::TestServer server;
  auto client = server.Connect();
  auto text = cli::RunCommand(*client, {"info"}, false);
  REQUIRE(text.ok());
  CHECK(text->find(std::string("\nserver_version: ") + kVersion + "\n") != std::string::npos);
  auto json = cli::RunCommand(*client, {"info"}, true);
  REQUIRE(json.ok());
  CHECK(json->find(std::string("\"server_version\":\"") + kVersion + "\"") != std::string::npos);
}

TEST_CASE("cli: info shows the build, the commit relgraphd was built from") {
  testing::TestServer server;
  auto client = server.Connect();
  auto text = cli::RunCommand(*client, {"info"}, false);
  REQUIRE(text.ok());
  // kBuildId is the whole commit (or "unknown"); INFO carries its first 16 hex digits.
  const std::string build = std::string(kBuildId).substr(0, 16);
  CHECK(text->find("\nserver_build: " + build + "\n") != std::string::npos);
  auto json = cli::RunCommand(*client, {"info"}, true);
  REQUIRE(json.ok());
  CHECK(json->find("\"server_build\":\"" + build + "\"") != std::string::npos);
}

}  // namespace
}  // namespace relgraph
