// One Session per connection: read a request (with a deadline), answer it through the
// routes, write, and read the next while the client keeps the connection alive. Sessions are
// owned by their pending operations (shared_from_this), so Stop only has to close the
// listener and stop the io_context: destroying it destroys every pending operation, and with
// them the sessions and their sockets.
#include "net/http/http_server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>

namespace relgraph::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr size_t kMaxBodyBytes = 64 << 10;
constexpr uint32_t kMaxHeaderBytes = 16 << 10;

}  // namespace

struct HttpServer::Impl {
  explicit Impl(const HttpServer* s) : server(s) {}
  const HttpServer* const server;
  std::atomic<uint32_t> connections{0};  // before ioc: sessions die with it and count down
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  bool stopped = false;
};

namespace {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const HttpServer* server, std::atomic<uint32_t>* connections,
          std::chrono::milliseconds timeout)
      : stream_(std::move(socket)), server_(server), connections_(connections),
        timeout_(timeout) {}
  ~Session() { connections_->fetch_sub(1, std::memory_order_relaxed); }

  void Start() { DoRead(); }

 private:
  void DoRead() {
    parser_.emplace();
    parser_->body_limit(kMaxBodyBytes);
    parser_->header_limit(kMaxHeaderBytes);
    stream_.expires_after(timeout_);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       self->OnRead(ec);
                     });
  }

  void OnRead(beast::error_code ec) {
    if (ec == http::error::body_limit || ec == http::error::header_limit) {
      return Reply(HttpResponse{413, "text/plain; charset=utf-8", "request too large\n"}, false,
                   11, false);
    }
    if (ec) return Close();  // the peer left, timed out or sent what is not HTTP
    const auto& req = parser_->get();
    HttpRequest request;
    request.method = std::string(req.method_string());
    const std::string_view target(req.target().data(), req.target().size());
    const size_t q = target.find('?');
    request.path = std::string(target.substr(0, q));
    if (q != std::string_view::npos) request.query = std::string(target.substr(q + 1));
    Reply(server_->Answer(request), req.keep_alive(), req.version(),
          req.method() == http::verb::head);
  }

  void Reply(HttpResponse answer, bool keep_alive, unsigned version, bool head) {
    res_ = {};
    res_.version(version);
    res_.result(answer.status);
    res_.set(http::field::server, "relgraphd");
    res_.set(http::field::content_type, answer.content_type);
    res_.set(http::field::cache_control, "no-store");
    if (answer.status == 405) res_.set(http::field::allow, "GET, HEAD");
    res_.keep_alive(keep_alive);
    const size_t length = answer.body.size();
    if (!head) res_.body() = std::move(answer.body);
    res_.content_length(length);
    stream_.expires_after(timeout_);
    http::async_write(stream_, res_,
                      [self = shared_from_this(), keep_alive](beast::error_code ec, size_t) {
                        if (ec || !keep_alive) return self->Close();
                        self->DoRead();
                      });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
  const HttpServer* const server_;
  std::atomic<uint32_t>* const connections_;
  const std::chrono::milliseconds timeout_;
};

void DoAccept(HttpServer::Impl* impl, const HttpServerOptions* options);

}  // namespace

HttpServer::HttpServer(const HttpServerOptions& options) : options_(options) {}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Route(std::string path, HttpHandler handler) {
  routes_[std::move(path)] = std::move(handler);
}

HttpResponse HttpServer::Answer(const HttpRequest& request) const {
  const auto it = routes_.find(request.path);
  if (it == routes_.end()) {
    std::string known;
    for (const auto& [path, handler] : routes_) known += (known.empty() ? "" : ", ") + path;
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
  impl_ = std::make_unique<Impl>(this);
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
  DoAccept(impl_.get(), &options_);
  for (uint32_t i = 0; i < options_.threads; ++i) {
    threads_.emplace_back([impl = impl_.get()] { impl->ioc.run(); });
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
  impl_.reset();  // destroys the pending operations, and with them the sessions
}

namespace {

void DoAccept(HttpServer::Impl* impl, const HttpServerOptions* options) {
  impl->acceptor.async_accept(
      asio::make_strand(impl->ioc), [impl, options](beast::error_code ec, tcp::socket socket) {
        if (ec == asio::error::operation_aborted || !impl->acceptor.is_open()) return;
        if (!ec) {
          if (impl->connections.fetch_add(1, std::memory_order_relaxed) >=
              options->max_connections) {
            impl->connections.fetch_sub(1, std::memory_order_relaxed);
            socket.close(ec);  // over the bound: a monitoring port needs few
          } else {
            std::make_shared<Session>(std::move(socket), impl->server, &impl->connections,
                                      options->timeout)
                ->Start();
          }
        }
        DoAccept(impl, options);
      });
}

}  // namespace
}  // namespace relgraph::net
