#include "tools/admin/token_command.h"

#include <fstream>

#include "net/auth/client_registry.h"

namespace relgraph::admin {

int TokenCommand(const std::vector<std::string>& positional, std::ostream& out, std::ostream& err) {
  if (positional.size() != 2) {
    err << "relgraph-admin token: takes NAME PERMISSIONS (e.g. app read,write)\n";
    return 2;
  }
  std::ifstream random("/dev/urandom", std::ios::binary);
  unsigned char bytes[32];
  if (!random.read(reinterpret_cast<char*>(bytes), sizeof(bytes))) {
    err << "relgraph-admin token: cannot read /dev/urandom\n";
    return 1;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (const unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  const std::string line = positional[0] + " " + positional[1] + " " + net::TokenCredential(token);
  // The line must be one the server accepts: parse it as a clients file would.
  auto parsed = net::ClientRegistry::Parse(line, "the new line", "");
  if (!parsed.ok()) {
    err << "relgraph-admin token: " << parsed.status().message() << "\n";
    return 2;
  }
  out << token << "\n" << line << "\n";
  return 0;
}

}  // namespace relgraph::admin
