// relgraph-admin's commands, called in-process.
#include <doctest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>
#include <tuple>

#include "net/auth/client_registry.h"
#include "engine/db.h"
#include "engine/durable/wal_records.h"
#include "engine/import/edge_list.h"
#include "relgraph_version.h"
#include "storage/env/file_names.h"
#include "storage/wal/wal_reader.h"
#include "storage/wal/wal_writer.h"
#include "net/cluster/nats_link.h"
#include "tests/net/tls/test_certs.h"
#include "tests/storage/test_dir.h"
#include "tests/tools/nats_server_process.h"
#include "tools/admin/admin_commands.h"

namespace relgraph {
namespace {

using testing::TestDir;

struct Ran {
  int code;
  std::string out, err;
};

Ran Admin(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int code = admin::Run(args, out, err);
  return {code, out.str(), err.str()};
}

std::string WriteEdgeList(const std::string& dir) {
  const std::string path = JoinPath(dir, "edges.txt");
  std::ofstream f(path);
  f << "# test graph\n";
  std::mt19937 rng(1);
  for (int i = 0; i < 3000; ++i)
    f << 1 + rng() % 300 << "\t" << 1 + rng() % 300 << "\t" << 1'600'000'000'000 + i << "\n";
  return path;
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  std::sort(v.begin(), v.end());
  return v;
}

DbOptions Opts() {
  DbOptions o;
  o.durability = DurabilityMode::kAlways;
  o.graph.rate_limit.enabled = false;
  o.wal_segment_bytes = 4096;
  return o;
}

TEST_CASE("admin: usage, help and unknown commands exit with the documented codes") {
  CHECK(Admin({}).code == 2);
  CHECK(Admin({"--help"}).code == 0);
  CHECK(Admin({"verify", "--help"}).code == 0);
  CHECK(Admin({"frobnicate"}).code == 2);
  CHECK(Admin({"verify"}).code == 2);
  CHECK(Admin({"export", "a", "b"}).code == 2);
  CHECK(Admin({"verify", "/nonexistent/dir"}).code == 1);
  CHECK(Admin({"import", "x", "y", "--bogus"}).code == 2);
  const Ran version = Admin({"--version"});
  CHECK(version.code == 0);
  CHECK(version.out == std::string("relgraph-admin ") + kVersion + "\n");
}

TEST_CASE("admin: --help and -h at every level print usage on stdout and exit 0") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--help"}, "usage: relgraph-admin COMMAND"},
      {{"-h"}, "usage: relgraph-admin COMMAND"},
      {{"cluster", "--help"}, "usage: relgraph-admin cluster COMMAND"},
      {{"cluster", "-h"}, "usage: relgraph-admin cluster COMMAND"},
      {{"cluster", "init", "--help"}, "usage: relgraph-admin cluster init"},
      {{"cluster", "show", "-h"}, "usage: relgraph-admin cluster show"},
      {{"cluster", "move-bucket", "--help"}, "usage: relgraph-admin cluster move-bucket"},
      {{"cluster", "export-map", "--help"}, "usage: relgraph-admin cluster export-map"},
      {{"cluster", "import-map", "-h"}, "--force"},
      // --help wins over missing or bad flags: nothing runs, nothing connects to NATS.
      {{"cluster", "move-bucket", "--buckets=x", "--help"}, "--timeout-ms"},
  };
  for (const auto& [args, expected] : cases) {
    const Ran r = Admin(args);
    CAPTURE(args.size());
    CHECK_MESSAGE(r.code == 0, r.err);
    CHECK(r.err.empty());
    CHECK_MESSAGE(r.out.find(expected) != std::string::npos, r.out);
  }
  CHECK(Admin({"cluster", "move-bucket", "--help"}).out.find("cluster init") == std::string::npos);
  CHECK(Admin({"cluster", "frobnicate", "--help"}).code == 2);
  CHECK(Admin({"cluster"}).code == 2);
  // Usage errors before anything connects.
  CHECK(Admin({"cluster", "import-map", "--nats=nats://127.0.0.1:1"}).code == 2);
  CHECK(Admin({"cluster", "init", "--shards=1=127.0.0.1:7707", "--nats-replicas=9"}).code == 2);
  CHECK(Admin({"cluster", "show", "--nats=127.0.0.1:4222"}).code == 2);
  CHECK(Admin({"cluster", "export-map", "--force"}).code == 2);
}

