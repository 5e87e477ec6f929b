// HttpServer: a small HTTP/1.1 server for the operations endpoints (docs/http.md).
//
// Why this design: monitoring traffic (a scrape every few seconds, a load balancer's health
// check) must never slow the binary protocol's clients, so it runs on its own io_context and
// its own thread(s), with a bound on connections and a timeout on every read and write. Each
// path has a handler, a function run on one of those threads that returns the whole response;
// handlers are expected to take milliseconds at most (they read counters, they do not wait).
// A prefix route (RoutePrefix) is asynchronous: its handler is handed the request and a
// function to answer with, from any thread, once; the connection reads nothing more until it
// is called (HTTP/1.1 answers in order), and the thread is free meanwhile (a write waiting for
// an fsync holds no thread). Keep-alive is honoured; exact routes serve GET and HEAD, prefix
// routes GET, HEAD and POST (others: 405); bodies are refused past 64 KiB (413), unknown paths
// get 404.
//
// With TLS options (a certificate and its key) the port speaks HTTPS only, TLS 1.2 and newer,
// with client certificates asked for (a CA file) or required as on the binary port; a client
// that speaks plain HTTP gets a plain 400 and is closed. ReloadTls swaps the certificate for the
// connections accepted from then on; open ones keep the session they have.
//
// Thread-safety: Route and RoutePrefix before Start; Start, Stop and the destructor from one
// thread; port() from any, ReloadTls from any but not during Start or Stop. Handlers run on the server's threads, several at once when
// threads > 1.
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

#include "net/tls/tls_options.h"
#include "storage/status.h"

namespace relgraph::net {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 7780;  // 0: an ephemeral port (HttpServer::port() tells which)
  uint32_t threads = 1;
  uint32_t max_connections = 256;               // more are closed at once
  std::chrono::milliseconds timeout{10000};     // per read of a request, per write of a reply
  TlsServerOptions tls;                         // a certificate: HTTPS only (docs/http.md)
};

struct HttpRequest {
  std::string method;         // "GET", "HEAD" or (prefix routes) "POST"
  std::string path;           // the target without its query
  std::string query;          // what followed '?', raw ("" when none)
  std::string body;           // a POST's body (at most 64 KiB)
  std::string authorization;  // the Authorization header ("" when none)
  // Over HTTPS with --tls-ca: the common name of the client's certificate, verified against
  // those CAs ("" when the client sent none, or over plain HTTP).
  std::string client_cert_name;
};

struct HttpResponse {
  unsigned status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::string allow = "GET, HEAD";  // a 405's Allow header
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;
// Answers a request: call it exactly once, from any thread.
using HttpRespond = std::function<void(HttpResponse)>;
using AsyncHttpHandler = std::function<void(const HttpRequest&, HttpRespond)>;

class HttpServer {
 public:
  explicit HttpServer(const HttpServerOptions& options);
  ~HttpServer();  // Stop()

  // Serves `path` (exact match, e.g. "/metrics") with `handler`. REQUIRES: before Start.
  void Route(std::string path, HttpHandler handler);
  // Serves every path that starts with `prefix` (e.g. "/v1/") and no exact route takes with
  // `handler`, asynchronously. REQUIRES: before Start.
  void RoutePrefix(std::string prefix, AsyncHttpHandler handler);
  // Binds, listens and starts the threads. Errors: kInvalidArgument (bad address or options,
  // a TLS file that cannot be used: the message names it), kIOError (the address cannot be
  // bound: the message names it and why).
  Status Start();
  // Reads the TLS files of `tls` again and serves the connections accepted from now on with
  // them (HTTPS; plain HTTP when `tls` names no certificate); open connections keep theirs. On
  // an error (kInvalidArgument naming the file) nothing changes. A server not started (or
  // stopped) only checks the files. REQUIRES: not concurrently with Start or Stop.
  Status ReloadTls(const TlsServerOptions& tls);
  uint16_t port() const { return port_.load(); }  // the bound port, after Start
  // Closes the listener and every connection, joins the threads. Idempotent.
  void Stop();

  // Answers a request (routing, 404, 405) through `respond`, without sockets: what the
  // sessions and the tests call.
  void Answer(const HttpRequest& request, HttpRespond respond) const;
  // The same, for an exact route or an error: the response at once.
  HttpResponse Answer(const HttpRequest& request) const;

  struct Impl;  // the io_context, the listener and the connection count (http_server.cpp)

 private:
  const HttpServerOptions options_;
  std::map<std::string, HttpHandler> routes_;
  std::vector<std::pair<std::string, AsyncHttpHandler>> prefix_routes_;
  std::shared_ptr<Impl> impl_;
  std::vector<std::thread> threads_;
  std::atomic<uint16_t> port_{0};
};

}  // namespace relgraph::net
