// TlsChannel: two channels wired to each other through memory, no sockets. Handshakes that must
// succeed and the ones that must fail with a clear error on both sides, data both ways in
// random chunks, and random bytes thrown at a server's channel.
#include "net/tls/tls_channel.h"

#include <doctest.h>
#include <unistd.h>

#include <random>

#include "tests/net/tls/test_certs.h"

namespace relgraph::net {
namespace {

const testing::TestPki& Pki() {
  static const testing::TestPki pki =
      testing::MakeTestPki("/tmp/relgraph-tls-channel-test-" + std::to_string(getpid()));
  return pki;
}

std::shared_ptr<const TlsContext> Server(TlsServerOptions o) {
  auto ctx = TlsContext::ForServer(o);
  REQUIRE_MESSAGE(ctx.ok(), ctx.status().ToString());
  return *ctx;
}
TlsServerOptions ServerOptions() {
  return {Pki().server.cert, Pki().server.key, "", false};
}
std::shared_ptr<const TlsContext> Client(TlsClientOptions o) {
  o.enabled = true;
  auto ctx = TlsContext::ForClient(o);
  REQUIRE_MESSAGE(ctx.ok(), ctx.status().ToString());
  return *ctx;
}
TlsClientOptions ClientOptions() {
  TlsClientOptions o;
  o.ca_file = Pki().ca;
  return o;
}

struct Pair {
  std::unique_ptr<TlsChannel> client, server;
  Status client_error, server_error;
  std::string client_got, server_got;
  // Moves ciphertext both ways and plaintext out until nothing moves.
  void Pump() {
    for (int round = 0; round < 100; ++round) {
      std::string c2s, s2c;
      client->TakeOutput(&c2s);
      server->TakeOutput(&s2c);
      if (!c2s.empty()) server->PutInput(c2s);
      if (!s2c.empty()) client->PutInput(s2c);
      const bool moved = !c2s.empty() || !s2c.empty();
      Drain(*client, &client_got, &client_error);
      Drain(*server, &server_got, &server_error);
      if (!moved && round > 0) return;
    }
  }
  static void Drain(TlsChannel& ch, std::string* got, Status* error) {
    if (!error->ok()) return;
    char buffer[4096];
    for (;;) {
      auto n = ch.ReadPlain(buffer);
      if (!n.ok()) {
        *error = n.status();
        return;
      }
      if (*n == 0) return;
      got->append(buffer, *n);
    }
  }
};

Pair Connect(std::shared_ptr<const TlsContext> client, std::shared_ptr<const TlsContext> server,
             const std::string& host = "localhost") {
  Pair p;
  auto c = TlsChannel::Create(client, host);
  auto s = TlsChannel::Create(server);
  REQUIRE(c.ok());
  REQUIRE(s.ok());
  p.client = std::move(*c);
  p.server = std::move(*s);
  REQUIRE(p.client->WritePlain("hello").ok());  // starts the handshake, waits for its end
  p.Pump();
  return p;
}

TEST_CASE("a trusted server: the handshake completes and bytes flow both ways in order") {
  Pair p = Connect(Client(ClientOptions()), Server(ServerOptions()));
  REQUIRE_MESSAGE(p.client_error.ok(), p.client_error.ToString());
  REQUIRE_MESSAGE(p.server_error.ok(), p.server_error.ToString());
  CHECK(p.client->handshake_done());
  CHECK(p.server->handshake_done());
  CHECK(p.server_got == "hello");
  CHECK(p.client->Description().rfind("TLSv1.3", 0) == 0);
  CHECK(p.server->PeerCommonName().empty());  // no client certificate asked for

  std::mt19937 rng(7);
  std::string sent_c, sent_s;
  for (int i = 0; i < 200; ++i) {
    std::string chunk(rng() % 40000, '\0');
    for (char& ch : chunk) ch = static_cast<char>(rng());
    if (i % 2) {
      REQUIRE(p.client->WritePlain(chunk).ok());
      sent_c += chunk;
    } else {
      REQUIRE(p.server->WritePlain(chunk).ok());
      sent_s += chunk;
    }
    if (rng() % 3 == 0) p.Pump();
  }
  p.Pump();
  CHECK(p.server_got == "hello" + sent_c);
  CHECK(p.client_got == sent_s);
}

TEST_CASE("the connect host must be named by the certificate") {
  Pair by_ip = Connect(Client(ClientOptions()), Server(ServerOptions()), "127.0.0.1");
  CHECK(by_ip.client_error.ok());
  Pair wrong = Connect(Client(ClientOptions()), Server(ServerOptions()), "db.example.com");
  CHECK(wrong.client_error.code() == Code::kUnauthenticated);
  CHECK(wrong.client_error.message().find("hostname mismatch") != std::string::npos);
}

TEST_CASE("an untrusted or expired server certificate: refused, both sides say why") {
  SUBCASE("untrusted") {
    Pair p = Connect(Client(ClientOptions()),
                     Server({Pki().rogue_server.cert, Pki().rogue_server.key, "", false}));
    CHECK(p.client_error.code() == Code::kUnauthenticated);
    CHECK(p.client_error.message().find("certificate verify failed") != std::string::npos);
    CHECK(!p.server_error.ok());  // the client's alert told it
    CHECK(p.server_error.message().find("unknown ca") != std::string::npos);
  }
  SUBCASE("expired: a server refuses to load it, a client refuses it") {
    auto refused = TlsContext::ForServer({Pki().expired.cert, Pki().expired.key, "", false});
    CHECK(refused.status().code() == Code::kInvalidArgument);
    CHECK(refused.status().message().find("has expired") != std::string::npos);
  }
}

TEST_CASE("mutual TLS: a client certificate from the trusted CA names the client") {
  TlsServerOptions so = ServerOptions();
  so.ca_file = Pki().ca;
  so.require_client_cert = true;
  const auto server = Server(so);
  const testing::CertFiles alice = testing::IssueClientCert(Pki(), "alice");

  TlsClientOptions with_cert = ClientOptions();
  with_cert.cert_file = alice.cert;
  with_cert.key_file = alice.key;
  Pair ok = Connect(Client(with_cert), server);
  REQUIRE_MESSAGE(ok.server_error.ok(), ok.server_error.ToString());
  CHECK(ok.server_got == "hello");
  CHECK(ok.server->PeerCommonName() == "alice");

  Pair missing = Connect(Client(ClientOptions()), server);
  CHECK(missing.server_error.code() == Code::kUnauthenticated);
  CHECK(missing.server_error.message().find("peer did not return a certificate") !=
        std::string::npos);
  CHECK(!missing.client_error.ok());
  CHECK(missing.server_got.empty());

  TlsClientOptions rogue = ClientOptions();
  rogue.cert_file = Pki().rogue_client.cert;
  rogue.key_file = Pki().rogue_client.key;
  Pair intruder = Connect(Client(rogue), server);
  CHECK(intruder.server_error.code() == Code::kUnauthenticated);
  CHECK(intruder.server_got.empty());
}

TEST_CASE("bad files: the error names the file") {
  auto no_cert = TlsContext::ForServer({"/nonexistent.crt", Pki().server.key, "", false});
  CHECK(no_cert.status().message().find("/nonexistent.crt") != std::string::npos);
  auto mismatch = TlsContext::ForServer({Pki().server.cert, Pki().rogue_server.key, "", false});
  CHECK(mismatch.status().message().find("does not match") != std::string::npos);
  TlsClientOptions o = ClientOptions();
  o.enabled = true;
  o.ca_file = Pki().server.key;  // not a certificate
  CHECK(!TlsContext::ForClient(o).ok());
}

TEST_CASE("random bytes and cut handshakes into a server's channel: an error, never a crash") {
  const auto server = Server(ServerOptions());
  std::mt19937 rng(11);
  for (int i = 0; i < 300; ++i) {
    auto s = TlsChannel::Create(server);
    REQUIRE(s.ok());
    std::string junk(rng() % 2000, '\0');
    for (char& ch : junk) ch = static_cast<char>(rng());
    if (i % 3 == 0 && junk.size() > 5) {  // looks like a handshake record, then garbage
      junk[0] = 0x16;
      junk[1] = 0x03;
      junk[2] = 0x01;
    }
    (*s)->PutInput(junk);
    char out[256];
    auto r = (*s)->ReadPlain(out);
    CHECK((!r.ok() || *r == 0));
    std::string alert;
    (*s)->TakeOutput(&alert);  // whatever it says, it says it without crashing
  }
  // A real client's handshake cut at every length stalls, waiting for more, without error.
  auto c = TlsChannel::Create(Client(ClientOptions()), "localhost");
  REQUIRE((*c)->WritePlain("x").ok());
  std::string hello;
  (*c)->TakeOutput(&hello);
  for (size_t cut = 0; cut < hello.size(); cut += 7) {
    auto s = TlsChannel::Create(server);
    (*s)->PutInput(std::string_view(hello).substr(0, cut));
    char out[16];
    auto r = (*s)->ReadPlain(out);
    REQUIRE(r.ok());
    CHECK(*r == 0);
  }
}

TEST_CASE(
    "LooksLikeTlsHandshake: a real ClientHello's first bytes, from one byte on; not a frame") {
  // A ClientHello from a real client session, byte by byte as a socket may deliver it.
  auto client = TlsChannel::Create(Client(ClientOptions()), "localhost");
  REQUIRE(client.ok());
  std::string hello;
  REQUIRE((*client)->WritePlain("x").ok());  // starts the handshake
  (*client)->TakeOutput(&hello);
  REQUIRE(hello.size() > 5);
  for (size_t n = 1; n <= 5; ++n) CHECK(LooksLikeTlsHandshake(hello.substr(0, n)));
  CHECK_FALSE(LooksLikeTlsHandshake(""));
  std::string frame;  // a HELLO frame's first bytes: its length, little-endian
  frame.push_back(0x10);
  frame.append(4, '\0');
  CHECK_FALSE(LooksLikeTlsHandshake(frame));
  CHECK_FALSE(LooksLikeTlsHandshake(std::string("\x16\x02", 2)));  // not version 3.x
  CHECK_FALSE(LooksLikeTlsHandshake(std::string("\x16\x03\x02", 3)));
}

}  // namespace
}  // namespace relgraph::net
