// ServerOptions: what a Server is told at start (relgraphd's flags and config keys map onto it,
// tools/relgraphd/daemon_config.h). Plain data.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace relgraph::net {

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 7707;  // 0: an ephemeral port (Server::port() tells which)
  uint32_t io_threads = 1;
  std::string auth_token;  // empty: no authentication
  uint32_t max_connections = 10000;
  uint32_t max_frame = 1u << 20;                    // bytes, whole frame
  size_t max_unsent_bytes = size_t{4} << 20;        // per connection: reading pauses past it
  std::chrono::milliseconds send_timeout{30000};    // no write progress this long: disconnect
  std::chrono::milliseconds idle_timeout{300000};   // no request this long: notice, close
  std::chrono::milliseconds shutdown_grace{10000};  // then remaining connections are cut
  bool handle_signals = false;                      // SIGINT/SIGTERM start a graceful shutdown
  std::string server_name = "relgraphd";
  std::string server_version;  // HELLO's reply (protocol version 2); relgraphd sets its own
};

}  // namespace relgraph::net
