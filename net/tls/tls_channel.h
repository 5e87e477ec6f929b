// TlsChannel: one connection's TLS session on memory buffers.
//
// Why this design: the server reads a socket only when it is readable, into its io thread's
// shared scratch buffer, and writes whole reply buffers; the blocking client polls a plain file
// descriptor. A TLS engine that owned the socket (an SSL stream) would force both into its own
// read and write loops. This channel owns no socket: the caller puts the ciphertext it read,
// takes the plaintext out, puts plaintext in and takes the ciphertext to write, with OpenSSL's
// memory BIOs in between. The same code so serves the server, the client, the tests (two
// channels wired to each other) and the fuzz target (random bytes into a server's channel).
//
// The handshake runs inside ReadPlain and WritePlain; plaintext written before it is done waits
// in the channel. A failed handshake leaves the alert that tells the peer why in the output:
// take it and write it before closing.
//
// Thread-safety: none; one thread at a time (a connection's io thread, or the client's).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "net/tls/tls_context.h"
#include "storage/status.h"

struct ssl_st;  // OpenSSL's SSL

namespace relgraph::net {

class TlsChannel {
 public:
  // A server's side (the context is a server's) or a client's, which checks that the server's
  // certificate names `host` (or the context's server_name when set).
  static Result<std::unique_ptr<TlsChannel>> Create(std::shared_ptr<const TlsContext> context,
                                                    const std::string& host = "");
  ~TlsChannel();
  TlsChannel(const TlsChannel&) = delete;
  TlsChannel& operator=(const TlsChannel&) = delete;

  // Ciphertext that arrived from the peer.
  void PutInput(std::string_view ciphertext);
  // Decrypts into `out` what the input so far holds (0: nothing yet, put more input). A
  // failure ends the session: kUnauthenticated for a certificate refused (either side's),
  // kProtocolError for anything else that breaks TLS, kUnavailable once the peer closed it.
  Result<size_t> ReadPlain(std::span<char> out);
  // Encrypts `plaintext` (kept until the handshake is done).
  Status WritePlain(std::string_view plaintext);
  // Appends the ciphertext waiting to be sent to `out`; false when there is none.
  bool TakeOutput(std::string* out);
  // Queues the close_notify alert (take it with TakeOutput).
  void Close();

  bool handshake_done() const { return handshake_done_; }
  // The subject common name of the peer's certificate, once verified; empty when the peer sent
  // none or it was not verified.
  std::string PeerCommonName() const;
  // "TLSv1.3 TLS_AES_256_GCM_SHA384", once the handshake is done.
  std::string Description() const;

 private:
  explicit TlsChannel(std::shared_ptr<const TlsContext> context) : context_(std::move(context)) {}
  // Advances the handshake; OK also when it needs more input.
  Status Handshake();
  Status Failure(int ret, const char* during);
  Status FlushPending();

  std::shared_ptr<const TlsContext> context_;  // the SSL refers to it
  ssl_st* ssl_ = nullptr;
  std::string pending_plain_;  // written before the handshake was done
  bool handshake_done_ = false;
  Status failed_;  // once not OK, every call returns it
};

// Whether a connection's first bytes (at least one) may open a TLS handshake: a handshake
// record (type 22) and, once they arrived, version 3.1 or 3.3 (a ClientHello's record). Read as
// a relgraph frame header such bytes would give a length over 65 KiB, more than any frame
// before HELLO may be, so no valid first frame looks like this.
bool LooksLikeTlsHandshake(std::string_view first_bytes);

// The subject common name of `ssl`'s peer certificate when the handshake verified it against
// the context's CAs; empty when the peer sent none or it did not verify. For any OpenSSL
// session (a TlsChannel's, an Asio stream's).
std::string VerifiedPeerCommonName(const ssl_st* ssl);

}  // namespace relgraph::net
