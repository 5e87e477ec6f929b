// ServerOptions: what a Server is told at start (relgraphd's flags and config keys map onto it,
// tools/relgraphd/daemon_config.h). Plain data.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "net/protocol/messages_admin.h"
#include "net/tls/tls_options.h"

namespace relgraph::net {

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 7707;  // 0: an ephemeral port (Server::port() tells which)
  uint32_t io_threads = 1;
  // Who may connect (docs/security.md): the named clients of clients_file, and auth_token as
  // one more client ("auth-token") holding every permission; neither: anyone may, with every
  // permission.
  std::string auth_token;
  std::string clients_file;
  TlsServerOptions tls;  // tls.enabled(): the port speaks TLS only
  uint32_t max_connections = 10000;
  uint32_t max_frame = 1u << 20;                    // bytes, whole frame
  size_t max_unsent_bytes = size_t{4} << 20;        // per connection: reading pauses past it
  std::chrono::milliseconds send_timeout{30000};    // no write progress this long: disconnect
  std::chrono::milliseconds idle_timeout{300000};   // no request this long: notice, close
  std::chrono::milliseconds shutdown_grace{10000};  // then remaining connections are cut
  bool handle_signals = false;                      // SIGINT/SIGTERM start a graceful shutdown
  std::string server_name = "relgraphd";
  std::string server_version;  // HELLO's reply (protocol version 2); relgraphd sets its own
  // The slow-command log (slow_log.h): commands taking at least slowlog_us µs (0: every one,
  // -1: none) are kept, the newest slowlog_max_len of them, and handed to on_slow_command
  // (from the thread that ran the command; relgraphd logs them).
  int64_t slowlog_us = 10000;
  uint32_t slowlog_max_len = 128;
  std::function<void(const SlowlogEntry&)> on_slow_command;
  // Security events, one line each (a refused TLS handshake or login, a permission denied, an
  // admin command run, with the client's name), from the thread that saw them; relgraphd
  // logs them.
  std::function<void(const std::string&)> on_security_event;
};

}  // namespace relgraph::net
