// ClientRegistry: the named clients a server lets in, and what each may do (docs/security.md).
//
// A clients file has one client per line (blank lines and # comments aside):
//
//   NAME  PERMISSIONS  CREDENTIAL [CREDENTIAL]
//
// NAME is 1-64 letters, digits, '.', '_' or '-'; PERMISSIONS is "all" or a comma list of read,
// write, stream, admin, replication; a CREDENTIAL is token-sha256:HEX (the SHA-256 of the
// client's token, 64 hex digits: the file never holds a token) or cert (a client certificate
// whose subject common name is NAME, verified against the server's --tls-ca). A client may
// have several tokens: rotating one is adding the new, moving its users, removing the old.
//
// Why this design: tokens are random secrets (relgraph-admin token makes them), so one SHA-256
// is enough to keep them out of the file and of memory dumps; a slow password hash would only
// slow every HELLO. A presented token is hashed and compared with every client's hash, each
// comparison constant-time and none cut short, so timing says nothing about which client or
// how much matched. A registry is immutable: a reload builds a new one and swaps it in.
//
// Thread-safety: a built registry is read-only; any thread may use it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/auth/permissions.h"
#include "storage/status.h"

namespace relgraph::net {

// Who a connection authenticated as.
struct ClientIdentity {
  std::string name;  // empty: the anonymous client of a server without authentication
  Permissions permissions = kPermNone;
};

using TokenHash = std::array<uint8_t, 32>;
// SHA-256 of `token`.
TokenHash HashToken(std::string_view token);
// "token-sha256:<64 hex digits>" for `token`.
std::string TokenCredential(std::string_view token);

class ClientRegistry {
 public:
  struct Client {
    std::string name;
    Permissions permissions = kPermNone;
    std::vector<TokenHash> token_hashes;  // several while a token is being rotated
    bool by_certificate = false;
  };

  // No clients: a server with this registry needs no authentication.
  ClientRegistry() = default;
  // The clients of `text` (a clients file's content; `source` names it in errors), plus, when
  // `auth_token` is not empty, a client named "auth-token" holding every permission (the
  // --auth-token of servers before named clients). kInvalidArgument naming the line and what
  // is wrong with it.
  static Result<ClientRegistry> Parse(std::string_view text, const std::string& source,
                                      const std::string& auth_token);
  // Reads and parses `path` (empty: no file).
  static Result<ClientRegistry> Load(const std::string& path, const std::string& auth_token);

  // Whether any client is defined: false means every connection is let in with every
  // permission, as the anonymous client.
  bool requires_auth() const { return !clients_.empty(); }
  size_t size() const { return clients_.size(); }

  // Who presents `token` and, over mutual TLS, a verified certificate named `cert_name`
  // (empty: none). A token, when given, decides; else the certificate's name. kUnauthenticated
  // when neither names a client (and authentication is required).
  Result<ClientIdentity> Authenticate(std::string_view token, std::string_view cert_name) const;
  // The client named `name` as this registry defines it; nullopt when it has none.
  std::optional<ClientIdentity> Find(std::string_view name) const;

 private:
  std::vector<Client> clients_;
};

}  // namespace relgraph::net
