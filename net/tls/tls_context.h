// TlsContext: an OpenSSL context built from a server's or a client's TLS options.
//
// Why this design: a context is immutable once built and shared (shared_ptr) by the channels
// made from it, so reloading certificates is building a new context and handing it to new
// connections, while established ones keep theirs until they close. Every failure names the
// file and OpenSSL's reason, because "handshake failed" alone sends an operator nowhere.
//
// Both sides accept TLS 1.2 and newer only, without renegotiation or compression.
//
// Thread-safety: a built context is read-only and may be used from any thread.
#pragma once

#include <memory>
#include <string>

#include "net/tls/tls_options.h"
#include "storage/status.h"

struct ssl_ctx_st;  // OpenSSL's SSL_CTX

namespace relgraph::net {

class TlsContext {
 public:
  // kInvalidArgument naming the file and the reason: an unreadable or malformed certificate,
  // key or CA file, a key that does not match the certificate, an expired certificate.
  static Result<std::shared_ptr<const TlsContext>> ForServer(const TlsServerOptions& options);
  static Result<std::shared_ptr<const TlsContext>> ForClient(const TlsClientOptions& options);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  ssl_ctx_st* native() const { return ctx_; }
  bool is_server() const { return is_server_; }
  // A client: the name the server's certificate must carry (empty: the host connected to).
  const std::string& server_name() const { return server_name_; }
  bool verifies_peer() const { return verifies_peer_; }

 private:
  TlsContext(ssl_ctx_st* ctx, bool is_server) : ctx_(ctx), is_server_(is_server) {}
  ssl_ctx_st* ctx_;
  bool is_server_;
  bool verifies_peer_ = false;
  std::string server_name_;
};

// OpenSSL's queued errors as one line ("reason; reason"), emptying the queue; `fallback` when
// the queue is empty.
std::string TakeTlsErrors(const std::string& fallback);

}  // namespace relgraph::net