TEST_CASE("admin: import, verify, export round-trip the edge list; import refuses existing data") {
  TestDir dir;
  const std::string edges = WriteEdgeList(dir.path());
  const std::string data = JoinPath(dir.path(), "data");
  Ran r = Admin({"import", edges, data, "--max-following=5"});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out.find("over the cap") != std::string::npos);
  // The follows the cap dropped are counted where a person looks, with the way to keep them.
  const size_t over = r.out.find(" over the cap");
  const std::string count = r.out.substr(r.out.rfind(' ', over - 1) + 1, over - r.out.rfind(' ', over - 1) - 1);
  CHECK(count != "0");
  CHECK(r.err == "relgraph-admin import: dropped " + count +
                     " follows past the cap of 5 followees per user; --no-cap keeps up to "
                     "524287\n");
  CHECK(Admin({"import", edges, JoinPath(dir.path(), "nocap"), "--no-cap"}).err == "");
  CHECK(Admin({"import", edges, data}).code == 1);
  r = Admin({"verify", data});
  CHECK_MESSAGE(r.code == 0, r.err);
  r = Admin({"export", data});
  REQUIRE(r.code == 0);
  // The same file through the engine's loader gives the same edges.
  GraphOptions o;
  o.rate_limit.enabled = false;
  o.max_following = 5;
  Graph g(o);
  REQUIRE(LoadEdgeList(edges, g).ok());
  std::ostringstream want;
  g.ForEachEdge(
      [&](UserId a, UserId b, TimestampMs ts) { want << a << " " << b << " " << ts << "\n"; });
  CHECK(Lines(r.out) == Lines(want.str()));
  // And a Db opened on the imported directory sees them and writes on top.
  auto db = Db::Open(data, Opts());
  REQUIRE(db.ok());
  CHECK((*db)->Read([](const Graph& gr) { return gr.edge_count(); }) == g.edge_count());
}

TEST_CASE("admin: snapshot, restore, inspect and wal-dump on a live-written directory") {
  TestDir dir;
  const std::string data = JoinPath(dir.path(), "data");
  {
    auto db = Db::Open(data, Opts());
    REQUIRE(db.ok());
    for (UserId u = 2; u < 60; ++u)
      REQUIRE((*db)->FollowAt(1, u, 1000 + static_cast<TimestampMs>(u)).ok());
    REQUIRE((*db)->Unfollow(1, 2).ok());
    // While the Db holds the directory, admin refuses it.
    Ran locked = Admin({"inspect", data});
    CHECK(locked.code == 1);
    CHECK(locked.err.find("in use") != std::string::npos);
  }
  Ran r = Admin({"wal-dump", data});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("1 follow 1 -> 2 at 1002") != std::string::npos);
  CHECK(r.out.find("59 unfollow 1 -> 2") != std::string::npos);
  r = Admin({"snapshot", data});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  r = Admin({"inspect", data});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("57 edges") != std::string::npos);
  const std::string snap = JoinPath(data, SnapshotName(59));
  CHECK(Admin({"verify", snap}).code == 0);
  CHECK(Admin({"inspect", snap}).out.find("lsn 59") != std::string::npos);
  const std::string copy = JoinPath(dir.path(), "restored");
  r = Admin({"restore", snap, copy});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(Admin({"restore", snap, copy}).code == 1);  // not over existing data
  CHECK(Lines(Admin({"export", copy}).out) == Lines(Admin({"export", data}).out));
}

std::string DigestLine(const std::string& out) {
  const size_t at = out.rfind("\ndigest ");  // the graph's (the feed's line says "feed digest")
  return at == std::string::npos ? "" : out.substr(at + 1, 23);
}

