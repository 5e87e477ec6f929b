// The HTTP JSON API (net/roles/http/json_api.h) against the binary protocol: two servers with
// the same manual clock get the same random commands, one over HTTP (a JSON body, or a query
// string for reads), one through the C++ client; every answer must be byte for byte the JSON
// the client's reply is shown as (json_reply.h) with the status of its code. Then the HTTP
// side's own rules: tokens, methods, unknown and connection-bound commands, bad bodies.
#include "net/roles/http/json_api.h"

#include <doctest.h>

#include <fstream>
#include <random>
#include <set>

#include "engine/graph/clock.h"
#include "net/auth/client_registry.h"
#include "net/protocol/command_table.h"
#include "net/protocol/json_reply.h"
#include "net/roles/http/observe_port.h"
#include "tests/net/http/http_get.h"
#include "tests/net/http/https_get.h"
#include "tests/net/server/server_test_util.h"
#include "tests/net/tls/test_certs.h"
#include "tests/storage/test_dir.h"

namespace relgraph {
namespace {

using testing::HttpCall;

DbOptions WithClock(Clock* clock) {
  DbOptions o = testing::TestServer::NoRateLimit();
  o.graph.clock = clock;
  return o;
}

// A node with its HTTP port attached.
struct HttpNode {
  explicit HttpNode(Clock* clock, net::ServerOptions options = {},
                    net::TlsServerOptions tls = {})
      : server(options, "", WithClock(clock)), port([&tls] {
          ObservePortOptions o;
          o.http.port = 0;
          o.http.threads = 2;
          o.http.tls = tls;
          return o;
        }()) {
    REQUIRE(port.Start().ok());
    port.Attach(server.db.get(), server.service.get(), server.server.get(), &replication);
  }
  ~HttpNode() { port.Stop(); }
  testing::TestServer server;
  Replication replication;
  ObservePort port;
};

// Fills a request with values from small domains, by field name, so that commands meet each
// other's users, posts and cursors (and sometimes an invalid id).
template <typename T>
void Fill(std::mt19937_64& rng, std::string_view name, T* v) {
  if constexpr (std::is_same_v<T, bool>) {
    *v = rng() % 2 == 0;
  } else if constexpr (net::NamedEnum<T>) {
    for (;;) {
      *v = static_cast<T>(rng() % 32);
      if (net::JsonEnumName(*v) != "unknown") return;
    }
  } else if constexpr (std::is_integral_v<T>) {
    if (name == "limit") {
      *v = static_cast<T>(rng() % 8);
    } else if (name == "offset") {
      *v = static_cast<T>(rng() % 3);
    } else if (name == "kinds") {
      *v = static_cast<T>(rng() % 3 == 0 ? rng() % 16 : 0);
    } else if (name == "kind") {
      *v = static_cast<T>(rng() % 4);
    } else if (name == "ts") {
      *v = static_cast<T>(1'600'000'000'000 + rng() % 1000);
    } else {
      *v = static_cast<T>(rng() % 40 == 0 ? 0 : 1 + rng() % 10);  // users and posts
    }
  } else if constexpr (std::is_same_v<T, std::string>) {
    *v = rng() % 2 == 0 ? "c1" : "host-x:1";
  } else if constexpr (net::JsonCursor<T>) {
    v->ts = static_cast<int64_t>(1'600'000'000'000 + rng() % 1000);
    if constexpr (std::is_same_v<T, net::WireCursor>) {
      v->user = 1 + rng() % 10;
    } else {
      v->post = 1 + rng() % 10;
    }
  } else if constexpr (net::IsOptional<T>::value) {
    if (rng() % 2 == 0) {
      v->reset();
    } else {
      v->emplace();
      Fill(rng, name, &**v);
    }
  } else if constexpr (net::IsVector<T>::value) {
    v->resize(rng() % 4);
    for (auto& e : *v) Fill(rng, name, &e);
  } else {
    const auto& names = net::WireFieldNames<T>();
    size_t i = 0;
    std::apply([&](auto&... f) { (Fill(rng, names[i++], &f), ...); }, v->WireTie());
  }
}

// The query-string form of a request's JSON object: scalars as text, lists joined by commas.
std::string QueryOf(const net::JsonValue& object) {
  std::string q;
  for (const auto& [name, v] : object.members) {
    std::string text;
    if (v.kind == net::JsonValue::Kind::kNull) continue;
    if (v.kind == net::JsonValue::Kind::kArray) {
      if (v.items.empty()) continue;  // an empty list is the default
      for (const auto& item : v.items) text += (text.empty() ? "" : ",") + item.text;
    } else if (v.kind == net::JsonValue::Kind::kBool) {
      text = v.boolean ? "true" : "false";
    } else {
      text = v.text;
    }
    for (char& c : text) {
      if (c == ':') c = '\x01';  // escaped below, to exercise %-decoding
    }
    std::string escaped;
    for (char c : text) escaped += c == '\x01' ? std::string("%3A") : std::string(1, c);
    q += (q.empty() ? "?" : "&") + name + "=" + escaped;
  }
  return q;
}

// Commands whose answers depend on more than the commands before them (wall clocks, uptime,
// durations) or that change the node's role.
const std::set<std::string_view> kNotCompared = {"info", "snapshot", "promote", "replica_of",
                                                 "ack",  "slowlog",  "cursors"};

TEST_CASE("json api: random commands answer over HTTP what the binary protocol answers") {
  ManualClock clock_a, clock_b;
  HttpNode a(&clock_a);
  testing::TestServer b({}, "", WithClock(&clock_b));
  auto client = b.Connect();
  std::mt19937_64 rng(2026);
  std::vector<std::function<void()>> steps;
  std::map<std::string, int> served;
  int get_used = 0;
  net::ForEachCommand([&]<typename Row>() {
    if constexpr (Row::kDirection == net::Direction::kRequest) {
      using Req = typename Row::Body;
      const std::string name(net::OpcodeName(Row::kOpcode));
      if (net::ConnectionBound(Row::kOpcode) || kNotCompared.count(name) != 0) return;
      // Writes come more often than reads, so the reads have something to show.
      const int weight = net::ReadsOnly(Row::kOpcode) ? 1 : 3;
      for (int w = 0; w < weight; ++w) {
        steps.push_back([&, name] {
          Req req;
          Fill(rng, "", &req);
          const std::string json = net::ToJson(req);
          testing::HttpGot got;
          if (net::ReadsOnly(Row::kOpcode) && rng() % 2 == 0) {
            ++get_used;
            got =
                HttpCall(a.port.port(), "GET", "/v1/" + name + QueryOf(*net::ParseJson(json)), "");
          } else {
            got = HttpCall(a.port.port(), "POST", "/v1/" + name, json);
          }
          auto reply = client->Call(req);
          const std::string want =
              (reply.ok() ? net::ReplyJson(req, *reply) : ErrorJson(reply.status())) + "\n";
          const unsigned want_status = reply.ok() ? 200 : HttpStatusOf(reply.status().code());
          CHECK_MESSAGE(got.body == want, name << " " << json);
          CHECK_MESSAGE(got.status == static_cast<int>(want_status), name << " " << json);
          ++served[name];
        });
      }
    }
  });
  for (int i = 0; i < 1500; ++i) steps[rng() % steps.size()]();
  CHECK(served.size() >= 30);  // nearly every command of the table was compared
  CHECK(get_used > 50);
  CHECK(served.count("follow") == 1);
  CHECK(served.count("fans") == 1);
}

TEST_CASE("json api: GET and POST, names with '-', bad bodies, unknown and bound commands") {
  ManualClock clock;
  HttpNode n(&clock);
  const uint16_t port = n.port.port();
  auto r = HttpCall(port, "POST", "/v1/follow", R"({"follower":1,"followee":2})");
  CHECK(r.status == 200);
  CHECK(r.body == "{\"created\":true,\"relation\":\"following\",\"followed_at\":1700000000000}\n");
  CHECK(r.head.find("application/json") != std::string::npos);
  r = HttpCall(port, "GET", "/v1/known-followers?viewer=2&target=2", "");
  CHECK(r.status == 200);
  r = HttpCall(port, "GET", "/v1/fans?user=2&limit=1", "");
  CHECK(r.body ==
        "{\"entries\":[{\"user\":1,\"ts\":1700000000000,\"viewer_relation\":\"none\","
        "\"mutual\":false}],\"next\":null}\n");

  r = HttpCall(port, "GET", "/v1/follow?follower=1&followee=3", "");
  CHECK(r.status == 405);
  CHECK(r.head.find("Allow: POST") != std::string::npos);
  CHECK(r.body.find("follow changes state: POST it") != std::string::npos);

  r = HttpCall(port, "POST", "/v1/follow", R"({"follower":1,"followee":)");
  CHECK(r.status == 400);
  CHECK(r.body ==
        "{\"error\":\"invalid_argument\",\"message\":\"JSON: at byte 25: expected a "
        "value, found the end\"}\n");
  r = HttpCall(port, "POST", "/v1/follow", R"({"follower":1,"folowee":2})");
  CHECK(r.status == 400);
  CHECK(r.body.find("unknown member \\\"folowee\\\"") != std::string::npos);
  r = HttpCall(port, "POST", "/v1/follow", R"({"follower":1,"followee":1})");
  CHECK(r.status == 400);
  CHECK(r.body.find("\"error\":\"self_follow\"") != std::string::npos);
  r = HttpCall(port, "POST", "/v1/approve", R"({"user":1,"other":9})");  // no such request
  CHECK(r.status == 404);
  CHECK(r.body.find("\"error\":\"not_found\"") != std::string::npos);
  r = HttpCall(port, "POST", "/v1/follow", "[1,2]");
  CHECK(r.status == 400);
  r = HttpCall(port, "POST", "/v1/ping", "");
  CHECK(r.body == "{\"pong\":true}\n");
  r = HttpCall(port, "POST", "/v1/follow?x=1", "{}");
  CHECK(r.status == 400);
  r = HttpCall(port, "GET", "/v1/fans?user=2&user=3", "");
  CHECK(r.body.find("given twice") != std::string::npos);
  r = HttpCall(port, "GET", "/v1/fans?user=%zz", "");
  CHECK(r.status == 400);

  r = HttpCall(port, "POST", "/v1/nope", "{}");
  CHECK(r.status == 404);
  CHECK(r.body.find("known_followers") != std::string::npos);  // the list of commands
  for (const char* bound : {"hello", "subscribe", "fetch_snapshot", "replicate", "replica_ack"}) {
    r = HttpCall(port, "POST", std::string("/v1/") + bound, "{}");
    CHECK_MESSAGE(r.status == 400, bound);
    CHECK(r.body.find("belongs to a binary connection") != std::string::npos);
  }
  r = HttpCall(port, "DELETE", "/v1/follow", "");
  CHECK(r.status == 405);
  r = HttpCall(port, "POST", "/v1/shard_map", "");
  CHECK(r.status == 501);                                              // not a cluster's shard
  CHECK(JsonApi::Commands().size() + 5 + 4 == net::kCommands.size());  // 5 bound, 4 pushes
}

TEST_CASE("json api: with a token, every call needs it as a Bearer header") {
  ManualClock clock;
  net::ServerOptions options;
  options.auth_token = "s3cret";
  HttpNode n(&clock, options);
  const uint16_t port = n.port.port();
  auto r = HttpCall(port, "POST", "/v1/counts", R"({"user":1})");
  CHECK(r.status == 401);
  CHECK(r.body.find("Authorization: Bearer TOKEN") != std::string::npos);
  r = HttpCall(port, "POST", "/v1/counts", R"({"user":1})", "Authorization: Bearer wrong\r\n");
  CHECK(r.status == 401);
  CHECK(r.body.find("the token is not valid") != std::string::npos);
  r = HttpCall(port, "POST", "/v1/counts", R"({"user":1})", "Authorization: Basic s3cret\r\n");
  CHECK(r.status == 401);
  r = HttpCall(port, "POST", "/v1/counts", R"({"user":1})", "Authorization: Bearer s3cret\r\n");
  CHECK(r.status == 200);
  CHECK(r.body == "{\"following\":0,\"fans\":0,\"friends\":0}\n");
  CHECK(testing::HttpGet(port, "/healthz").status == 200);  // the operations paths stay open
}

net::ServerOptions WithClients(const std::string& clients_file) {
  net::ServerOptions options;
  options.clients_file = clients_file;
  return options;
}

// HTTPS on the test PKI's server certificate; `ask_client_certs`: with its CA, as --tls-ca
// (a client certificate asked for, not required).
net::TlsServerOptions HttpsOn(const testing::TestPki& pki, bool ask_client_certs) {
  net::TlsServerOptions tls;
  tls.cert_file = pki.server.cert;
  tls.key_file = pki.server.key;
  if (ask_client_certs) tls.ca_file = pki.ca;
  return tls;
}

TEST_CASE("json api: over HTTPS a client lacking a permission gets 403, one holding it 200") {
  testing::TestDir dir;
  const testing::TestPki pki = testing::MakeTestPki(dir.path() + "/pki");
  const std::string clients = dir.path() + "/clients";
  std::ofstream(clients) << "reader read " << net::TokenCredential("r-token") << "\n"
                         << "writer read,write " << net::TokenCredential("w-token") << "\n";
  ManualClock clock;
  HttpNode n(&clock, WithClients(clients), HttpsOn(pki, /*ask_client_certs=*/false));
  net::TlsClientOptions trusting;
  trusting.enabled = true;
  trusting.ca_file = pki.ca;
  auto c = testing::HttpsConnection::Open(n.port.port(), trusting);
  REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  const std::string follow = R"({"follower":1,"followee":2})";
  // The reader may read, not write.
  auto r = (*c)->Call("POST", "/v1/follow", follow, "Bearer r-token");
  CHECK(r.status == 403);
  CHECK(r.body.find("\"error\":\"permission_denied\"") != std::string::npos);
  CHECK(r.body.find("write") != std::string::npos);  // the missing permission is named
  r = (*c)->Call("GET", "/v1/counts?user=1", "", "Bearer r-token");
  CHECK(r.status == 200);
  CHECK(r.body == "{\"following\":0,\"fans\":0,\"friends\":0}\n");
  // The writer may; the reader then sees the write.
  r = (*c)->Call("POST", "/v1/follow", follow, "Bearer w-token");
  CHECK(r.status == 200);
  r = (*c)->Call("GET", "/v1/counts?user=1", "", "Bearer r-token");
  CHECK(r.status == 200);
  CHECK(r.body == "{\"following\":1,\"fans\":0,\"friends\":0}\n");
  CHECK((*c)->Call("POST", "/v1/follow", follow, "Bearer nobody").status == 401);
  // The same port refuses plain HTTP.
  CHECK(HttpCall(n.port.port(), "POST", "/v1/counts", R"({"user":1})",
                 "Authorization: Bearer r-token\r\n").status == 400);
}

TEST_CASE("json api: over mutual TLS a client certificate names the client; a token wins") {
  testing::TestDir dir;
  const testing::TestPki pki = testing::MakeTestPki(dir.path() + "/pki");
  const testing::CertFiles reader = testing::IssueClientCert(pki, "reader");
  const testing::CertFiles stranger = testing::IssueClientCert(pki, "stranger");
  const std::string clients = dir.path() + "/clients";
  std::ofstream(clients) << "reader read cert\n"
                         << "writer read,write " << net::TokenCredential("w-token") << "\n";
  ManualClock clock;
  HttpNode n(&clock, WithClients(clients), HttpsOn(pki, /*ask_client_certs=*/true));
  net::TlsClientOptions as_reader;
  as_reader.enabled = true;
  as_reader.ca_file = pki.ca;
  as_reader.cert_file = reader.cert;
  as_reader.key_file = reader.key;
  auto c = testing::HttpsConnection::Open(n.port.port(), as_reader);
  REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  const std::string follow = R"({"follower":1,"followee":2})";
  // The certificate alone: the reader reads and may not write.
  CHECK((*c)->Call("GET", "/v1/counts?user=1").status == 200);
  auto r = (*c)->Call("POST", "/v1/follow", follow);
  CHECK(r.status == 403);
  INFO(r.body);
  CHECK(r.body.find(R"(\"reader\")") != std::string::npos);
  // A token sent over the same connection decides instead.
  CHECK((*c)->Call("POST", "/v1/follow", follow, "Bearer w-token").status == 200);
  CHECK((*c)->Call("POST", "/v1/follow", follow, "Bearer wrong").status == 401);
  // A verified certificate whose name is no client, and no certificate at all: 401, and why.
  net::TlsClientOptions as_stranger = as_reader;
  as_stranger.cert_file = stranger.cert;
  as_stranger.key_file = stranger.key;
  auto s = testing::HttpsConnection::Open(n.port.port(), as_stranger);
  REQUIRE(s.ok());
  r = (*s)->Call("GET", "/v1/counts?user=1");
  CHECK(r.status == 401);
  INFO(r.body);
  CHECK(r.body.find(R"(\"stranger\" is no client)") != std::string::npos);
  net::TlsClientOptions anonymous = as_reader;
  anonymous.cert_file.clear();
  anonymous.key_file.clear();
  auto a = testing::HttpsConnection::Open(n.port.port(), anonymous);
  REQUIRE(a.ok());
  r = (*a)->Call("GET", "/v1/counts?user=1");
  CHECK(r.status == 401);
  CHECK(r.body.find("Bearer TOKEN") != std::string::npos);
}

TEST_CASE("json api: a write is answered once durable, and counted in /metrics") {
  testing::TestDir dir;
  DbOptions o = testing::TestServer::NoRateLimit();
  o.durability = DurabilityMode::kAlways;
  testing::TestServer server({}, dir.path(), o);
  Replication replication;
  ObservePortOptions po;
  po.http.port = 0;
  ObservePort port(po);
  REQUIRE(port.Start().ok());
  port.Attach(server.db.get(), server.service.get(), server.server.get(), &replication);
  for (uint64_t u = 2; u < 12; ++u) {
    auto r = HttpCall(port.port(), "POST", "/v1/follow",
                      "{\"follower\":1,\"followee\":" + std::to_string(u) + "}");
    REQUIRE(r.status == 200);
    // Acknowledged: the WAL holds it (the durable LSN reached it).
    CHECK(server.db->durable_lsn() >= u - 1);
  }
  const auto m = testing::HttpGet(port.port(), "/metrics").body;
  CHECK(m.find("relgraph_commands_total{command=\"follow\"} 10") != std::string::npos);
  port.Stop();
}

}  // namespace
}  // namespace relgraph

