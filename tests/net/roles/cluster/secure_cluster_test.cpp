// A cluster entirely over TLS with permissions on (real processes): NATS that wants TLS and
// client certificates, shards that speak TLS to their clients and to NATS, a router (the
// ClusterClient) with a token that may read and write, and nothing else. Random follows across
// shards are acknowledged and end up on both shards they concern; a client without TLS, or
// with a token that may only read, is kept out of what it may not do.
#include <doctest.h>

#include <fstream>
#include <random>

#include "net/auth/client_registry.h"
#include "net/cluster/nats_link.h"
#include "tests/net/roles/cluster/shard_cluster.h"
#include "tests/net/tls/test_certs.h"
#include "tests/storage/test_dir.h"
#include "tests/tools/nats_server_process.h"

namespace relgraph {
namespace {

TEST_CASE("a two-shard cluster over TLS, NATS included, with named clients") {
  testing::TestDir dir;
  const testing::TestPki pki = testing::MakeTestPki(dir.path() + "/pki");
  const testing::CertFiles node = testing::IssueNodeCert(pki, "shard");
  const std::string clients = dir.path() + "/clients";
  {
    std::ofstream f(clients);
    f << "router read,write " << net::TokenCredential("router-token") << "\n"
      << "reader read " << net::TokenCredential("reader-token") << "\n";
  }
  testing::NatsServerProcess nats(dir.path(), {"--tlsverify", "--tlscert", pki.server.cert,
                                               "--tlskey", pki.server.key, "--tlscacert", pki.ca});
  // This process's NATS connections (relgraph-admin cluster init, the router) over TLS too:
  // init sets the process's NATS TLS from its flags, as the relgraph-admin program does.
  const std::vector<std::string> nats_tls = {
      "--nats-tls-ca=" + pki.ca, "--nats-tls-cert=" + node.cert, "--nats-tls-key=" + node.key};
  net::ClientOptions router;
  router.token = "router-token";
  router.tls.enabled = true;
  router.tls.ca_file = pki.ca;
  {
    testing::ShardCluster cluster(
        dir.path(), nats.url(), 2, nats_tls,
        {"--tls-cert=" + node.cert, "--tls-key=" + node.key, "--tls-ca=" + pki.ca,
         "--clients-file=" + clients, "--nats-tls-ca=" + pki.ca, "--nats-tls-cert=" + node.cert,
         "--nats-tls-key=" + node.key, "--require-tls", "--http=off"},
        router);
    auto c = cluster.Client();
    testing::FollowModel model;
    std::mt19937_64 rng(47);
    testing::RandomFollows(*c, model, rng, 300);
    testing::CheckFollows(*c, model);

    net::ClientOptions reader = router;
    reader.token = "reader-token";
    reader.port = cluster.port[1];
    auto r = net::Client::Connect(reader);
    REQUIRE(r.ok());
    const Status read = (*r)->Counts(1).status();  // served, or moved to the user's shard
    CHECK_MESSAGE((read.ok() || read.code() == Code::kMoved), read.ToString());
    CHECK((*r)->Follow(1, 2).status().code() == Code::kPermissionDenied);
    net::ClientOptions plain;
    plain.port = cluster.port[2];
    plain.token = "router-token";
    CHECK(!net::Client::Connect(plain).ok());
  }
  net::SetNatsTls({});
}

}  // namespace
}  // namespace relgraph