TEST_CASE("admin: digest round-trip: random graph, snapshot, restore, equal digest") {
  TestDir dir;
  const std::string data = JoinPath(dir.path(), "data");
  std::mt19937_64 rng(99);
  uint64_t digest_before = 0;
  {
    auto db = Db::Open(data, Opts());
    REQUIRE(db.ok());
    for (int i = 0; i < 3000; ++i) {
      const UserId a = 1 + rng() % 200, b = 1 + rng() % 200;
      if (rng() % 4 == 0) {
        (*db)->Unfollow(a, b).status().IgnoreError();
      } else {
        (*db)->FollowAt(a, b, static_cast<TimestampMs>(rng() % 5000)).status().IgnoreError();
      }
    }
    digest_before = (*db)->Read([](const Graph& g) { return g.Digest(); });
  }
  REQUIRE(Admin({"snapshot", data}).code == 0);
  const auto snaps = ListNumberedFiles(Env::Posix(), data, FileType::kSnapshot);
  REQUIRE(snaps.ok());
  REQUIRE_FALSE(snaps->empty());
  const std::string snap = JoinPath(data, SnapshotName(snaps->back()));
  const std::string copy = JoinPath(dir.path(), "restored");
  REQUIRE(Admin({"restore", snap, copy}).code == 0);
  char want[24];
  std::snprintf(want, sizeof want, "digest %016llx",
                static_cast<unsigned long long>(digest_before));
  const Ran original = Admin({"verify", data});
  const Ran restored = Admin({"verify", copy});
  REQUIRE(original.code == 0);
  REQUIRE(restored.code == 0);
  CHECK(DigestLine(original.out) == want);
  CHECK(DigestLine(restored.out) == want);
  CHECK(DigestLine(Admin({"verify", snap}).out) == want);
  // A change shows in the digest.
  {
    auto db = Db::Open(copy, Opts());
    REQUIRE(db.ok());
    REQUIRE((*db)->FollowAt(5000, 5001, 1).ok());
  }
  CHECK(DigestLine(Admin({"verify", copy}).out) != want);
}

TEST_CASE(
    "admin: verify names damage; repair keeps a backup and truncates at the last good record") {
  TestDir dir;
  const std::string data = JoinPath(dir.path(), "data");
  {
    auto db = Db::Open(data, Opts());
    REQUIRE(db.ok());
    for (UserId u = 2; u < 400; ++u)
      REQUIRE((*db)->FollowAt(1 + u % 7, u, static_cast<TimestampMs>(u)).ok());
  }
  auto segments = *ListWalSegments(Env::Posix(), data);
  REQUIRE(segments.size() > 3);
  // Flip a byte in the middle of the second segment.
  const std::string victim = JoinPath(data, WalSegmentName(segments[1]));
  std::string bytes = *Env::Posix()->ReadFile(victim);
  bytes[bytes.size() / 2] ^= 0x40;
  {
    auto f = Env::Posix()->OpenWritable(victim, true);
    REQUIRE((*f)->Append(bytes).ok());
    REQUIRE((*f)->Close().ok());
  }
  Ran r = Admin({"verify", data});
  CHECK(r.code == 1);
  CHECK(r.err.find(WalSegmentName(segments[1])) != std::string::npos);
  CHECK(r.err.find("relgraph-admin repair") != std::string::npos);
  CHECK_FALSE(Db::Open(data, Opts()).ok());

  r = Admin({"repair", data});
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out.find("originals kept in") != std::string::npos);
  CHECK(r.out.find("removed") != std::string::npos);
  CHECK(Admin({"verify", data}).code == 0);
  CHECK(Admin({"repair", data}).out.find("nothing to repair") != std::string::npos);
  // The backup holds the damaged segment as it was.
  bool found = false;
  const auto names = Env::Posix()->ListDir(data);
  REQUIRE(names.ok());
  for (const std::string& name : *names) {
    if (name.rfind("repair-backup-", 0) == 0) {
      found = *Env::Posix()->ReadFile(
                  JoinPath(JoinPath(data, name), WalSegmentName(segments[1]))) == bytes;
    }
  }
  CHECK(found);
  auto db = Db::Open(data, Opts());
  REQUIRE_MESSAGE(db.ok(), db.status().ToString());
  const uint64_t kept = (*db)->recovery().last_lsn;
  CHECK(kept > 0);
  CHECK(kept < 398);
  CHECK((*db)->Read([](const Graph& g) { return g.edge_count(); }) == kept);
}

