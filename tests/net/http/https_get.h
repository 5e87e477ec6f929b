// A blocking HTTPS client for the tests of the HTTP port: one connection (Beast's ssl_stream
// on net/tls/'s client context, checking that the server's certificate names "localhost"),
// then requests on it, kept alive, until it is destroyed.
#pragma once

#include <openssl/ssl.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <memory>
#include <sstream>
#include <string>

#include "net/tls/tls_context.h"
#include "storage/status.h"
#include "tests/net/http/http_get.h"

namespace relgraph::testing {

class HttpsConnection {
 public:
  // Connects to 127.0.0.1:`port` and completes the handshake; kUnauthenticated (the reason
  // OpenSSL gives) when it fails, kIOError when the connection cannot be made.
  static Result<std::unique_ptr<HttpsConnection>> Open(uint16_t port,
                                                       const net::TlsClientOptions& tls) {
    auto context = net::TlsContext::ForClient(tls);
    if (!context.ok()) return context.status();
    std::unique_ptr<HttpsConnection> c(new HttpsConnection(std::move(*context)));
    boost::beast::error_code ec;
    boost::beast::get_lowest_layer(c->stream_)
        .connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::address_v4::loopback(), port), ec);
    if (ec) return Status::IOError("connect: " + ec.message());
    SSL* ssl = c->stream_.native_handle();
    SSL_set_tlsext_host_name(ssl, "localhost");
    SSL_set1_host(ssl, "localhost");
    c->stream_.handshake(boost::asio::ssl::stream_base::client, ec);
    if (ec) return Status(Code::kUnauthenticated, "handshake: " + ec.message());
    return c;
  }

  // One request on this connection; status 0 when the connection failed (closed, refused).
  HttpGot Call(const std::string& method, const std::string& target, const std::string& body = "",
               const std::string& authorization = "") {
    namespace http = boost::beast::http;
    http::request<http::string_body> req(http::string_to_verb(method), target, 11);
    req.set(http::field::host, "localhost");
    if (!authorization.empty()) req.set(http::field::authorization, authorization);
    if (!body.empty() || method == "POST") {
      req.set(http::field::content_type, "application/json");
      req.body() = body;
      req.prepare_payload();
    }
    req.keep_alive(true);
    boost::beast::error_code ec;
    http::write(stream_, req, ec);
    HttpGot got;
    if (ec) return got;
    http::response<http::string_body> res;
    http::read(stream_, buffer_, res, ec);
    if (ec) return got;
    got.status = static_cast<int>(res.result_int());
    std::ostringstream head;
    head << res.base();
    got.head = head.str();
    got.body = res.body();
    return got;
  }
  HttpGot Get(const std::string& target) { return Call("GET", target); }

 private:
  explicit HttpsConnection(std::shared_ptr<const net::TlsContext> tls)
      : tls_(std::move(tls)), asio_(UpRef(tls_->native())), stream_(ioc_, asio_) {}
  // asio::ssl::context frees the SSL_CTX it is given: give it a reference of its own.
  static ssl_ctx_st* UpRef(ssl_ctx_st* ctx) {
    SSL_CTX_up_ref(ctx);
    return ctx;
  }

  std::shared_ptr<const net::TlsContext> tls_;
  boost::asio::ssl::context asio_;
  boost::asio::io_context ioc_;
  boost::beast::ssl_stream<boost::beast::tcp_stream> stream_;
  boost::beast::flat_buffer buffer_;
};

// A GET on a connection of its own; status 0 when the handshake or the request failed.
inline HttpGot HttpsGet(uint16_t port, const net::TlsClientOptions& tls,
                        const std::string& target) {
  auto c = HttpsConnection::Open(port, tls);
  return c.ok() ? (*c)->Get(target) : HttpGot{};
}

}  // namespace relgraph::testing
