// Replication entirely over TLS with permissions on (real processes): a primary that wants
// client certificates and names its clients, a replica whose link authenticates by its node
// certificate (a `cert` client holding replication), clients with tokens. Writes reach the
// replica; a replica whose certificate names no client with the replication permission is
// refused, says so, and applies nothing.
#include <doctest.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "net/auth/client_registry.h"
#include "tests/net/roles/replication/replication_node.h"
#include "tests/net/tls/test_certs.h"

namespace relgraph {
namespace {

using testing::Node;

struct SecureGroup {
  testing::TestDir dir;
  testing::TestPki pki = testing::MakeTestPki(dir.path() + "/pki");
  testing::CertFiles primary_cert = testing::IssueNodeCert(pki, "primary-1");
  std::string clients = dir.path() + "/clients";

  // A node's flags: TLS with mutual TLS wanted, its clients, --require-tls.
  std::vector<std::string> Flags(const testing::CertFiles& cert) const {
    return {"--tls-cert=" + cert.cert,   "--tls-key=" + cert.key, "--tls-ca=" + pki.ca,
            "--clients-file=" + clients, "--require-tls",         "--http=off"};
  }
  // The primary with its certificate; the replica following it, its node certificate naming
  // it "replica-1"; both nodes' test connections as client "app".
  void Start(Node& primary, Node& replica) const {
    primary.client = replica.client = ClientAs("app-token");
    primary.Start(Flags(primary_cert));
    auto flags = Flags(testing::IssueNodeCert(pki, "replica-1"));
    flags.push_back("--replica-of=" + primary.address());
    replica.Start(flags);
  }
  net::ClientOptions ClientAs(const std::string& token) const {
    net::ClientOptions o;
    o.token = token;
    o.tls.enabled = true;
    o.tls.ca_file = pki.ca;
    return o;
  }
};

void WriteClients(const std::string& path, const std::string& replica_line) {
  std::ofstream f(path);
  f << "app read,write " << net::TokenCredential("app-token") << "\n"
    << "reader read " << net::TokenCredential("reader-token") << "\n"
    << replica_line << "\n";
}

TEST_CASE("a primary and a replica entirely over TLS, the link authenticated by certificate") {
  SecureGroup g;
  WriteClients(g.clients, "replica-1 replication cert");
  Node primary, replica;
  g.Start(primary, replica);

  auto app = primary.Connect();
  for (uint64_t i = 1; i <= 300; ++i) REQUIRE(app->Follow(i, 1 + i % 17).ok());
  testing::WaitCaughtUp(primary, replica);
  auto on_replica = replica.Connect();
  for (uint64_t u = 1; u <= 17; ++u) {
    CHECK(on_replica->Counts(u)->fans == app->Counts(u)->fans);
  }
  // A client holding only read is refused a write.
  net::ClientOptions reader = g.ClientAs("reader-token");
  reader.port = primary.port;
  auto r = net::Client::Connect(reader);
  REQUIRE(r.ok());
  CHECK((*r)->Follow(1, 2).status().code() == Code::kPermissionDenied);
  // A plain connection to the TLS port: refused.
  net::ClientOptions plain;
  plain.port = primary.port;
  CHECK(!net::Client::Connect(plain).ok());
}

TEST_CASE("a replica whose certificate names no replication client is refused and says so") {
  SecureGroup g;
  WriteClients(g.clients, "replica-1 read cert");  // read only: no replication
  Node primary, replica;
  g.Start(primary, replica);
  auto app = primary.Connect();
  REQUIRE(app->Follow(1, 2).ok());
  std::string message;
  for (int i = 0; i < 300 && message.find("permission") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto link = replica.Connect()->Replication();
    REQUIRE(link.ok());
    message = link->message;
  }
  CHECK_MESSAGE(message.find("permission") != std::string::npos, message);
  CHECK(replica.Info("last_lsn") == 0);
}

}  // namespace
}  // namespace relgraph
