#include "net/http/http_server.h"

#include <doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <random>
#include <vector>

#include "net/tls/tls_channel.h"
#include "tests/net/http/http_get.h"
#include "tests/net/http/https_get.h"
#include "tests/net/tls/test_certs.h"

namespace relgraph {
namespace {

net::HttpServerOptions AnyPort() {
  net::HttpServerOptions o;
  o.port = 0;
  return o;
}

TEST_CASE("http server: a route answers over a socket, others get 404, other methods 405") {
  net::HttpServer http(AnyPort());
  int calls = 0;
  http.Route("/hello", [&calls](const net::HttpRequest& r) {
    ++calls;
    return net::HttpResponse{200, "text/plain", "hi " + r.query + "\n"};
  });
  REQUIRE(http.Start().ok());
  const auto got = testing::HttpGet(http.port(), "/hello?x=1");
  CHECK(got.status == 200);
  CHECK(got.body == "hi x=1\n");
  CHECK(testing::HttpGet(http.port(), "/nope").status == 404);
  CHECK(testing::HttpGet(http.port(), "/nope").body.find("served: /hello") != std::string::npos);
  CHECK(testing::HttpGet(http.port(), "/hello", "POST").status == 405);
  const auto head = testing::HttpGet(http.port(), "/hello", "HEAD");
  CHECK(head.status == 200);
  CHECK(head.body.empty());
  CHECK(head.head.find("Content-Length: 4") != std::string::npos);  // "hi \n"
  CHECK(calls == 2);  // GET and HEAD; 404 and 405 never reach the handler
  http.Stop();
  CHECK(testing::HttpGet(http.port(), "/hello").status == 0);  // closed
}

TEST_CASE("http server: a taken port is an IOError naming it, a bad host invalid") {
  net::HttpServer first(AnyPort());
  REQUIRE(first.Start().ok());
  net::HttpServerOptions o;
  o.port = first.port();
  net::HttpServer second(o);
  const Status s = second.Start();
  CHECK(s.code() == Code::kIOError);
  CHECK(s.message().find(std::to_string(first.port())) != std::string::npos);
  o.host = "not-an-ip";
  CHECK(net::HttpServer(o).Start().code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace relgraph

// HTTPS (docs/http.md, "HTTPS"): the same routes over TLS, what a client that does not trust
// the certificate, speaks plain HTTP, sends junk or stops mid-handshake gets, mutual TLS, and
// a certificate swapped while a connection stays open.
namespace relgraph {
namespace {

const testing::TestPki& Pki() {
  static const testing::TestPki pki =
      testing::MakeTestPki("/tmp/relgraph-http-server-test-" + std::to_string(getpid()));
  return pki;
}

net::HttpServerOptions Https(uint32_t threads = 1) {
  net::HttpServerOptions o = AnyPort();
  o.threads = threads;
  o.tls.cert_file = Pki().server.cert;
  o.tls.key_file = Pki().server.key;
  return o;
}

net::TlsClientOptions Trusting(const std::string& ca) {
  net::TlsClientOptions o;
  o.enabled = true;
  o.ca_file = ca;
  return o;
}

void Hello(net::HttpServer* http) {
  http->Route("/hello", [](const net::HttpRequest& r) {
    return net::HttpResponse{200, "text/plain", "hi " + r.query + "\n"};
  });
}

// The first flight of a TLS client: its ClientHello.
std::string ClientHello() {
  auto context = net::TlsContext::ForClient(Trusting(Pki().ca));
  REQUIRE(context.ok());
  auto channel = net::TlsChannel::Create(*context, "localhost");
  REQUIRE(channel.ok());
  REQUIRE((*channel)->WritePlain("GET / HTTP/1.1\r\n\r\n").ok());
  std::string hello;
  REQUIRE((*channel)->TakeOutput(&hello));
  return hello;
}

TEST_CASE("https: a trusting client is served, keep-alive; an untrusted certificate is refused") {
  net::HttpServer http(Https());
  Hello(&http);
  REQUIRE(http.Start().ok());
  auto c = testing::HttpsConnection::Open(http.port(), Trusting(Pki().ca));
  REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  for (int i = 0; i < 3; ++i) {  // one connection, several requests
    const auto got = (*c)->Get("/hello?n=" + std::to_string(i));
    CHECK(got.status == 200);
    CHECK(got.body == "hi n=" + std::to_string(i) + "\n");
  }
  CHECK((*c)->Get("/nope").status == 404);
  // A client trusting another CA refuses the server's certificate.
  auto rogue = testing::HttpsConnection::Open(http.port(), Trusting(Pki().rogue_ca));
  REQUIRE_FALSE(rogue.ok());
  CHECK(rogue.status().message().find("certificate verify failed") != std::string::npos);
  CHECK((*c)->Get("/hello").status == 200);  // the refused handshake did not disturb it
}

TEST_CASE("https: a certificate that cannot be used stops Start with the file named") {
  net::HttpServerOptions o = Https();
  o.tls.cert_file = Pki().expired.cert;
  o.tls.key_file = Pki().expired.key;
  net::HttpServer expired(o);
  const Status s = expired.Start();
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find(Pki().expired.cert) != std::string::npos);
  o = Https();
  o.tls.key_file = Pki().rogue_server.key;  // not the certificate's key
  CHECK(net::HttpServer(o).Start().code() == Code::kInvalidArgument);
  o = AnyPort();
  o.tls.key_file = Pki().server.key;  // a key without a certificate
  CHECK(net::HttpServer(o).Start().code() == Code::kInvalidArgument);
}

TEST_CASE("https: a plain HTTP request gets a plain 400 saying the port speaks HTTPS") {
  net::HttpServer http(Https());
  Hello(&http);
  REQUIRE(http.Start().ok());
  const auto got = testing::HttpGet(http.port(), "/hello");
  CHECK(got.status == 400);
  CHECK(got.body.find("this port speaks HTTPS") != std::string::npos);
  CHECK(testing::HttpsGet(http.port(), Trusting(Pki().ca), "/hello").status == 200);
}

TEST_CASE("https: junk, plain requests and stalled or cut handshakes never hold up a client") {
  // One thread: a session that blocked it would stall the good client below.
  net::HttpServer http(Https(/*threads=*/1));
  Hello(&http);
  REQUIRE(http.Start().ok());
  const std::string hello = ClientHello();
  std::mt19937_64 rng(47);
  std::vector<int> open;  // left open while the good client is served
  for (int round = 0; round < 20; ++round) {
    const int fd = testing::RawConnect(http.port());
    REQUIRE(fd >= 0);
    std::string bytes;
    switch (round % 5) {
      case 0:  // random bytes
        for (size_t i = 1 + rng() % 300; i > 0; --i) bytes.push_back(static_cast<char>(rng()));
        break;
      case 1:  // random bytes behind a TLS handshake record's first byte
        bytes = "\x16\x03\x01";
        for (size_t i = rng() % 300; i > 0; --i) bytes.push_back(static_cast<char>(rng()));
        break;
      case 2:  // a ClientHello cut short
        bytes = hello.substr(0, 1 + rng() % (hello.size() - 1));
        break;
      case 3:  // plain HTTP
        bytes = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n";
        break;
      default:  // nothing at all
        break;
    }
    if (!bytes.empty()) REQUIRE(::write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size()));
    if (rng() % 2 == 0) {
      ::close(fd);  // cut
    } else {
      open.push_back(fd);  // stalled
    }
    const auto got = testing::HttpsGet(http.port(), Trusting(Pki().ca), "/hello?r=" +
                                                                            std::to_string(round));
    CHECK(got.status == 200);
    CHECK(got.body == "hi r=" + std::to_string(round) + "\n");
  }
  for (int fd : open) ::close(fd);
  CHECK(testing::HttpsGet(http.port(), Trusting(Pki().ca), "/hello").status == 200);
}

TEST_CASE("https: mutual TLS lets in a certificate of the CA, refuses none or a rogue one") {
  net::HttpServerOptions o = Https();
  o.tls.ca_file = Pki().ca;
  o.tls.require_client_cert = true;
  net::HttpServer http(o);
  Hello(&http);
  REQUIRE(http.Start().ok());
  const testing::CertFiles alice = testing::IssueClientCert(Pki(), "alice");
  net::TlsClientOptions with_cert = Trusting(Pki().ca);
  with_cert.cert_file = alice.cert;
  with_cert.key_file = alice.key;
  CHECK(testing::HttpsGet(http.port(), with_cert, "/hello").status == 200);
  // Under TLS 1.3 the server judges the client's certificate after the client finished its
  // handshake: the refusal shows as a handshake error or as a request without an answer.
  CHECK(testing::HttpsGet(http.port(), Trusting(Pki().ca), "/hello").status == 0);
  net::TlsClientOptions rogue = Trusting(Pki().ca);
  rogue.cert_file = Pki().rogue_client.cert;
  rogue.key_file = Pki().rogue_client.key;
  CHECK(testing::HttpsGet(http.port(), rogue, "/hello").status == 0);
  CHECK(testing::HttpsGet(http.port(), with_cert, "/hello").status == 200);
}

TEST_CASE("https: ReloadTls swaps the certificate for new connections, open ones stay") {
  net::HttpServer http(Https(/*threads=*/2));
  Hello(&http);
  REQUIRE(http.Start().ok());
  auto before = testing::HttpsConnection::Open(http.port(), Trusting(Pki().ca));
  REQUIRE(before.ok());
  REQUIRE((*before)->Get("/hello").status == 200);
  // A file that cannot be used changes nothing.
  net::TlsServerOptions bad;
  bad.cert_file = Pki().dir + "/no-such.pem";
  bad.key_file = Pki().server.key;
  const Status s = http.ReloadTls(bad);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("no-such.pem") != std::string::npos);
  CHECK(testing::HttpsGet(http.port(), Trusting(Pki().ca), "/hello").status == 200);
  // The rogue CA's certificate from now on: new clients must trust that CA.
  net::TlsServerOptions next;
  next.cert_file = Pki().rogue_server.cert;
  next.key_file = Pki().rogue_server.key;
  REQUIRE(http.ReloadTls(next).ok());
  CHECK(testing::HttpsGet(http.port(), Trusting(Pki().rogue_ca), "/hello").status == 200);
  CHECK_FALSE(testing::HttpsConnection::Open(http.port(), Trusting(Pki().ca)).ok());
  // The connection opened before keeps its session.
  const auto got = (*before)->Get("/hello?still");
  CHECK(got.status == 200);
  CHECK(got.body == "hi still\n");
  // Without a certificate: plain HTTP for new connections.
  REQUIRE(http.ReloadTls(net::TlsServerOptions{}).ok());
  CHECK(testing::HttpGet(http.port(), "/hello").status == 200);
}

}  // namespace
}  // namespace relgraph
