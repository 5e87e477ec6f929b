// The TLS flags every relgraph program that connects shares (relgraph-cli, relgraph-admin,
// relgraph-bench, relgraph-bridge; docs/security.md), parsed in one place so they mean the
// same everywhere.
//
// Thread-safety: pure functions.
#pragma once

#include <string_view>

#include "net/tls/tls_options.h"
#include "storage/status.h"

namespace relgraph::net {

// "--tls", "--tls-ca=FILE", "--tls-cert=FILE", "--tls-key=FILE", "--tls-server-name=NAME",
// "--tls-insecure": applies `arg` (one argument, "--key=value" or "--key") to *tls and returns
// true; false when `arg` is none of them. kInvalidArgument for one of them without its value.
// Any of them turns TLS on.
Result<bool> ApplyTlsFlag(std::string_view arg, TlsClientOptions* tls);

// Their --help lines, two-space indented.
inline constexpr char kTlsFlagsHelp[] =
    "  --tls                  connect with TLS, trusting the system's CAs\n"
    "  --tls-ca=FILE          connect with TLS, trusting the CAs of FILE (PEM)\n"
    "  --tls-cert=FILE        client certificate for mutual TLS (PEM), with\n"
    "  --tls-key=FILE         its key\n"
    "  --tls-server-name=NAME the name the server's certificate must carry [the host]\n"
    "  --tls-insecure         accept any server certificate (tests only)\n";

}  // namespace relgraph::net
