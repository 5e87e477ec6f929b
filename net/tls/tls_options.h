// What TLS a server or a client is told to use (docs/security.md). Plain data.
#pragma once

#include <string>

namespace relgraph::net {

// A server's TLS: its certificate chain and key (PEM files), and, for mutual TLS, the CAs whose
// client certificates it trusts.
struct TlsServerOptions {
  std::string cert_file;  // empty: no TLS
  std::string key_file;
  std::string ca_file;  // trusted client CAs; empty: client certificates are not asked for
  // With a CA file: refuse a client without a certificate (else it may authenticate by token).
  bool require_client_cert = false;
  bool enabled() const { return !cert_file.empty(); }
};

// A client's TLS: the CAs it trusts to sign the server's certificate, and optionally its own
// certificate and key (mutual TLS).
struct TlsClientOptions {
  bool enabled = false;
  std::string ca_file;    // empty: the system's trusted CAs
  std::string cert_file;  // optional client certificate (mutual TLS)
  std::string key_file;
  // The name the server's certificate must carry; empty: the host connected to.
  std::string server_name;
  // Off only for tests and trusted networks: any certificate is accepted (still encrypted,
  // not authenticated).
  bool verify_server = true;
};

}  // namespace relgraph::net