namespace relgraph {
namespace {

TEST_CASE("json api: SLOWLOG over HTTP reads the server's slow log, HTTP calls included") {
  ManualClock clock;
  net::ServerOptions options;
  options.slowlog_us = 0;  // every command
  HttpNode n(&clock, options);
  auto client = n.server.Connect();
  REQUIRE(client->Follow(1, 2).ok());
  auto r = HttpCall(n.port.port(), "POST", "/v1/follow", R"({"follower":3,"followee":4})");
  REQUIRE(r.status == 200);
  r = HttpCall(n.port.port(), "POST", "/v1/slowlog", R"({"count":2})");  // it may reset: POST
  REQUIRE(r.status == 200);
  // Newest first: the HTTP follow, then the binary one.
  CHECK(r.body.find("\"threshold_us\":0") != std::string::npos);
  const size_t http_entry = r.body.find("\"command\":\"follow\",\"args\":\"3 4 -\",\"client\":\"http\"");
  const size_t tcp_entry = r.body.find("\"command\":\"follow\",\"args\":\"1 2 -\",\"client\":\"127.0.0.1:");
  CHECK(http_entry != std::string::npos);
  CHECK(tcp_entry != std::string::npos);
  CHECK(http_entry < tcp_entry);
  r = HttpCall(n.port.port(), "POST", "/v1/slowlog", R"({"reset":true})");
  REQUIRE(r.status == 200);
  r = HttpCall(n.port.port(), "POST", "/v1/slowlog", "");
  CHECK(r.body.find("\"command\":\"follow\"") == std::string::npos);
}

}  // namespace
}  // namespace relgraph
