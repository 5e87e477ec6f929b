// One HTTP connection of HttpServer (http_server.h), over plain TCP or TLS: read a request
// (with a deadline), answer it through the routes, write, and read the next while the client
// keeps the connection alive. Internal to net/http/.
//
// Why this design: one class template serves both streams, so the plain path is the code it
// always was (a beast::tcp_stream, nothing checked per request) and the TLS path differs only
// where TLS must: before the first request (a ClientHello is expected: anything else gets a
// plain 400 and the connection is closed; then the handshake) and at the end (close_notify).
// Sessions are owned by their pending operations (shared_from_this), so the server's Stop only
// has to close the listener and stop the io_context: destroying it destroys every pending
// operation, and with them the sessions and their sockets.
//
// Thread-safety: a session runs on its own strand; the answer of an asynchronous route may be
// given from any thread (it is posted to that strand).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <type_traits>

#include "net/http/http_server.h"
#include "net/tls/tls_channel.h"
#include "net/tls/tls_context.h"

namespace relgraph::net {

namespace http_detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

inline constexpr size_t kMaxBodyBytes = 64 << 10;
inline constexpr uint32_t kMaxHeaderBytes = 16 << 10;

// What a plain HTTP client at an HTTPS port reads before the connection closes.
inline const std::string& PlainAtHttps() {
  static const std::string kBody = "this port speaks HTTPS: connect with https:// (TLS 1.2+)\n";
  static const std::string kReply =
      "HTTP/1.1 400 Bad Request\r\nServer: relgraphd\r\n"
      "Content-Type: text/plain; charset=utf-8\r\nContent-Length: " +
      std::to_string(kBody.size()) + "\r\nConnection: close\r\n\r\n" + kBody;
  return kReply;
}

// The TLS a server's new connections get: the context of net/tls/ (what was checked and
// built from the files) and the Asio context on the same SSL_CTX, which Asio's streams need.
struct HttpsContext {
  std::shared_ptr<const TlsContext> tls;
  asio::ssl::context asio;  // holds its own reference to tls->native()
};

}  // namespace http_detail

// The server's shared state: the io_context, the listener, the connection count and the
// current TLS context.
struct HttpServer::Impl {
  explicit Impl(const HttpServer* s) : server(s) {}
  const HttpServer* const server;
  std::atomic<uint32_t> connections{0};  // before ioc: sessions die with it and count down
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor acceptor{ioc};
  // New connections' TLS (null: plain HTTP); swapped by ReloadTls.
  std::mutex tls_mu;
  std::shared_ptr<http_detail::HttpsContext> tls;
  // Sessions waiting for an asynchronous answer (no operation of theirs is pending to own
  // them). After ioc: they go first, while their sockets' io_context still exists.
  std::mutex awaiting_mu;
  std::set<std::shared_ptr<void>> awaiting;
};

namespace http_detail {

// The session whose request this thread is answering now, and where an answer given
// meanwhile goes (Session::OnRead).
inline thread_local const void* t_answering = nullptr;
inline thread_local std::optional<HttpResponse>* t_inline_answer = nullptr;

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

template <typename Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

 public:
  // A plain session.
  Session(tcp::socket socket, const HttpServer* server, std::weak_ptr<HttpServer::Impl> impl,
          std::atomic<uint32_t>* connections, std::chrono::milliseconds timeout) requires(!kTls)
      : stream_(std::move(socket)),
        server_(server),
        impl_(std::move(impl)),
        connections_(connections),
        timeout_(timeout) {}
  // A TLS session on `context` (kept alive as long as the session).
  Session(tcp::socket socket, std::shared_ptr<HttpsContext> context, const HttpServer* server,
          std::weak_ptr<HttpServer::Impl> impl, std::atomic<uint32_t>* connections,
          std::chrono::milliseconds timeout) requires(kTls)
      : context_(std::move(context)),
        stream_(std::move(socket), context_->asio),
        server_(server),
        impl_(std::move(impl)),
        connections_(connections),
        timeout_(timeout) {}
  ~Session() { connections_->fetch_sub(1, std::memory_order_relaxed); }

  void Start() {
    if constexpr (kTls) {
      Lowest().expires_after(timeout_);
      beast::async_detect_ssl(Lowest(), buffer_,
                              [self = this->shared_from_this()](beast::error_code ec, bool tls) {
                                self->OnDetect(ec, tls);
                              });
    } else {
      DoRead();
    }
  }

 private:
  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  // TLS only: the first bytes said whether this is a TLS client.
  void OnDetect(beast::error_code ec, bool tls) {
    if (ec) return;  // the peer left or timed out before saying anything: drop it
    if (!tls) {
      // A plain HTTP client: tell it in words it can read, then close.
      Lowest().expires_after(timeout_);
      return asio::async_write(Lowest(), asio::buffer(PlainAtHttps()),
                               [self = this->shared_from_this()](beast::error_code, size_t) {
                                 beast::error_code ignored;
                                 self->Lowest().socket().shutdown(tcp::socket::shutdown_send,
                                                                  ignored);
                               });
    }
    Lowest().expires_after(timeout_);
    stream_.async_handshake(asio::ssl::stream_base::server, buffer_.data(),
                            [self = this->shared_from_this()](beast::error_code e, size_t used) {
                              if (e) return;  // refused or cut: OpenSSL sent its alert
                              self->buffer_.consume(used);
                              // Once per connection, not per request: the session's peer.
                              self->client_cert_name_ =
                                  VerifiedPeerCommonName(self->stream_.native_handle());
                              self->DoRead();
                            });
  }

