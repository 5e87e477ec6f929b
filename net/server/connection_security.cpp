// Connection's TLS session and who its client is: the handshake's bytes in and out of the
// TlsChannel, HELLO, the permission check before each command, the admin log.
#include "net/server/connection.h"

#include <string>

#include "net/auth/permissions.h"
#include "net/protocol/protocol.h"

namespace relgraph::net {

void Connection::ProcessTls(std::span<char> scratch, size_t n) {
  if (!tls_) {
    if (!LooksLikeTlsHandshake(std::string_view(scratch.data(), n))) {
      tls_context_.reset();  // answer in plain bytes, which such a client can read
      core_.Log("a connection from " + peer_.address().to_string() +
                " spoke plain TCP to the TLS port; refused");
      return FailAndClose(0, static_cast<uint8_t>(Opcode::kNotice),
                          Status(Code::kProtocolError,
                                 "this port speaks TLS only: connect with TLS (docs/security.md)"));
    }
    auto channel = TlsChannel::Create(std::move(tls_context_));
    if (!channel.ok()) {
      core_.Log("TLS session for " + peer_.address().to_string() +
                " could not start: " + channel.status().message());
      return Abort();
    }
    tls_ = std::move(*channel);
  }
  tls_->PutInput(std::string_view(scratch.data(), n));
  // Plaintext is never longer than the ciphertext it came from, so it fits the scratch the
  // ciphertext was read into (and has just left).
  while (!closing_ && !closed_) {
    auto plain = tls_->ReadPlain(scratch);
    if (!plain.ok()) return FailTls(plain.status());
    if (reject_after_handshake_ && tls_->handshake_done()) {
      const Status why = *reject_after_handshake_;
      reject_after_handshake_.reset();
      return FailAndClose(0, static_cast<uint8_t>(Opcode::kNotice), why);
    }
    if (*plain == 0) return;
    ProcessInput(std::string_view(scratch.data(), *plain));
  }
}

void Connection::FailTls(const Status& why) {
  if (why.code() == Code::kUnavailable) return Abort();  // the peer closed: nothing to say
  core_.Log("TLS with " + peer_.address().to_string() + ":" + std::to_string(peer_.port()) +
            " failed: " + why.message());
  tls_failed_ = true;
  closing_ = true;
  out_.clear();
  holds_.clear();
  DoWrite();  // the alert that tells the peer why
  MaybeFinish();
}

void Connection::HandleHello(const Frame& frame) {
  client_generation_ = core_.clients_generation.load(std::memory_order_acquire);
  const std::string cert_name = tls_ ? tls_->PeerCommonName() : "";
  const Status s = core_.AnswerHello(frame, cert_name, &client_, &out_);
  // Its outcome, counted without timing (a handshake is once per connection).
  Record(frame, 0, s.code());
  if (!s.ok()) {
    core_.Log("HELLO from " + peer_.address().to_string() + " refused: " + s.message());
    return FailAndClose(frame.request_id, frame.opcode, s);
  }
  greeted_ = true;
}

bool Connection::Permitted(const Frame& frame, Opcode op) {
  const uint64_t generation = core_.clients_generation.load(std::memory_order_acquire);
  if (generation != client_generation_) {
    // The clients were reloaded: this client's permissions are the new file's.
    client_generation_ = generation;
    const auto registry = core_.clients();
    if (!registry->requires_auth()) {
      client_ = ClientIdentity{"", kPermAll};
    } else if (auto now = registry->Find(client_.name)) {
      client_ = std::move(*now);
    } else {
      const Status gone(Code::kUnauthenticated,
                        "client \"" + client_.name + "\" is no longer defined on this server");
      core_.Log(gone.message() + ": closing its connection from " + peer_.address().to_string());
      Refuse(frame, gone, /*close=*/true);
      return false;
    }
  }
  const Permissions need = RequiredPermissions(op);
  if (need == kPermNone || (client_.permissions & need) != 0) return true;
  const Status denied = PermissionDenied(op, client_.name, client_.permissions);
  core_.Log(denied.message() + " (from " + peer_.address().to_string() + ")");
  Refuse(frame, denied);
  return false;
}

void Connection::LogAdmin(uint8_t opcode, const std::string& client, Code code) const {
  const auto op = static_cast<Opcode>(opcode);
  if (RequiredPermissions(op) != kPermAdmin || ReadsOnly(op)) return;
  core_.Log("admin: client \"" + client + "\" from " + peer_.address().to_string() + " ran " +
            std::string(OpcodeName(op)) + ": " + std::string(CodeName(code)));
}

}  // namespace relgraph::net
