// The server over TLS: the same replies as over plain TCP (a randomized differential run,
// pipelined), the handshakes that must fail and what each side says, junk that must not disturb
// other clients, and certificates swapped without dropping connections.
#include <doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <random>
#include <thread>

#include "tests/net/server/server_test_util.h"
#include "tests/net/tls/test_certs.h"

namespace relgraph::testing {
namespace {

const TestPki& Pki() {
  static const TestPki pki =
      MakeTestPki("/tmp/relgraph-tls-server-test-" + std::to_string(getpid()));
  return pki;
}

net::ServerOptions TlsOptions() {
  net::ServerOptions o;
  o.tls.cert_file = Pki().server.cert;
  o.tls.key_file = Pki().server.key;
  return o;
}

net::ClientOptions TlsClient(const TestServer& s) {
  net::ClientOptions o = s.ClientOptions();
  o.tls.enabled = true;
  o.tls.ca_file = Pki().ca;
  return o;
}

// Every reply of a run of random commands, as bytes: status and body.
std::vector<std::string> RandomRun(net::Client& c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> out;
  for (int batch = 0; batch < 30; ++batch) {
    const int n = 1 + static_cast<int>(rng() % 300);
    for (int i = 0; i < n; ++i) {
      const uint64_t a = 1 + rng() % 50, b = 1 + rng() % 50;
      switch (rng() % 5) {
        case 0:
        case 1:
          c.Queue(net::FollowRequest{a, b, static_cast<int64_t>(1000 + batch * 1000 + i)});
          break;
        case 2:
          c.Queue(net::UnfollowRequest{a, b});
          break;
        case 3: {
          net::FansRequest q;
          q.user = a;
          q.limit = 100;
          c.Queue(q);
          break;
        }
        default:
          c.Queue(net::CountsRequest{a});
      }
    }
    auto replies = c.Flush();
    REQUIRE_MESSAGE(replies.ok(), replies.status().ToString());
    for (const net::RawReply& r : *replies) out.push_back(r.status.ToString() + "|" + r.body);
  }
  return out;
}

TEST_CASE("over TLS every reply is the one plain TCP gives (randomized, pipelined)") {
  TestServer plain;
  TestServer tls(TlsOptions());
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    auto p = plain.Connect();
    auto t = net::Client::Connect(TlsClient(tls));
    REQUIRE_MESSAGE(t.ok(), t.status().ToString());
    CHECK(RandomRun(*p, seed) == RandomRun(**t, seed));
  }
  // A reply larger than one TLS record (16 KiB).
  auto t = net::Client::Connect(TlsClient(tls));
  REQUIRE(t.ok());
  for (uint64_t f = 1000; f < 6000; ++f) (*t)->Queue(net::FollowRequest{f, 7, 1});
  REQUIRE((*t)->Flush().ok());
  net::PageQuery q;
  q.user = 7;
  q.limit = 1000;  // the largest page: about 20 KiB
  auto page = (*t)->Fans(q);
  REQUIRE(page.ok());
  CHECK(page->entries.size() == 1000);
}

TEST_CASE("a plain client at a TLS port, and a TLS client at a plain port, are told why") {
  TestServer tls(TlsOptions());
  auto plain_client = net::Client::Connect(tls.ClientOptions());
  REQUIRE(!plain_client.ok());
  CHECK(plain_client.status().message().find("this port speaks TLS only") != std::string::npos);

  TestServer plain;
  net::ClientOptions o = TlsClient(plain);
  auto tls_client = net::Client::Connect(o);
  REQUIRE(!tls_client.ok());
  CHECK(tls_client.status().message().find("does not speak TLS") != std::string::npos);
}

TEST_CASE("a HELLO refused over TLS: the client reports the server's reason, not a bare close") {
  net::ServerOptions options = TlsOptions();
  options.auth_token = "the-token";
  TestServer server(options);
  net::ClientOptions o = TlsClient(server);
  o.token = "wrong";
  auto c = net::Client::Connect(o);
  REQUIRE(!c.ok());
  CHECK(c.status().code() == Code::kUnauthenticated);
  CHECK(c.status().message().find("closed the connection") == std::string::npos);
  o.token = "the-token";
  CHECK(net::Client::Connect(o).ok());
}

TEST_CASE("certificates refused: untrusted, wrong name, missing under mutual TLS") {
  SUBCASE("the server's certificate is not from a trusted CA") {
    net::ServerOptions so = TlsOptions();
    so.tls.cert_file = Pki().rogue_server.cert;
    so.tls.key_file = Pki().rogue_server.key;
    TestServer s(so);
    auto c = net::Client::Connect(TlsClient(s));
    REQUIRE(!c.ok());
    CHECK(c.status().code() == Code::kUnauthenticated);
    CHECK(c.status().message().find("certificate verify failed") != std::string::npos);
  }
  SUBCASE("the name checked is not the certificate's") {
    TestServer s(TlsOptions());
    net::ClientOptions o = TlsClient(s);
    o.tls.server_name = "relgraph.example.com";
    auto c = net::Client::Connect(o);
    REQUIRE(!c.ok());
    CHECK(c.status().message().find("hostname mismatch") != std::string::npos);
  }
  SUBCASE("mutual TLS: no client certificate") {
    net::ServerOptions so = TlsOptions();
    so.tls.ca_file = Pki().ca;
    so.tls.require_client_cert = true;
    TestServer s(so);
    auto refused = net::Client::Connect(TlsClient(s));
    REQUIRE(!refused.ok());
    const CertFiles mine = IssueClientCert(Pki(), "app");
    net::ClientOptions o = TlsClient(s);
    o.tls.cert_file = mine.cert;
    o.tls.key_file = mine.key;
    auto admitted = net::Client::Connect(o);
    REQUIRE_MESSAGE(admitted.ok(), admitted.status().ToString());
    CHECK((*admitted)->Ping().ok());
  }
}

TEST_CASE("junk, plain bytes and cut handshakes at a TLS port never disturb a client") {
  TestServer s(TlsOptions());
  auto good = net::Client::Connect(TlsClient(s));
  REQUIRE(good.ok());
  std::mt19937 rng(5);
  for (int i = 0; i < 60; ++i) {
    const int fd = s.RawSocket();
    std::string junk(1 + rng() % 3000, '\0');
    for (char& ch : junk) ch = static_cast<char>(rng());
    if (i % 2 == 0) {
      junk[0] = 0x16;  // a handshake record's start, then garbage or a cut
      junk[1] = 0x03;
      junk[2] = 0x01;
    }
    ::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
    if (i % 3 == 0) ::shutdown(fd, SHUT_WR);
    ::close(fd);
    REQUIRE((*good)->Follow(static_cast<uint64_t>(i + 1), 100, 5).ok());
  }
  auto counts = (*good)->Counts(100);
  REQUIRE(counts.ok());
  CHECK(counts->fans == 60);
}

TEST_CASE("a new certificate is used by new connections; open ones keep theirs") {
  TestServer s(TlsOptions());
  auto before = net::Client::Connect(TlsClient(s));
  REQUIRE(before.ok());
  net::TlsServerOptions swapped = TlsOptions().tls;
  swapped.cert_file = Pki().rogue_server.cert;
  swapped.key_file = Pki().rogue_server.key;
  REQUIRE(s.server->ReloadSecurity(swapped, "", "").ok());
  CHECK((*before)->Ping().ok());  // still on the old session
  auto after = net::Client::Connect(TlsClient(s));
  REQUIRE(!after.ok());  // the new certificate is one this client does not trust
  CHECK(after.status().code() == Code::kUnauthenticated);
  // A broken file changes nothing.
  net::TlsServerOptions broken = swapped;
  broken.key_file = Pki().server.key;  // does not match
  CHECK(!s.server->ReloadSecurity(broken, "", "").ok());
  CHECK((*before)->Ping().ok());
}

}  // namespace
}  // namespace relgraph::testing
