// The listener and the routes; a connection is a Session (http_session.h), over plain TCP or,
// while the server has a TLS context, over TLS. The context is read once per accepted
// connection under a mutex, so a reload (ReloadTls) reaches new connections only.
#include "net/http/http_server.h"

#include <openssl/ssl.h>

#include "net/http/http_session.h"

namespace relgraph::net {
namespace {

using http_detail::HttpsContext;
using http_detail::PlainStream;
using http_detail::Session;
using http_detail::TlsStream;
namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

// The TLS context of `tls` for Asio's streams; null when `tls` names no certificate.
Result<std::shared_ptr<HttpsContext>> MakeHttpsContext(const TlsServerOptions& tls) {
  if (!tls.enabled()) {
    if (!tls.key_file.empty() || !tls.ca_file.empty()) {
      return Status::InvalidArgument("HTTPS: a TLS key or CA file without a certificate file");
    }
    return std::shared_ptr<HttpsContext>();
  }
  auto built = TlsContext::ForServer(tls);
  if (!built.ok()) return built.status();
  // asio::ssl::context takes ownership of the SSL_CTX it is given (it frees it): give it a
  // reference of its own, so the TlsContext's stays valid as well.
  SSL_CTX* native = (*built)->native();
  SSL_CTX_up_ref(native);
  return std::make_shared<HttpsContext>(HttpsContext{std::move(*built), asio::ssl::context(native)});
}

void DoAccept(const std::shared_ptr<HttpServer::Impl>& impl, const HttpServerOptions* options);

}  // namespace

HttpServer::HttpServer(const HttpServerOptions& options) : options_(options) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Route(std::string path, HttpHandler handler) {
  routes_[std::move(path)] = std::move(handler);
}

void HttpServer::RoutePrefix(std::string prefix, AsyncHttpHandler handler) {
  prefix_routes_.emplace_back(std::move(prefix), std::move(handler));
}

void HttpServer::Answer(const HttpRequest& request, HttpRespond respond) const {
  if (routes_.count(request.path) == 0) {
    for (const auto& [prefix, handler] : prefix_routes_) {
      if (request.path.compare(0, prefix.size(), prefix) != 0) continue;
      if (request.method != "GET" && request.method != "HEAD" && request.method != "POST") {
        HttpResponse r{405, "text/plain; charset=utf-8",
                       "method " + request.method + " not allowed: GET, HEAD or POST\n"};
        r.allow = "GET, HEAD, POST";
        return respond(std::move(r));
      }
      return handler(request, std::move(respond));
    }
  }
  respond(Answer(request));
}

HttpResponse HttpServer::Answer(const HttpRequest& request) const {
  const auto it = routes_.find(request.path);
  if (it == routes_.end()) {
    std::string known;
    for (const auto& [path, handler] : routes_) known += (known.empty() ? "" : ", ") + path;
    for (const auto& [prefix, handler] : prefix_routes_) {
      known += (known.empty() ? "" : ", ") + prefix + "...";
    }
    return HttpResponse{404, "text/plain; charset=utf-8",
                        "no such path: " + request.path + " (served: " + known + ")\n"};
  }
  if (request.method != "GET" && request.method != "HEAD") {
    return HttpResponse{405, "text/plain; charset=utf-8",
                        "method " + request.method + " not allowed: GET or HEAD\n"};
  }
  return it->second(request);
}

Status HttpServer::Start() {
  if (impl_) return Status::InvalidArgument("the HTTP server was already started");
  if (options_.threads == 0) return Status::InvalidArgument("the HTTP port needs 1 thread or more");
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(options_.host, ec);
  if (ec) return Status::InvalidArgument("HTTP address: not an IP address: '" + options_.host + "'");
  auto tls = MakeHttpsContext(options_.tls);
  if (!tls.ok()) return tls.status();
  impl_ = std::make_shared<Impl>(this);
  impl_->tls = std::move(*tls);
  const tcp::endpoint endpoint(address, options_.port);
  const std::string where = options_.host + ":" + std::to_string(options_.port);
  auto& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    impl_.reset();
    return Status::IOError("cannot listen for HTTP on " + where + ": " + ec.message());
  }
  port_.store(acceptor.local_endpoint().port());
  DoAccept(impl_, &options_);
  for (uint32_t i = 0; i < options_.threads; ++i) {
    threads_.emplace_back([impl = impl_.get()] { impl->ioc.run(); });
  }
  return Status::OK();
}

Status HttpServer::ReloadTls(const TlsServerOptions& tls) {
  auto context = MakeHttpsContext(tls);
  if (!context.ok()) return context.status();
  if (impl_) {
    std::lock_guard lock(impl_->tls_mu);
    impl_->tls = std::move(*context);
  }
  return Status::OK();
}

void HttpServer::Stop() {
  if (!impl_) return;
  asio::post(impl_->ioc, [impl = impl_.get()] {
    boost::system::error_code ignored;
    impl->acceptor.close(ignored);
    impl->ioc.stop();
  });
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  // Destroys the pending operations, and with them the sessions, unless an asynchronous
  // answer still holds the Impl: then the last one to let go of it does.
  impl_.reset();
}

namespace {

std::shared_ptr<HttpsContext> CurrentTls(HttpServer::Impl* impl) {
  std::lock_guard lock(impl->tls_mu);
  return impl->tls;
}

void DoAccept(const std::shared_ptr<HttpServer::Impl>& shared, const HttpServerOptions* options) {
  HttpServer::Impl* impl = shared.get();
  impl->acceptor.async_accept(
      asio::make_strand(impl->ioc),
      [impl, weak = std::weak_ptr<HttpServer::Impl>(shared), options](beast::error_code ec,
                                                                      tcp::socket socket) {
        if (ec == asio::error::operation_aborted || !impl->acceptor.is_open()) return;
        if (!ec) {
          if (impl->connections.fetch_add(1, std::memory_order_relaxed) >=
              options->max_connections) {
            impl->connections.fetch_sub(1, std::memory_order_relaxed);
            socket.close(ec);  // over the bound: a monitoring port needs few
          } else if (std::shared_ptr<HttpsContext> tls = CurrentTls(impl)) {
            std::make_shared<Session<TlsStream>>(std::move(socket), std::move(tls),
                                                 impl->server, weak, &impl->connections,
                                                 options->timeout)
                ->Start();
          } else {
            std::make_shared<Session<PlainStream>>(std::move(socket), impl->server, weak,
                                                   &impl->connections, options->timeout)
                ->Start();
          }
        }
        if (auto alive = weak.lock()) DoAccept(alive, options);
      });
}

}  // namespace
}  // namespace relgraph::net