  void DoRead() {
    parser_.emplace();
    parser_->body_limit(kMaxBodyBytes);
    parser_->header_limit(kMaxHeaderBytes);
    Lowest().expires_after(timeout_);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

  void OnRead(beast::error_code ec) {
    if (ec == http::error::body_limit || ec == http::error::header_limit) {
      return Reply(HttpResponse{413, "text/plain; charset=utf-8", "request too large\n"}, false, 11,
                   false);
    }
    if (ec) return Close();  // the peer left, timed out or sent what is not HTTP
    auto& req = parser_->get();
    HttpRequest request;
    request.method = std::string(req.method_string());
    const std::string_view target(req.target().data(), req.target().size());
    const size_t q = target.find('?');
    request.path = std::string(target.substr(0, q));
    if (q != std::string_view::npos) request.query = std::string(target.substr(q + 1));
    request.body = std::move(req.body());
    if (auto it = req.find(http::field::authorization); it != req.end()) {
      request.authorization = std::string(it->value());
    }
    request.client_cert_name = client_cert_name_;
    const bool keep_alive = req.keep_alive();
    const unsigned version = req.version();
    const bool head = req.method() == http::verb::head;
    const std::shared_ptr<HttpServer::Impl> impl = impl_.lock();
    if (!impl) return;
    {
      std::lock_guard lock(impl->awaiting_mu);
      impl->awaiting.insert(this->shared_from_this());
    }
    // An answer given during Answer, on this thread (a read, a durable write), is written
    // here without a round through the io_context.
    std::optional<HttpResponse> inline_answer;
    t_answering = this;
    t_inline_answer = &inline_answer;
    server_->Answer(request, [weak_impl = impl_, weak_self = this->weak_from_this(), keep_alive,
                              version, head](HttpResponse answer) {
      // From any thread, once. The session's own strand writes it; once the server stopped
      // (the Impl or the session is gone), the answer has no one to go to.
      const std::shared_ptr<HttpServer::Impl> owner = weak_impl.lock();
      if (!owner) return;
      std::shared_ptr<Session> self = weak_self.lock();
      if (!self) return;
      if (t_answering == self.get()) {
        *t_inline_answer = std::move(answer);
        return;
      }
      asio::post(self->stream_.get_executor(),
                 [impl_weak = weak_impl, self, answer = std::move(answer), keep_alive, version,
                  head]() mutable {
                   if (auto held = impl_weak.lock()) {
                     std::lock_guard lock(held->awaiting_mu);
                     held->awaiting.erase(self);
                   }
                   self->Reply(std::move(answer), keep_alive, version, head);
                 });
    });
    t_answering = nullptr;
    t_inline_answer = nullptr;
    if (inline_answer) {
      {
        std::lock_guard lock(impl->awaiting_mu);
        impl->awaiting.erase(this->shared_from_this());
      }
      Reply(std::move(*inline_answer), keep_alive, version, head);
    }
  }

  void Reply(HttpResponse answer, bool keep_alive, unsigned version, bool head) {
    res_ = {};
    res_.version(version);
    res_.result(answer.status);
    res_.set(http::field::server, "relgraphd");
    res_.set(http::field::content_type, answer.content_type);
    res_.set(http::field::cache_control, "no-store");
    if (answer.status == 405) res_.set(http::field::allow, answer.allow);
    res_.keep_alive(keep_alive);
    const size_t length = answer.body.size();
    if (!head) res_.body() = std::move(answer.body);
    res_.content_length(length);
    Lowest().expires_after(timeout_);
    http::async_write(stream_, res_,
                      [self = this->shared_from_this(), keep_alive](beast::error_code ec, size_t) {
                        if (ec || !keep_alive) return self->Close();
                        self->DoRead();
                      });
  }

  void Close() {
    if constexpr (kTls) {
      // close_notify, then the socket closes with the session (the deadline bounds the wait
      // for the peer's).
      Lowest().expires_after(timeout_);
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {});
    } else {
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
  }

  std::shared_ptr<HttpsContext> context_;  // TLS only; before stream_, which refers to it
  Stream stream_;
  beast::flat_buffer buffer_;
  std::string client_cert_name_;  // HTTPS: the verified client CN, set after the handshake
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
  const HttpServer* const server_;
  const std::weak_ptr<HttpServer::Impl> impl_;
  std::atomic<uint32_t>* const connections_;
  const std::chrono::milliseconds timeout_;
};

}  // namespace http_detail
}  // namespace relgraph::net
