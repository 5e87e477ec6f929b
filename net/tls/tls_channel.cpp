#include "net/tls/tls_channel.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>

namespace relgraph::net {
namespace {

bool IsIpAddress(const std::string& host) {
  unsigned char buffer[16];
  return inet_pton(AF_INET, host.c_str(), buffer) == 1 ||
         inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

}  // namespace

Result<std::unique_ptr<TlsChannel>> TlsChannel::Create(std::shared_ptr<const TlsContext> context,
                                                       const std::string& host) {
  std::unique_ptr<TlsChannel> channel(new TlsChannel(context));
  ERR_clear_error();
  channel->ssl_ = SSL_new(context->native());
  if (channel->ssl_ == nullptr) return Status(Code::kInternal, TakeTlsErrors("SSL_new failed"));
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  if (in == nullptr || out == nullptr) {
    BIO_free(in);
    BIO_free(out);
    return Status(Code::kInternal, "out of memory for TLS buffers");
  }
  // An empty input buffer means "wait for more", not end of file.
  BIO_set_mem_eof_return(in, -1);
  SSL_set_bio(channel->ssl_, in, out);
  if (context->is_server()) {
    SSL_set_accept_state(channel->ssl_);
    return channel;
  }
  SSL_set_connect_state(channel->ssl_);
  const std::string name = context->server_name().empty() ? host : context->server_name();
  if (!name.empty()) {
    if (IsIpAddress(name)) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(channel->ssl_), name.c_str());
    } else {
      SSL_set_tlsext_host_name(channel->ssl_, name.c_str());
      if (context->verifies_peer()) SSL_set1_host(channel->ssl_, name.c_str());
    }
  }
  return channel;
}

TlsChannel::~TlsChannel() {
  SSL_free(ssl_);
}

void TlsChannel::PutInput(std::string_view ciphertext) {
  while (!ciphertext.empty()) {
    const int n = BIO_write(SSL_get_rbio(ssl_), ciphertext.data(),
                            static_cast<int>(std::min<size_t>(ciphertext.size(), 1 << 30)));
    if (n <= 0) return;
    ciphertext.remove_prefix(static_cast<size_t>(n));
  }
}

Status TlsChannel::Failure(int ret, const char* during) {
  const int error = SSL_get_error(ssl_, ret);
  if (error == SSL_ERROR_ZERO_RETURN) {
    failed_ = Status(Code::kUnavailable, "the peer closed the TLS session");
    return failed_;
  }
  const long verify = SSL_get_verify_result(ssl_);
  std::string why = TakeTlsErrors("error " + std::to_string(error));
  const bool certificate = verify != X509_V_OK || why.find("certificate") != std::string::npos ||
                           why.find("unknown ca") != std::string::npos;
  if (verify != X509_V_OK) {
    why += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
  }
  failed_ = Status(certificate ? Code::kUnauthenticated : Code::kProtocolError,
                   std::string("TLS ") + during + " failed: " + why);
  return failed_;
}

Status TlsChannel::Handshake() {
  if (handshake_done_) return Status::OK();
  ERR_clear_error();
  const int r = SSL_do_handshake(ssl_);
  if (r == 1) {
    handshake_done_ = true;
    return FlushPending();
  }
  const int error = SSL_get_error(ssl_, r);
  if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) return Status::OK();
  return Failure(r, "handshake");
}

Status TlsChannel::FlushPending() {
  if (pending_plain_.empty()) return Status::OK();
  std::string pending;
  pending.swap(pending_plain_);
  return WritePlain(pending);
}

Result<size_t> TlsChannel::ReadPlain(std::span<char> out) {
  if (!failed_.ok()) return failed_;
  RELGRAPH_RETURN_IF_ERROR(Handshake());
  if (!handshake_done_) return size_t{0};
  size_t total = 0;
  while (total < out.size()) {
    ERR_clear_error();
    size_t n = 0;
    const int r = SSL_read_ex(ssl_, out.data() + total, out.size() - total, &n);
    if (r == 1) {
      total += n;
      continue;
    }
    const int error = SSL_get_error(ssl_, r);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) break;
    Status s = Failure(r, "read");
    if (total > 0) return total;  // hand over what arrived; the failure comes next call
    return s;
  }
  return total;
}

Status TlsChannel::WritePlain(std::string_view plaintext) {
  if (!failed_.ok()) return failed_;
  if (!handshake_done_) {
    pending_plain_.append(plaintext);
    return Handshake();
  }
  while (!plaintext.empty()) {
    ERR_clear_error();
    size_t n = 0;
    const int r = SSL_write_ex(ssl_, plaintext.data(), plaintext.size(), &n);
    if (r != 1) return Failure(r, "write");
    plaintext.remove_prefix(n);
  }
  return Status::OK();
}

bool TlsChannel::TakeOutput(std::string* out) {
  BIO* bio = SSL_get_wbio(ssl_);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  if (n <= 0) return false;
  out->append(data, static_cast<size_t>(n));
  (void)BIO_reset(bio);
  return true;
}

void TlsChannel::Close() {
  if (handshake_done_ && failed_.ok()) {
    ERR_clear_error();
    SSL_shutdown(ssl_);
  }
}

std::string TlsChannel::PeerCommonName() const { return VerifiedPeerCommonName(ssl_); }

std::string VerifiedPeerCommonName(const ssl_st* ssl) {
  if (ssl == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return "";
  const X509* peer = SSL_get0_peer_certificate(ssl);
  if (peer == nullptr) return "";
  std::string name;
  const X509_NAME* subject = X509_get_subject_name(peer);
  const int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (index >= 0) {
    const ASN1_STRING* value = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index));
    name.assign(reinterpret_cast<const char*>(ASN1_STRING_get0_data(value)),
                static_cast<size_t>(ASN1_STRING_length(value)));
  }
  return name;
}

std::string TlsChannel::Description() const {
  if (!handshake_done_) return "";
  return std::string(SSL_get_version(ssl_)) + " " + SSL_get_cipher_name(ssl_);
}

bool LooksLikeTlsHandshake(std::string_view first_bytes) {
  constexpr uint8_t kHandshakeRecord = 0x16;
  if (first_bytes.empty() || static_cast<uint8_t>(first_bytes[0]) != kHandshakeRecord) {
    return false;
  }
  if (first_bytes.size() >= 2 && first_bytes[1] != 0x03) return false;
  return first_bytes.size() < 3 || first_bytes[2] == 0x01 || first_bytes[2] == 0x03;
}

}  // namespace relgraph::net
