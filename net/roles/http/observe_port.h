// ObservePort: relgraphd's HTTP port (docs/http.md): /healthz, /readyz, /metrics and the JSON
// API (/v1/..., json_api.h) on net::HttpServer's own threads, never the binary protocol's io
// threads.
//
// Started before the data directory is opened, so that /healthz answers (alive) and /readyz
// says "recovering" during a long recovery; Attach hands it the serving node once the protocol
// port listens, Detach takes it back before those objects go away.
//
// Thread-safety: Start, Attach, Detach and Stop from one thread (relgraphd's main); the
// handlers run on the HTTP threads and read the attached node under a shared lock (Attach
// and Detach take it exclusively, so a node is not detached while a handler uses it).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "engine/db.h"
#include "net/http/http_server.h"
#include "net/roles/replication/replication.h"
#include "net/roles/service/command_service.h"
#include "net/server/server.h"

namespace relgraph {

struct ObservePortOptions {
  net::HttpServerOptions http;
  uint64_t ready_max_lag_ms = 10000;  // a replica further behind its primary is not ready
};

class ObservePort {
 public:
  explicit ObservePort(const ObservePortOptions& options);
  ~ObservePort() { Stop(); }

  Status Start();
  uint16_t port() const { return http_.port(); }
  // The HTTP port's certificate for new connections (net::HttpServer::ReloadTls): on an error
  // nothing changes. From any thread but not during Start or Stop (relgraphd's SIGHUP thread).
  Status ReloadTls(const net::TlsServerOptions& tls) { return http_.ReloadTls(tls); }
  // The node it reports on from now on. None is owned; each must stay alive until Detach.
  void Attach(Db* db, CommandService* service, net::Server* server, Replication* replication);
  void Detach();
  void Stop();

 private:
  void Api(const net::HttpRequest& request, net::HttpRespond respond);
  net::HttpResponse Ready();
  net::HttpResponse Metrics();
  net::InfoReply InfoLocked();  // REQUIRES: mu_ held, a node attached

  const ObservePortOptions options_;
  net::HttpServer http_;
  std::shared_mutex mu_;
  Db* db_ = nullptr;  // all four set by Attach, guarded by mu_
  CommandService* service_ = nullptr;
  net::Server* server_ = nullptr;
  Replication* replication_ = nullptr;
};

}  // namespace relgraph
