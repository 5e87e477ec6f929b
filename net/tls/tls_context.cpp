#include "net/tls/tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstdio>

namespace relgraph::net {
namespace {

Status FileError(const std::string& what, const std::string& file) {
  return Status::InvalidArgument(what + " " + file + ": " + TakeTlsErrors("cannot be used"));
}

// Refuses a certificate that has expired or is not valid yet: a server would otherwise start
// and have every handshake fail.
Status CheckValidity(SSL_CTX* ctx, const std::string& file) {
  const X509* cert = SSL_CTX_get0_certificate(ctx);
  if (cert == nullptr) return Status::InvalidArgument("certificate file " + file + " holds none");
  if (X509_cmp_current_time(X509_get0_notAfter(cert)) < 0) {
    return Status::InvalidArgument("certificate " + file + " has expired");
  }
  if (X509_cmp_current_time(X509_get0_notBefore(cert)) > 0) {
    return Status::InvalidArgument("certificate " + file + " is not valid yet");
  }
  return Status::OK();
}

Status LoadOwnCertificate(SSL_CTX* ctx, const std::string& cert_file, const std::string& key_file) {
  if (key_file.empty()) {
    return Status::InvalidArgument("certificate " + cert_file + " needs its key file");
  }
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
    return FileError("certificate file", cert_file);
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    const std::string why = TakeTlsErrors("cannot be used");
    if (why.find("mismatch") != std::string::npos) {
      return Status::InvalidArgument("key file " + key_file + " does not match certificate " +
                                     cert_file);
    }
    return Status::InvalidArgument("key file " + key_file + ": " + why);
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument("key file " + key_file + " does not match certificate " +
                                   cert_file);
  }
  return CheckValidity(ctx, cert_file);
}

SSL_CTX* NewContext(const SSL_METHOD* method) {
  SSL_CTX* ctx = SSL_CTX_new(method);
  if (ctx == nullptr) return nullptr;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
  // An idle connection gives its record buffers back (tens of kilobytes each).
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  return ctx;
}

}  // namespace

std::string TakeTlsErrors(const std::string& fallback) {
  std::string text;
  while (const unsigned long e = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(e, buffer, sizeof(buffer));
    // "error:0A000086:SSL routines::certificate verify failed": keep the reason.
    std::string line = buffer;
    const size_t colon = line.rfind(':');
    if (colon != std::string::npos && colon + 1 < line.size()) line = line.substr(colon + 1);
    if (text.find(line) != std::string::npos) continue;
    if (!text.empty()) text += "; ";
    text += line;
  }
  return text.empty() ? fallback : text;
}

Result<std::shared_ptr<const TlsContext>> TlsContext::ForServer(const TlsServerOptions& options) {
  ERR_clear_error();
  SSL_CTX* ctx = NewContext(TLS_server_method());
  if (ctx == nullptr) return Status(Code::kInternal, TakeTlsErrors("SSL_CTX_new failed"));
  std::shared_ptr<TlsContext> context(new TlsContext(ctx, /*is_server=*/true));
  RELGRAPH_RETURN_IF_ERROR(LoadOwnCertificate(ctx, options.cert_file, options.key_file));
  if (!options.ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, options.ca_file.c_str(), nullptr) != 1) {
      return FileError("CA file", options.ca_file);
    }
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(options.ca_file.c_str());
    if (names == nullptr) return FileError("CA file", options.ca_file);
    SSL_CTX_set_client_CA_list(ctx, names);
    int mode = SSL_VERIFY_PEER;
    if (options.require_client_cert) mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    SSL_CTX_set_verify(ctx, mode, nullptr);
    static const unsigned char kSessionContext[] = "relgraphd";
    SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof(kSessionContext) - 1);
    context->verifies_peer_ = true;
  }
  return std::shared_ptr<const TlsContext>(std::move(context));
}

Result<std::shared_ptr<const TlsContext>> TlsContext::ForClient(const TlsClientOptions& options) {
  ERR_clear_error();
  SSL_CTX* ctx = NewContext(TLS_client_method());
  if (ctx == nullptr) return Status(Code::kInternal, TakeTlsErrors("SSL_CTX_new failed"));
  std::shared_ptr<TlsContext> context(new TlsContext(ctx, /*is_server=*/false));
  context->server_name_ = options.server_name;
  if (!options.cert_file.empty()) {
    RELGRAPH_RETURN_IF_ERROR(LoadOwnCertificate(ctx, options.cert_file, options.key_file));
  }
  if (options.verify_server) {
    const int loaded = options.ca_file.empty()
                           ? SSL_CTX_set_default_verify_paths(ctx)
                           : SSL_CTX_load_verify_locations(ctx, options.ca_file.c_str(), nullptr);
    if (loaded != 1) {
      return FileError("CA file", options.ca_file.empty() ? "(the system's)" : options.ca_file);
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    context->verifies_peer_ = true;
  } else {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  }
  return std::shared_ptr<const TlsContext>(std::move(context));
}

TlsContext::~TlsContext() {
  SSL_CTX_free(ctx_);
}

}  // namespace relgraph::net
