#include "net/roles/http/observe_port.h"

#include "engine/graph/graph.h"
#include "net/http/prometheus_text.h"
#include "net/roles/http/json_api.h"
#include "net/roles/http/metrics_page.h"
#include "net/roles/http/readiness.h"
#include "relgraph_build.h"
#include "relgraph_version.h"

namespace relgraph {
namespace {

uint64_t WallMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

ObservePort::ObservePort(const ObservePortOptions& options)
    : options_(options), http_(options.http) {
  http_.Route("/healthz", [](const net::HttpRequest&) {
    return net::HttpResponse{200, "text/plain; charset=utf-8", "ok\n"};
  });
  http_.Route("/readyz", [this](const net::HttpRequest&) { return Ready(); });
  http_.Route("/metrics", [this](const net::HttpRequest&) { return Metrics(); });
  http_.RoutePrefix(std::string(JsonApi::kPrefix),
                    [this](const net::HttpRequest& r, net::HttpRespond respond) {
                      Api(r, std::move(respond));
                    });
}

void ObservePort::Api(const net::HttpRequest& request, net::HttpRespond respond) {
  std::shared_lock lock(mu_);
  if (server_ == nullptr) {
    return respond(net::HttpResponse{
        503, "application/json",
        ErrorJson(Status(Code::kUnavailable, "not serving yet (recovering) or stopping")) +
            "\n"});
  }
  JsonApi::Serve(server_, request, std::move(respond));
}

Status ObservePort::Start() { return http_.Start(); }

void ObservePort::Stop() {
  http_.Stop();
  Detach();
}

void ObservePort::Attach(Db* db, CommandService* service, net::Server* server,
                         Replication* replication) {
  std::unique_lock lock(mu_);
  db_ = db;
  service_ = service;
  server_ = server;
  replication_ = replication;
}

void ObservePort::Detach() {
  std::unique_lock lock(mu_);
  db_ = nullptr;
  service_ = nullptr;
  server_ = nullptr;
  replication_ = nullptr;
}

net::InfoReply ObservePort::InfoLocked() {
  const net::ServerStats stats = server_->stats();
  CommandService::Context context;
  context.stats = &stats;
  auto info = service_->Info(net::InfoRequest{}, context);
  return info.ok() ? *info : net::InfoReply{};
}

net::HttpResponse ObservePort::Ready() {
  ReadinessInputs in;
  in.max_lag_ms = options_.ready_max_lag_ms;
  {
    std::shared_lock lock(mu_);
    if (service_ != nullptr) {
      in.serving = true;
      in.info = InfoLocked().fields;
      const Replication::Link link = replication_->link();
      in.link_state = link.state;
      in.link_message = link.message;
    }
  }
  const Readiness r = JudgeReadiness(in);
  return net::HttpResponse{r.ready ? 200u : 503u, "application/json", r.json};
}

net::HttpResponse ObservePort::Metrics() {
  MetricsInputs in;
  in.version = kVersion;
  in.build = kBuildId;
  in.now_ms = WallMs();
  net::CommandMetrics commands;
  {
    std::shared_lock lock(mu_);
    if (service_ != nullptr) {
      in.info = InfoLocked().fields;
      commands = server_->command_metrics();
      in.commands = &commands;
      in.storage = db_->storage_stats();
      in.graph_memory = db_->Read([](const Graph& g) { return g.Memory(); });
      in.cursors = db_->Cursors();
    }
  }
  return net::HttpResponse{200, net::PrometheusText::kContentType, MetricsPage(in)};
}

}  // namespace relgraph
