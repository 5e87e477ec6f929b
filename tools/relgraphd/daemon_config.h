// relgraphd's configuration: defaults, `--key=value` flags and the same keys in a config file.
//
// Thread-safety: plain data and pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/db.h"
#include "net/server/server_options.h"
#include "storage/status.h"
#include "tools/relgraphd/daemon_log.h"

namespace relgraph {

struct DaemonConfig {
  net::ServerOptions server;  // listen address, limits, auth token
  std::string data_dir = "./data";
  DbOptions db;
  uint32_t snapshot_interval_s = 3600;  // 0: only on request
  LogLevel log_level = LogLevel::kInfo;
  LogFormat log_format = LogFormat::kText;  // --log-format=text|json (daemon_log.h)
  // The HTTP port (docs/http.md): /healthz, /readyz, /metrics.
  bool http = true;  // --http=off: none
  std::string http_host = "127.0.0.1";
  uint16_t http_port = 7780;
  uint32_t http_threads = 1;  // the HTTP port's own threads (--http-threads)
  uint64_t ready_max_lag_ms = 10000;  // a replica further behind is not ready
  // Replication (docs/replication.md).
  std::string replica_of;     // "host:port": run as a read-only replica of that primary
  std::string replica_token;  // HELLO token for the primary
  bool resync = false;        // a replica: copy the primary's snapshot first, discarding local data
  std::string cluster;        // "nats://host:port": run as a shard of the cluster there
  uint32_t shard_id = 0;      // this shard's id in the cluster's map (with --cluster)
  // Replies wait until this many replicas hold the write. A setting of the replication group:
  // absent, a node keeps the group's (saved in its data directory, learned from its primary);
  // given, a primary sets the group's, a replica sets its own floor for when it is promoted.
  std::optional<uint32_t> sync_replicas;
  // Automatic failover (docs/replication.md, "Automatic failover"): the group this node is a
  // member of, the NATS servers holding its lease, and the address members and clients reach
  // this node at (the listen address unless it is a wildcard).
  std::string group;
  // Empty: --cluster's servers for a shard's group, else nats://127.0.0.1:4222 (EffectiveGroupNats).
  std::string group_nats;
  std::string advertise;
  uint32_t group_nats_replicas = 1;
  std::chrono::milliseconds group_lease{1500};
  std::chrono::milliseconds group_renew{200};
  std::chrono::milliseconds group_store_timeout{500};
  std::chrono::milliseconds group_fence_margin{300};
  // Security (docs/security.md). server.tls and server.clients_file hold the port's side;
  // the links this node opens (to a primary) use TLS when link_tls says so (unset: when this
  // node's own port does), trusting --tls-ca and presenting this node's certificate.
  bool require_tls = false;
  std::optional<bool> link_tls;
  std::string nats_tls_ca, nats_tls_cert, nats_tls_key;  // NATS's own TLS (tls:// URLs)
  // Every key given, in the config file or as a flag (the flag's value when both), as given:
  // what a reload (daemon_reload.h) compares.
  std::map<std::string, std::string> given;
  bool help = false;
  bool version = false;  // --version: print it and exit
};

// Applies the arguments (argv without the program name) over the defaults. A `--config=FILE`
// is read first wherever it appears, so flags override the file. Errors name the bad key/value.
Result<DaemonConfig> ParseDaemonConfig(const std::vector<std::string>& args);

// The TLS a link this node opens uses (to a primary): off, or on with --tls-ca as the trusted
// CAs and this node's certificate as its client certificate.
net::TlsClientOptions LinkTlsOf(const DaemonConfig& config);

// The --help text: every key with its default and meaning.
std::string DaemonUsage();

}  // namespace relgraph