// A WAL whose records each pass their checksum but together break what the engine guarantees
// about blocks and requests: replay takes them (its ensure forms trust the log), and verify's
// invariant check must name the damage.
TEST_CASE("admin: verify names an access state the engine could not have made") {
  struct Case {
    const char* what;
    std::vector<std::pair<WalRecordType, WalPayload>> records;
    const char* damage;  // what verify's error must say
  };
  const std::vector<Case> cases = {
      {"a follow across a block",
       {{WalRecordType::kBlock, EncodeBlockRecord(3, 4, 10, 0)},
        {WalRecordType::kFollow, EncodeFollowRecord(4, 3, 11, 0)}},
       "block 3 -> 4: an edge joins the pair"},
      {"a request beside its edge, to a public account",
       {{WalRecordType::kFollow, EncodeFollowRecord(1, 2, 10, 0)},
        {WalRecordType::kRequest, EncodePairRecord(1, 2, 11)}},
       "request 1 -> 2 to a public account"},
      {"a request across a block",
       {{WalRecordType::kSetPrivate, EncodeSetPrivateRecord(6, 10, true)},
        {WalRecordType::kBlock, EncodeBlockRecord(6, 5, 11, 0)},
        {WalRecordType::kRequest, EncodePairRecord(5, 6, 12)}},
       "block 6 -> 5: a request joins the pair"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    TestDir dir;
    const std::string data = JoinPath(dir.path(), "data");
    REQUIRE(Env::Posix()->CreateDir(data).ok());
    {
      auto wal = WalWriter::Open(Env::Posix(), data, {}, 1, 1);
      REQUIRE_MESSAGE(wal.ok(), wal.status().ToString());
      for (const auto& [type, payload] : c.records) {
        REQUIRE((*wal)->Append(static_cast<uint8_t>(type), payload.view()).ok());
      }
      REQUIRE((*wal)->Close().ok());
    }
    const Ran r = Admin({"verify", data});
    CHECK(r.code == 1);
    CHECK_MESSAGE(r.err.find(c.damage) != std::string::npos, r.err);
  }
}

}  // namespace
}  // namespace relgraph

namespace relgraph {
namespace {

TEST_CASE("admin token: a fresh token and a clients-file line that authenticates it") {
  std::ostringstream out, err;
  REQUIRE(admin::Run({"token", "app", "read,write"}, out, err) == 0);
  std::istringstream lines(out.str());
  std::string token, line;
  std::getline(lines, token);
  std::getline(lines, line);
  CHECK(token.size() == 64);
  auto registry = net::ClientRegistry::Parse(line, "line", "");
  REQUIRE(registry.ok());
  auto who = registry->Authenticate(token, "");
  REQUIRE(who.ok());
  CHECK(who->name == "app");
  CHECK(who->permissions == (net::kPermRead | net::kPermWrite));
  // Two runs never print the same token.
  std::ostringstream again, err2;
  REQUIRE(admin::Run({"token", "app", "read"}, again, err2) == 0);
  CHECK(again.str().substr(0, 64) != token);
  // Bad input is refused, naming what is wrong.
  std::ostringstream o3, e3;
  CHECK(admin::Run({"token", "app", "fly"}, o3, e3) == 2);
  CHECK(e3.str().find("unknown permission \"fly\"") != std::string::npos);
  std::ostringstream o4, e4;
  CHECK(admin::Run({"token", "a b"}, o4, e4) == 2);
}

TEST_CASE("admin group: --nats-tls-* reach a NATS server that wants TLS; without them, why not") {
  testing::TestDir dir;
  const testing::TestPki pki = testing::MakeTestPki(dir.path() + "/pki");
  const testing::CertFiles admin = testing::IssueClientCert(pki, "admin");
  testing::NatsServerProcess nats(dir.path(), {"--tlsverify", "--tlscert", pki.server.cert,
                                               "--tlskey", pki.server.key, "--tlscacert",
                                               pki.ca});
  const std::vector<std::string> status = {"group", "status", "--group=g", "--nats=" + nats.url()};
  Ran plain = Admin(status);
  CHECK(plain.code == 1);
  CHECK(plain.err.find("SSL") != std::string::npos);
  std::vector<std::string> secure = status;
  secure.insert(secure.end(), {"--nats-tls-ca=" + pki.ca, "--nats-tls-cert=" + admin.cert,
                               "--nats-tls-key=" + admin.key});
  Ran over_tls = Admin(secure);
  INFO(over_tls.out << over_tls.err);
  CHECK(over_tls.err.find("SSL") == std::string::npos);
  CHECK(over_tls.err.find("connecting to") == std::string::npos);
  CHECK(Admin({"group", "status", "--group=g", "--nats-tls-ca"}).code == 2);
  net::SetNatsTls({});
}

}  // namespace
}  // namespace relgraph
