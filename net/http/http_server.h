// HttpServer: a small HTTP/1.1 server for the operations endpoints (docs/http.md).
//
// Why this design: monitoring traffic (a scrape every few seconds, a load balancer's health
// check) must never slow the binary protocol's clients, so it runs on its own io_context and
// its own thread(s), with a bound on connections and a timeout on every read and write. Each
// path has a handler, a function run on one of those threads that returns the whole response;
// handlers are expected to take milliseconds at most (they read counters, they do not wait).
// Keep-alive is honoured; only GET and HEAD are served (others: 405), bodies are refused past
// 64 KiB (413), unknown paths get 404.
//
// Thread-safety: Route before Start; Start, Stop and the destructor from one thread; port()
// from any. Handlers run on the server's threads, several at once when threads > 1.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "storage/status.h"

namespace relgraph::net {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 7780;  // 0: an ephemeral port (HttpServer::port() tells which)
  uint32_t threads = 1;
  uint32_t max_connections = 64;                // more are closed at once
  std::chrono::milliseconds timeout{10000};     // per read of a request, per write of a reply
};

struct HttpRequest {
  std::string method;  // "GET" or "HEAD"
  std::string path;    // the target without its query
  std::string query;   // what followed '?', raw ("" when none)
};

struct HttpResponse {
  unsigned status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

class HttpServer {
 public:
  explicit HttpServer(const HttpServerOptions& options);
  ~HttpServer();  // Stop()

  // Serves `path` (exact match, e.g. "/metrics") with `handler`. REQUIRES: before Start.
  void Route(std::string path, HttpHandler handler);
  // Binds, listens and starts the threads. Errors: kInvalidArgument (bad address or options),
  // kIOError (the address cannot be bound: the message names it and why).
  Status Start();
  uint16_t port() const { return port_.load(); }  // the bound port, after Start
  // Closes the listener and every connection, joins the threads. Idempotent.
  void Stop();

  // The response a request gets (routing, 404, 405), without sockets: what the tests call.
  HttpResponse Answer(const HttpRequest& request) const;

  struct Impl;  // the io_context, the listener and the connection count (http_server.cpp)

 private:
  const HttpServerOptions options_;
  std::map<std::string, HttpHandler> routes_;
  std::unique_ptr<Impl> impl_;
  std::vector<std::thread> threads_;
  std::atomic<uint16_t> port_{0};
};

}  // namespace relgraph::net
