// Permissions end to end, table-driven from the command table: every request command sent by a
// client lacking its permission is refused with permission_denied, and by one holding it gets
// past the check; a reload that takes a permission away applies to the next command of an open
// connection, without dropping anyone.
#include "net/auth/permissions.h"

#include <doctest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>

#include "net/auth/client_registry.h"
#include "tests/net/server/server_test_util.h"

namespace relgraph::testing {
namespace {

using net::Permissions;

// One client per permission, and one holding none of the five but ping.
const std::pair<const char*, Permissions> kClients[] = {{"reader", net::kPermRead},
                                                        {"writer", net::kPermWrite},
                                                        {"streamer", net::kPermStream},
                                                        {"admin", net::kPermAdmin},
                                                        {"replica", net::kPermReplication}};

std::string TokenOf(const std::string& name) {
  return name + "-token";
}

std::string WriteClientsFile(const std::string& path, Permissions writer_has) {
  std::ofstream f(path);
  for (const auto& [name, p] : kClients) {
    const Permissions held = std::string(name) == "writer" ? writer_has : p;
    f << name << " " << net::PermissionsText(held) << " " << net::TokenCredential(TokenOf(name))
      << "\n";
  }
  return path;
}

// Sends `op` with an empty body on a connection authenticated as `client`; the reply's status.
Status Try(net::Client& c, net::Opcode op) {
  std::vector<net::RawReply> replies;
  Status s = c.RoundTrip(Frame(900, op, ""), 1, &replies);
  if (!s.ok()) return s;
  return replies[0].status;
}

TEST_CASE("docs/security.md's permission table is the code's") {
  std::ifstream f(std::string(RELGRAPH_DOCS_DIR) + "/security.md");
  REQUIRE(f);
  std::map<std::string, std::string> rows;  // permission -> its row's commands
  std::string line;
  while (std::getline(f, line)) {
    for (const char* p : {"read", "write", "stream", "admin", "replication"}) {
      if (line.rfind(std::string("| `") + p + "` |", 0) == 0) rows[p] = line;
    }
    if (line.rfind("| (any client) |", 0) == 0) rows["none"] = line;
  }
  REQUIRE(rows.size() == 6);
  for (const net::CommandInfo& cmd : net::kCommands) {
    if (cmd.direction != net::Direction::kRequest) continue;
    const std::string word = "`" + std::string(cmd.name) + "`";
    const Permissions need = net::RequiredPermissions(cmd.opcode);
    for (const auto& [perm, row] : rows) {
      const bool listed = row.find(word) != std::string::npos;
      const bool needs = perm == "none" ? need == net::kPermNone
                                        : (need & *net::ParsePermissions(perm)) != 0;
      CHECK_MESSAGE(listed == needs, cmd.name, " in the row of ", perm);
    }
  }
}

// What each opcode needed when the permission and read-only lists were merged into one
// (net/protocol/command_class.h), by OpcodeName; an opcode named nowhere here needs kPermAll.
const std::pair<Permissions, const char*> kNeededBefore[] = {
    {net::kPermNone, "hello ping"},
    {net::kPermRead,
     "info shard_map relation relations following fans friends counts known_followers timeline "
     "user_posts mutes hides blocks is_private requests"},
    {net::kPermRead | net::kPermReplication, "replication position"},
    {net::kPermWrite,
     "follow unfollow remove_user publish delete_post mute unmute hide unhide block unblock "
     "set_private approve reject withdraw"},
    {net::kPermStream, "subscribe ack cursors"},
    {net::kPermStream | net::kPermReplication, "fetch_snapshot"},
    {net::kPermReplication, "replicate replica_ack"},
    {net::kPermAdmin, "snapshot slowlog delete_cursor promote replica_of"},
    {net::kPermAll, "notice events snapshot_data records"}};

TEST_CASE("every opcode value 0..255 needs what it needed before the lists were merged") {
  std::map<std::string, Permissions> expected;
  for (const auto& [perm, names] : kNeededBefore) {
    std::istringstream words(names);
    for (std::string w; words >> w;) CHECK_MESSAGE(expected.emplace(w, perm).second, w);
  }
  for (const net::CommandInfo& cmd : net::kCommands) CHECK(expected.count(std::string(cmd.name)));
  for (int v = 0; v < 256; ++v) {
    const auto op = static_cast<net::Opcode>(v);
    const auto it = expected.find(std::string(net::OpcodeName(op)));
    const Permissions want = it == expected.end() ? net::kPermAll : it->second;
    CHECK_MESSAGE(net::RequiredPermissions(op) == want, "opcode ", v, " ", net::OpcodeName(op));
  }
}

TEST_CASE("every command: refused without its permission, let through with it") {
  const std::string path = "/tmp/relgraph-perm-test-" + std::to_string(getpid());
  net::ServerOptions o;
  o.clients_file = WriteClientsFile(path, net::kPermWrite);
  TestServer s(o);
  int checked = 0;
  for (const net::CommandInfo& cmd : net::kCommands) {
    if (cmd.direction != net::Direction::kRequest || cmd.opcode == net::Opcode::kHello) continue;
    const Permissions need = net::RequiredPermissions(cmd.opcode);
    for (const auto& [name, held] : kClients) {
      auto c = s.Connect(TokenOf(name));
      const Status got = Try(*c, cmd.opcode);
      const bool may = need == net::kPermNone || (held & need) != 0;
      if (may) {
        CHECK_MESSAGE(got.code() != Code::kPermissionDenied, cmd.name, " by ", name, ": ",
                      got.ToString());
      } else {
        CHECK_MESSAGE(got.code() == Code::kPermissionDenied, cmd.name, " by ", name, ": ",
                      got.ToString());
        CHECK(got.message().find(std::string(cmd.name)) != std::string::npos);
        CHECK(got.message().find(name) != std::string::npos);
        CHECK(c->Ping().ok());  // a refusal leaves the connection usable
      }
      ++checked;
    }
  }
  CHECK(checked > 200);
  ::unlink(path.c_str());
}

TEST_CASE("a pipelined run of writes is checked command by command") {
  const std::string path = "/tmp/relgraph-perm-batch-" + std::to_string(getpid());
  net::ServerOptions o;
  o.clients_file = WriteClientsFile(path, net::kPermWrite);
  TestServer s(o);
  auto reader = s.Connect(TokenOf("reader"));
  for (int i = 0; i < 50; ++i)
    reader->Queue(net::FollowRequest{1, static_cast<uint64_t>(i + 2), 1});
  auto replies = reader->Flush();
  REQUIRE(replies.ok());
  for (const auto& r : *replies) CHECK(r.status.code() == Code::kPermissionDenied);
  auto counts = reader->Counts(1);
  REQUIRE(counts.ok());
  CHECK(counts->following == 0);
  ::unlink(path.c_str());
}

TEST_CASE("a reload that takes write away applies to the next command; nobody is dropped") {
  const std::string path = "/tmp/relgraph-perm-reload-" + std::to_string(getpid());
  net::ServerOptions o;
  o.clients_file = WriteClientsFile(path, net::kPermWrite | net::kPermRead);
  TestServer s(o);
  auto writer = s.Connect(TokenOf("writer"));
  auto reader = s.Connect(TokenOf("reader"));
  REQUIRE(writer->Follow(1, 2, 1).ok());
  WriteClientsFile(path, net::kPermRead);
  REQUIRE(s.server->ReloadSecurity({}, path, "").ok());
  auto refused = writer->Follow(1, 3, 1);
  CHECK(refused.status().code() == Code::kPermissionDenied);
  CHECK(writer->Counts(1).ok());  // still reads, same connection
  CHECK(reader->Counts(1).ok());
  // A client removed from the file is closed at its next command.
  {
    std::ofstream f(path);
    f << "reader read " << net::TokenCredential(TokenOf("reader")) << "\n";
  }
  REQUIRE(s.server->ReloadSecurity({}, path, "").ok());
  auto gone = writer->Counts(1);
  CHECK(gone.status().code() == Code::kUnauthenticated);
  CHECK(reader->Counts(1).ok());
  // A file that does not parse changes nothing.
  {
    std::ofstream f(path);
    f << "broken line\n";
  }
  CHECK(!s.server->ReloadSecurity({}, path, "").ok());
  CHECK(reader->Counts(1).ok());
  ::unlink(path.c_str());
}

TEST_CASE("the slow-command log names the client") {
  const std::string path = "/tmp/relgraph-perm-slowlog-" + std::to_string(getpid());
  net::ServerOptions o;
  o.clients_file = WriteClientsFile(path, net::kPermWrite);
  o.slowlog_us = 0;  // every command
  TestServer s(o);
  auto reader = s.Connect(TokenOf("reader"));
  REQUIRE(reader->Counts(5).ok());
  auto admin = s.Connect(TokenOf("admin"));
  auto log = admin->Slowlog();
  REQUIRE(log.ok());
  bool found = false;
  for (const auto& e : log->entries) {
    if (e.command == "counts") found = e.client.rfind("reader@127.0.0.1:", 0) == 0;
  }
  CHECK(found);
  ::unlink(path.c_str());
}

TEST_CASE("before HELLO only HELLO is served, and frames are capped small") {
  const std::string path = "/tmp/relgraph-perm-prehello-" + std::to_string(getpid());
  net::ServerOptions o;
  o.clients_file = WriteClientsFile(path, net::kPermWrite);
  TestServer s(o);
  const int fd = s.RawSocket();
  // A 64 KiB frame before HELLO: refused by its length, before its body is read.
  const std::string big = Frame(1, net::Opcode::kHello, std::string(64 << 10, 'x'));
  ::send(fd, big.data(), 16, MSG_NOSIGNAL);
  char buffer[4096];
  const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
  REQUIRE(n > 0);
  net::DecodeResult r = net::DecodeFrame(std::string_view(buffer, static_cast<size_t>(n)), 1 << 20);
  REQUIRE(r.state == net::DecodeState::kFrame);
  CHECK(net::StatusFromReply(r.frame).code() == Code::kResourceExhausted);
  ::close(fd);
  auto bad_token = net::Client::Connect(s.ClientOptions("nope"));
  CHECK(bad_token.status().code() == Code::kUnauthenticated);
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace relgraph::testing
