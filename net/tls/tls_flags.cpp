#include "net/tls/tls_flags.h"

#include <string>

namespace relgraph::net {

Result<bool> ApplyTlsFlag(std::string_view arg, TlsClientOptions* tls) {
  if (arg.rfind("--tls", 0) != 0) return false;
  const size_t eq = arg.find('=');
  const std::string_view key = arg.substr(0, eq);
  const std::string value(eq == std::string_view::npos ? std::string_view() : arg.substr(eq + 1));
  const bool takes_value =
      key == "--tls-ca" || key == "--tls-cert" || key == "--tls-key" || key == "--tls-server-name";
  if (takes_value && value.empty()) {
    return Status::InvalidArgument(std::string(key) + " wants a value: " + std::string(key) +
                                   "=...");
  }
  if (key == "--tls") {
    tls->enabled = true;
  } else if (key == "--tls-ca") {
    tls->ca_file = value;
  } else if (key == "--tls-cert") {
    tls->cert_file = value;
  } else if (key == "--tls-key") {
    tls->key_file = value;
  } else if (key == "--tls-server-name") {
    tls->server_name = value;
  } else if (key == "--tls-insecure") {
    tls->verify_server = false;
  } else {
    return false;
  }
  tls->enabled = true;
  return true;
}

}  // namespace relgraph::net
