// The HTTP port of a node: /healthz, /readyz and /metrics against a real server and Db, and
// MetricsPage's and JudgeReadiness's rules on their own.
#include "net/roles/http/observe_port.h"

#include <doctest.h>

#include <set>

#include "net/roles/http/metrics_page.h"
#include "net/roles/http/readiness.h"
#include "tests/net/http/http_get.h"
#include "tests/net/http/https_get.h"
#include "tests/net/tls/test_certs.h"
#include "tests/net/server/server_test_util.h"
#include "tests/storage/test_dir.h"

namespace relgraph {
namespace {

ObservePortOptions AnyPort() {
  ObservePortOptions o;
  o.http.port = 0;
  return o;
}

// The value of the sample whose line starts with `series` + ' ', or -1.
double Sample(const std::string& page, const std::string& series) {
  const size_t at = page.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(page.substr(at + series.size() + 2));
}

TEST_CASE("observe port: alive and not ready while recovering, ready once attached") {
  ObservePort port(AnyPort());
  REQUIRE(port.Start().ok());
  CHECK(testing::HttpGet(port.port(), "/healthz").status == 200);
  auto ready = testing::HttpGet(port.port(), "/readyz");
  CHECK(ready.status == 503);
  CHECK(ready.body.find("\"ready\":false") != std::string::npos);
  CHECK(ready.body.find("recovering") != std::string::npos);

  testing::TestServer server;
  Replication replication;
  port.Attach(server.db.get(), server.service.get(), server.server.get(), &replication);
  ready = testing::HttpGet(port.port(), "/readyz");
  CHECK(ready.status == 200);
  CHECK(ready.body == "{\"ready\":true,\"role\":\"primary\",\"reasons\":[]}\n");
  port.Detach();
  CHECK(testing::HttpGet(port.port(), "/readyz").status == 503);
}

TEST_CASE("observe port: /metrics counts commands, errors by code, latency, users and bytes") {
  testing::TestServer server;
  Replication replication;
  ObservePort port(AnyPort());
  REQUIRE(port.Start().ok());
  port.Attach(server.db.get(), server.service.get(), server.server.get(), &replication);
  auto client = server.Connect();
  for (uint64_t u = 2; u <= 6; ++u) REQUIRE(client->Follow(1, u).ok());
  CHECK(client->Follow(1, 1).status().code() == Code::kSelfFollow);
  // A pipelined run of follows runs as one batch: each is counted.
  for (uint64_t u = 10; u < 20; ++u) client->Queue(net::FollowRequest{u, 1, std::nullopt});
  auto replies = client->Flush();
  REQUIRE(replies.ok());

  const auto got = testing::HttpGet(port.port(), "/metrics");
  REQUIRE(got.status == 200);
  CHECK(got.head.find("text/plain; version=0.0.4") != std::string::npos);
  const std::string& m = got.body;
  CHECK(Sample(m, "relgraph_commands_total{command=\"follow\"}") == 16);
  CHECK(Sample(m, "relgraph_command_errors_total{command=\"follow\",code=\"self_follow\"}") == 1);
  CHECK(Sample(m, "relgraph_command_duration_seconds_count{command=\"follow\"}") == 16);
  CHECK(Sample(m, "relgraph_command_duration_seconds_bucket{command=\"follow\",le=\"+Inf\"}") ==
        16);
  CHECK(Sample(m, "relgraph_commands_total{command=\"hello\"}") == 1);
  CHECK(Sample(m, "relgraph_users") == 16);
  CHECK(Sample(m, "relgraph_edges") == 15);
  CHECK(Sample(m, "relgraph_connections") == 1);
  CHECK(Sample(m, "relgraph_received_bytes_total") > 0);
  CHECK(Sample(m, "relgraph_sent_bytes_total") > 0);
  CHECK(Sample(m, "relgraph_memory_bytes{part=\"id_map\"}") > 0);
  CHECK(m.find("relgraph_build_info{version=\"") != std::string::npos);
  CHECK(m.find("# TYPE relgraph_wal_fsync_duration_seconds histogram") != std::string::npos);
}

TEST_CASE("observe port: /metrics over HTTPS, and a reload that changes the certificate") {
  testing::TestDir dir;
  const testing::TestPki pki = testing::MakeTestPki(dir.path());
  testing::TestServer server;
  Replication replication;
  ObservePortOptions o = AnyPort();
  o.http.tls.cert_file = pki.server.cert;
  o.http.tls.key_file = pki.server.key;
  ObservePort port(o);
  REQUIRE(port.Start().ok());
  port.Attach(server.db.get(), server.service.get(), server.server.get(), &replication);
  REQUIRE(server.Connect()->Follow(1, 2).ok());
  net::TlsClientOptions trusting;
  trusting.enabled = true;
  trusting.ca_file = pki.ca;
  auto c = testing::HttpsConnection::Open(port.port(), trusting);
  REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  auto got = (*c)->Get("/metrics");
  CHECK(got.status == 200);
  CHECK(Sample(got.body, "relgraph_edges") == 1);
  CHECK(testing::HttpGet(port.port(), "/metrics").status == 400);  // plain HTTP
  // A reload to a file that does not exist keeps the port as it was.
  net::TlsServerOptions next = o.http.tls;
  next.cert_file = dir.path() + "/missing.pem";
  CHECK(port.ReloadTls(next).code() == Code::kInvalidArgument);
  CHECK(testing::HttpsGet(port.port(), trusting, "/healthz").status == 200);
  // Another CA's certificate: new clients must trust it, the open connection stays.
  next.cert_file = pki.rogue_server.cert;
  next.key_file = pki.rogue_server.key;
  REQUIRE(port.ReloadTls(next).ok());
  CHECK(testing::HttpsGet(port.port(), trusting, "/healthz").status == 0);
  trusting.ca_file = pki.rogue_ca;
  CHECK(testing::HttpsGet(port.port(), trusting, "/healthz").status == 200);
  CHECK((*c)->Get("/metrics").status == 200);
  port.Stop();
}

TEST_CASE("observe port: the WAL's appends, fsyncs, segments and a cursor's lag") {
  testing::TestDir dir;
  DbOptions o = testing::TestServer::NoRateLimit();
  o.durability = DurabilityMode::kAlways;
  testing::TestServer server({}, dir.path(), o);
  Replication replication;
  ObservePort port(AnyPort());
  REQUIRE(port.Start().ok());
  port.Attach(server.db.get(), server.service.get(), server.server.get(), &replication);
  auto client = server.Connect();
  for (uint64_t u = 2; u <= 4; ++u) REQUIRE(client->Follow(1, u).ok());
  REQUIRE(server.db->AckCursor("mailer", 1).ok());
  REQUIRE(client->Follow(1, 5).ok());
  const std::string m = testing::HttpGet(port.port(), "/metrics").body;
  CHECK(Sample(m, "relgraph_wal_appends_total") == 5);  // 4 follows and the cursor's ack
  CHECK(Sample(m, "relgraph_wal_fsync_duration_seconds_count") >= 5);  // fsync=always
  CHECK(Sample(m, "relgraph_wal_segments") == 1);
  CHECK(Sample(m, "relgraph_cursor_lag_records{cursor=\"mailer\"}") == 4);  // LSNs 2..5
}

TEST_CASE("metrics page: every INFO field is exported or named as left out") {
  testing::TestServer server;
  net::ServerStats stats;
  CommandService::Context context;
  context.stats = &stats;
  auto info = server.service->Info(net::InfoRequest{}, context);
  REQUIRE(info.ok());
  std::set<std::string_view> known;
  for (const InfoMetric& m : InfoMetrics()) {
    known.insert(m.field);
    // A left-out field says why; an exported one follows the conventions.
    if (m.metric.empty()) {
      CHECK_MESSAGE(m.help.substr(0, 9) == "left out:", m.field);
    } else {
      CHECK_MESSAGE(m.metric.substr(0, 9) == "relgraph_", m.metric);
      CHECK_MESSAGE((m.type != "counter" || m.metric.ends_with("_total")), m.metric);
      CHECK_MESSAGE((m.scale == 1 || m.metric.ends_with("_seconds") ||
                     m.metric.ends_with("_seconds_total")),
                    m.metric);
    }
  }
  for (const auto& f : info->fields) CHECK_MESSAGE(known.contains(f.name), f.name);
}

std::vector<net::InfoField> Info(std::initializer_list<net::InfoField> fields) { return fields; }

TEST_CASE("readiness: a replica must stream and be within the lag bound") {
  ReadinessInputs in;
  in.serving = true;
  in.max_lag_ms = 500;
  in.info = Info({{"role", 1}, {"replica_lag_ms", 200}, {"replica_lag_records", 9}});
  in.link_state = "connecting";
  in.link_message = "connection refused";
  Readiness r = JudgeReadiness(in);
  CHECK_FALSE(r.ready);
  CHECK(r.json.find("not streaming from its primary (connecting: connection refused)") !=
        std::string::npos);
  in.link_state = "streaming";
  CHECK(JudgeReadiness(in).ready);
  in.info = Info({{"role", 1}, {"replica_lag_ms", 501}, {"replica_lag_records", 9}});
  r = JudgeReadiness(in);
  CHECK_FALSE(r.ready);
  CHECK(r.json.find("501 ms behind its primary, over --ready-max-lag-ms=500 (9 records)") !=
        std::string::npos);
}

TEST_CASE("readiness: a primary whose WAL refuses writes, a shard not joined: not ready") {
  ReadinessInputs in;
  in.serving = true;
  in.info = Info({{"role", 0}, {"writes_refused", 1}, {"writes_refused_reason", 1}});
  Readiness r = JudgeReadiness(in);
  CHECK_FALSE(r.ready);
  CHECK(r.json ==
        "{\"ready\":false,\"role\":\"primary\",\"reasons\":[\"primary: the WAL cannot be written "
        "(the disk is full): writes are refused\"]}\n");
  in.info = Info({{"role", 0}, {"cluster_joined", 0}});
  CHECK(JudgeReadiness(in).json.find("shard: not joined") != std::string::npos);
  in.info = Info({{"role", 0}, {"cluster_joined", 1}});
  CHECK(JudgeReadiness(in).ready);
}

}  // namespace
}  // namespace relgraph
