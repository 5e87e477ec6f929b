#include "net/auth/client_registry.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <fstream>
#include <sstream>

namespace relgraph::net {
namespace {

constexpr std::string_view kTokenPrefix = "token-sha256:";
constexpr char kAuthTokenClient[] = "auth-token";

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<TokenHash> ParseHex(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  TokenHash h;
  for (size_t i = 0; i < h.size(); ++i) {
    const int hi = HexDigit(hex[2 * i]), lo = HexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    h[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return h;
}

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

}  // namespace

TokenHash HashToken(std::string_view token) {
  TokenHash h{};
  unsigned int n = 0;
  EVP_Digest(token.data(), token.size(), h.data(), &n, EVP_sha256(), nullptr);
  return h;
}

std::string TokenCredential(std::string_view token) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text(kTokenPrefix);
  for (const uint8_t b : HashToken(token)) {
    text += kHex[b >> 4];
    text += kHex[b & 15];
  }
  return text;
}

Result<ClientRegistry> ClientRegistry::Parse(std::string_view text, const std::string& source,
                                             const std::string& auth_token) {
  ClientRegistry registry;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    const std::vector<std::string_view> words = Words(line);
    if (words.empty()) continue;
    const std::string where = source + ":" + std::to_string(line_no) + ": ";
    if (words.size() < 3) {
      return Status::InvalidArgument(where + "a client line is NAME PERMISSIONS CREDENTIAL...");
    }
    Client client;
    client.name = std::string(words[0]);
    if (!ValidName(client.name)) {
      return Status::InvalidArgument(where + "client name \"" + client.name +
                                     "\" is not 1-64 letters, digits, '.', '_', '-'");
    }
    if (registry.Find(client.name) || client.name == kAuthTokenClient) {
      return Status::InvalidArgument(
          where + "client \"" + client.name + "\" is defined twice" +
          (client.name == kAuthTokenClient ? " (the name of --auth-token's client)" : ""));
    }
    auto permissions = ParsePermissions(words[1]);
    if (!permissions.ok()) return Status::InvalidArgument(where + permissions.status().message());
    client.permissions = *permissions;
    for (size_t i = 2; i < words.size(); ++i) {
      const std::string_view credential = words[i];
      if (credential == "cert") {
        client.by_certificate = true;
      } else if (credential.substr(0, kTokenPrefix.size()) == kTokenPrefix) {
        const auto hash = ParseHex(credential.substr(kTokenPrefix.size()));
        if (!hash) {
          return Status::InvalidArgument(where +
                                         "token-sha256: wants 64 hex digits (the SHA-256 "
                                         "of the token; relgraph-admin token makes one)");
        }
        for (const TokenHash& h : client.token_hashes) {
          if (h == *hash) return Status::InvalidArgument(where + "the same token twice");
        }
        for (const Client& other : registry.clients_) {
          for (const TokenHash& h : other.token_hashes) {
            if (h == *hash) {
              return Status::InvalidArgument(where + "client \"" + client.name +
                                             "\" has the token of \"" + other.name + "\"");
            }
          }
        }
        client.token_hashes.push_back(*hash);
      } else {
        return Status::InvalidArgument(where + "unknown credential \"" + std::string(credential) +
                                       "\" (token-sha256:HEX or cert)");
      }
    }
    registry.clients_.push_back(std::move(client));
  }
  if (!auth_token.empty()) {
    registry.clients_.push_back(Client{kAuthTokenClient, kPermAll, {HashToken(auth_token)}, false});
  }
  return registry;
}

Result<ClientRegistry> ClientRegistry::Load(const std::string& path,
                                            const std::string& auth_token) {
  if (path.empty()) return Parse("", "", auth_token);
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("clients file " + path + " cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path, auth_token);
}

Result<ClientIdentity> ClientRegistry::Authenticate(std::string_view token,
                                                    std::string_view cert_name) const {
  if (clients_.empty()) return ClientIdentity{"", kPermAll};
  if (!token.empty()) {
    const TokenHash presented = HashToken(token);
    // Every hash is compared, to the end, whatever matched: the time is the same for all.
    const Client* match = nullptr;
    for (const Client& c : clients_) {
      for (const TokenHash& want : c.token_hashes) {
        if (CRYPTO_memcmp(want.data(), presented.data(), want.size()) == 0) match = &c;
      }
    }
    if (match == nullptr) return Status(Code::kUnauthenticated, "the token is not valid");
    return ClientIdentity{match->name, match->permissions};
  }
  if (!cert_name.empty()) {
    for (const Client& c : clients_) {
      if (c.by_certificate && c.name == cert_name) return ClientIdentity{c.name, c.permissions};
    }
    return Status(Code::kUnauthenticated,
                  "no client \"" + std::string(cert_name) + "\" authenticates by certificate");
  }
  return Status(Code::kUnauthenticated, "authenticate with HELLO and a token first");
}

std::optional<ClientIdentity> ClientRegistry::Find(std::string_view name) const {
  for (const Client& c : clients_) {
    if (c.name == name) return ClientIdentity{c.name, c.permissions};
  }
  return std::nullopt;
}

}  // namespace relgraph::net
