#include "tools/relgraphd/daemon_config.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "engine/graph/time_resolution.h"
#include "net/client/client.h"
#include "net/cluster/nats_link.h"
#include "relgraph_version.h"

namespace relgraph {
namespace {

Status Bad(const std::string& key, const std::string& value, const std::string& why) {
  return Status::InvalidArgument("--" + key + "=" + value + ": " + why);
}

template <typename T>
Status ParseNumber(const std::string& key, const std::string& value, T min, T max, T* out) {
  T v{};
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || ptr != value.data() + value.size() || v < min || v > max) {
    return Bad(key, value,
               "expected a number in " + std::to_string(min) + ".." + std::to_string(max));
  }
  *out = v;
  return Status::OK();
}

// "--key" alone or "--key=true": true; "--key=false": false.
Status ParseBool(const std::string& key, const std::string& value, bool* out) {
  if (value != "" && value != "true" && value != "false") {
    return Status::InvalidArgument("--" + key + " takes true or false, not '" + value + "'");
  }
  *out = value != "false";
  return Status::OK();
}

// Milliseconds in [min, one day].
Status ParseMs(const std::string& key, const std::string& value, uint64_t min,
               std::chrono::milliseconds* out) {
  uint64_t n = 0;
  RELGRAPH_RETURN_IF_ERROR(ParseNumber<uint64_t>(key, value, min, 86400000, &n));
  *out = std::chrono::milliseconds(n);
  return Status::OK();
}

// nats://HOST:PORT, or several separated by commas (a NATS cluster).
// (net/cluster/nats_link.h's list, which every NATS connection reads.)
Status ParseNatsUrls(const std::string& key, const std::string& value, std::string* out) {
  if (auto servers = net::ParseNatsServers(value); !servers.ok()) {
    return Bad(key, value, servers.status().message());
  }
  *out = value;
  return Status::OK();
}

Status ReadTokenFile(const std::string& path, std::string* token) {
  std::ifstream in(path);
  if (!in) return Status::IOError("cannot read the token file " + path);
  std::getline(in, *token);
  while (!token->empty() && (token->back() == '\r' || token->back() == ' ')) token->pop_back();
  if (token->empty()) return Status::InvalidArgument("the token file " + path + " is empty");
  return Status::OK();
}

Status ApplyKey(const std::string& key, const std::string& value, DaemonConfig* c);

Status Apply(const std::string& key, const std::string& value, DaemonConfig* c) {
  RELGRAPH_RETURN_IF_ERROR(ApplyKey(key, value, c));
  c->given[key] = value;
  return Status::OK();
}

Status ApplyKey(const std::string& key, const std::string& value, DaemonConfig* c) {
  uint64_t n = 0;
  if (key == "listen") return net::ParseHostPort(value, &c->server.host, &c->server.port);
  if (key == "http") {
    c->http = value != "off";
    return c->http ? net::ParseHostPort(value, &c->http_host, &c->http_port) : Status::OK();
  }
  if (key == "http-threads") return ParseNumber<uint32_t>(key, value, 1, 16, &c->http_threads);
  if (key == "ready-max-lag-ms") {
    return ParseNumber<uint64_t>(key, value, 0, uint64_t{1} << 40, &c->ready_max_lag_ms);
  }
  if (key == "data-dir") {
    if (value.empty()) return Bad(key, value, "must not be empty");
    c->data_dir = value;
    return Status::OK();
  }
  if (key == "fsync") {
    auto mode = ParseDurabilityMode(value);
    if (!mode.ok()) return Bad(key, value, "expected always, everysec or none");
    c->db.durability = *mode;
    return Status::OK();
  }
  if (key == "auth-token") {
    c->server.auth_token = value;
    return Status::OK();
  }
  if (key == "auth-token-file") return ReadTokenFile(value, &c->server.auth_token);
  if (key == "clients-file") {
    c->server.clients_file = value;
    return Status::OK();
  }
  if (key == "tls-cert" || key == "tls-key" || key == "tls-ca") {
    if (value.empty()) return Bad(key, value, "wants a file");
    (key == "tls-cert" ? c->server.tls.cert_file
                       : key == "tls-key" ? c->server.tls.key_file : c->server.tls.ca_file) = value;
    return Status::OK();
  }
  if (key == "tls-require-client-cert") {
    return ParseBool(key, value, &c->server.tls.require_client_cert);
  }
  if (key == "require-tls") return ParseBool(key, value, &c->require_tls);
  if (key == "link-tls") {
    bool on = false;
    RELGRAPH_RETURN_IF_ERROR(ParseBool(key, value, &on));
    c->link_tls = on;
    return Status::OK();
  }
  if (key == "nats-tls-ca" || key == "nats-tls-cert" || key == "nats-tls-key") {
    (key == "nats-tls-ca" ? c->nats_tls_ca
                          : key == "nats-tls-cert" ? c->nats_tls_cert : c->nats_tls_key) = value;
    return Status::OK();
  }
  if (key == "io-threads") return ParseNumber<uint32_t>(key, value, 1, 64, &c->server.io_threads);
  if (key == "max-connections") {
    return ParseNumber<uint32_t>(key, value, 1, 1000000, &c->server.max_connections);
  }
  if (key == "max-frame") {
    return ParseNumber<uint32_t>(key, value, 4096, 64u << 20, &c->server.max_frame);
  }
  if (key == "max-unsent") {
    RELGRAPH_RETURN_IF_ERROR(ParseNumber<uint64_t>(key, value, 65536, uint64_t{1} << 32, &n));
    c->server.max_unsent_bytes = n;
    return Status::OK();
  }
  if (key == "idle-timeout-ms") return ParseMs(key, value, 100, &c->server.idle_timeout);
  if (key == "send-timeout-ms") return ParseMs(key, value, 100, &c->server.send_timeout);
  if (key == "shutdown-grace-ms") return ParseMs(key, value, 0, &c->server.shutdown_grace);
  if (key == "snapshot-interval-s") {
    return ParseNumber<uint32_t>(key, value, 0, 86400 * 365, &c->snapshot_interval_s);
  }
  if (key == "stream-retention") {
    // BYTES[,SECONDS]: what named cursors may hold back of the WAL, and for how long.
    const size_t comma = value.find(',');
    RELGRAPH_RETURN_IF_ERROR(ParseNumber<uint64_t>(
        key, value.substr(0, comma), 0, uint64_t{1} << 50, &c->db.stream_retention_bytes));
    if (comma == std::string::npos) return Status::OK();
    return ParseNumber<uint32_t>(key, value.substr(comma + 1), 0, 86400 * 3650,
                                 &c->db.stream_retention_age_s);
  }
  if (key == "replica-of") {
    std::string host;
    uint16_t port = 0;
    RELGRAPH_RETURN_IF_ERROR(net::ParseHostPort(value, &host, &port));
    c->replica_of = value;
    return Status::OK();
  }
  if (key == "replica-token") {
    c->replica_token = value;
    return Status::OK();
  }
  if (key == "resync") return ParseBool(key, value, &c->resync);  // --resync alone: true
  if (key == "cluster") return ParseNatsUrls(key, value, &c->cluster);
  if (key == "group") {
    c->group = value;
    return Status::OK();
  }
  if (key == "group-nats") return ParseNatsUrls(key, value, &c->group_nats);
  if (key == "advertise") {
    std::string host;
    uint16_t port = 0;
    RELGRAPH_RETURN_IF_ERROR(net::ParseHostPort(value, &host, &port));
    c->advertise = value;
    return Status::OK();
  }
  if (key == "group-nats-replicas") {
    return ParseNumber<uint32_t>(key, value, 1, 5, &c->group_nats_replicas);
  }
  if (key == "group-lease-ms") return ParseMs(key, value, 100, &c->group_lease);
  if (key == "group-renew-ms") return ParseMs(key, value, 10, &c->group_renew);
  if (key == "group-store-timeout-ms") return ParseMs(key, value, 10, &c->group_store_timeout);
  if (key == "group-fence-margin-ms") return ParseMs(key, value, 1, &c->group_fence_margin);
  if (key == "shard-id") return ParseNumber<uint32_t>(key, value, 1, 65535, &c->shard_id);
  if (key == "sync-replicas") {
    uint32_t replicas = 0;
    RELGRAPH_RETURN_IF_ERROR(ParseNumber<uint32_t>(key, value, 0, 16, &replicas));
    c->sync_replicas = replicas;
    return Status::OK();
  }
  if (key == "wal-segment-bytes") {
    return ParseNumber<uint64_t>(key, value, 4096, uint64_t{1} << 40, &c->db.wal_segment_bytes);
  }
  if (key == "keep-snapshots") {
    return ParseNumber<uint32_t>(key, value, 1, 1000, &c->db.keep_snapshots);
  }
  if (key == "max-following") {
    return ParseNumber<uint32_t>(key, value, 1, kMaxFollowingLimit, &c->db.graph.max_following);
  }
  if (key == "max-blocks") {
    return ParseNumber<uint32_t>(key, value, 1, kMaxBlocksLimit, &c->db.graph.max_blocks);
  }
  if (key == "hide-blocked-by") return ParseBool(key, value, &c->db.graph.hide_blocked_by);
  if (key == "follow-time-resolution") {
    if (ParseTimeResolution(value, &c->db.graph.time_resolution_ms).ok()) return Status::OK();
    return Bad(key, value, "expected 1ms or 1s");
  }
  FeedOptions& feed = c->db.feed;
  if (key == "feed-posts-per-author") {
    return ParseNumber<uint32_t>(key, value, 1, 50'000, &feed.posts_per_author);
  }
  if (key == "feed-timeline-length") {
    return ParseNumber<uint32_t>(key, value, 1, 100'000, &feed.timeline_length);
  }
  if (key == "feed-celebrity-fans") {
    return ParseNumber<uint32_t>(key, value, 1, UINT32_MAX, &feed.celebrity_fans);
  }
  if (key == "feed-active-days") {
    uint32_t days = 0;
    RELGRAPH_RETURN_IF_ERROR(ParseNumber<uint32_t>(key, value, 1, 3650, &days));
    feed.active_reader_ms = int64_t{days} * 24 * 3600 * 1000;
    return Status::OK();
  }
  if (key == "feed-inbox-budget-mb") {
    uint64_t mb = 0;
    RELGRAPH_RETURN_IF_ERROR(ParseNumber<uint64_t>(key, value, 1, uint64_t{1} << 30, &mb));
    feed.inbox_memory_budget = mb << 20;
    return Status::OK();
  }
  if (key == "feed-fanout-gather-us") {
    return ParseNumber<uint32_t>(key, value, 0, 1'000'000, &c->db.fanout_gather_us);
  }
  if (key == "rate-limit") {
    if (value == "off") {
      c->db.graph.rate_limit.enabled = false;
      return Status::OK();
    }
    const size_t slash = value.find('/');
    uint32_t capacity = 0, refill = 0;
    if (slash == std::string::npos ||
        !ParseNumber<uint32_t>(key, value.substr(0, slash), 1, 1000000, &capacity).ok() ||
        !ParseNumber<uint32_t>(key, value.substr(slash + 1), 1, 1000000, &refill).ok()) {
      return Bad(key, value, "expected off or CAPACITY/REFILL_PER_SECOND, e.g. 100/1");
    }
    c->db.graph.rate_limit = {true, double(capacity), double(refill)};
    return Status::OK();
  }
  if (key == "log-format") {
    if (value != "text" && value != "json") return Bad(key, value, "expected text or json");
    c->log_format = value == "json" ? LogFormat::kJson : LogFormat::kText;
    return Status::OK();
  }
  if (key == "slowlog-us") {
    if (value == "off" || value == "-1") {
      c->server.slowlog_us = -1;
      return Status::OK();
    }
    return ParseNumber<int64_t>(key, value, 0, int64_t{3600} * 1000000, &c->server.slowlog_us);
  }
  if (key == "slowlog-max-len") {
    return ParseNumber<uint32_t>(key, value, 0, 10000, &c->server.slowlog_max_len);
  }
  if (key == "log-level") {
    if (value == "error")
      c->log_level = LogLevel::kError;
    else if (value == "info")
      c->log_level = LogLevel::kInfo;
    else if (value == "debug")
      c->log_level = LogLevel::kDebug;
    else
      return Bad(key, value, "expected error, info or debug");
    return Status::OK();
  }
  return Status::InvalidArgument("unknown option --" + key + " (see --help)");
}

}  // namespace

net::TlsClientOptions LinkTlsOf(const DaemonConfig& config) {
  net::TlsClientOptions tls;
  tls.enabled = config.link_tls.value_or(config.server.tls.enabled());
  tls.ca_file = config.server.tls.ca_file;
  tls.cert_file = config.server.tls.cert_file;
  tls.key_file = config.server.tls.key_file;
  return tls;
}

namespace {

// "--key=value" or "--flag" -> key, value.
Status SplitArg(const std::string& arg, std::string* key, std::string* value) {
  if (arg.rfind("--", 0) != 0) {
    return Status::InvalidArgument("unexpected argument '" + arg + "' (options are --key=value)");
  }
  const size_t eq = arg.find('=');
  *key = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
  *value = eq == std::string::npos ? "" : arg.substr(eq + 1);
  return Status::OK();
}

Status ApplyConfigFile(const std::string& path, DaemonConfig* c) {
  std::ifstream in(path);
  if (!in) return Status::IOError("cannot read the config file " + path);
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    auto trim = [](std::string s) {
      const size_t b = s.find_first_not_of(" \t\r");
      const size_t e = s.find_last_not_of(" \t\r");
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos) {
      return Status::InvalidArgument(path + ":" + std::to_string(lineno) +
                                     ": expected key = value");
    }
    Status s = Apply(trim(line.substr(0, eq)), trim(line.substr(eq + 1)), c);
    if (!s.ok()) return Status(s.code(), path + ":" + std::to_string(lineno) + ": " + s.message());
  }
  return Status::OK();
}

}  // namespace

Result<DaemonConfig> ParseDaemonConfig(const std::vector<std::string>& args) {
  DaemonConfig c;
  c.server.port = net::kDefaultPort;
  c.server.handle_signals = true;
  c.server.server_version = kVersion;
  std::string key, value;
  for (const std::string& arg : args) {  // the config file first: flags override it
    RELGRAPH_RETURN_IF_ERROR(SplitArg(arg, &key, &value));
    if (key == "config") RELGRAPH_RETURN_IF_ERROR(ApplyConfigFile(value, &c));
  }
  for (const std::string& arg : args) {
    RELGRAPH_RETURN_IF_ERROR(SplitArg(arg, &key, &value));
    if (key == "config") continue;
    if (key == "help" || key == "version") {
      (key == "help" ? c.help : c.version) = true;
      continue;
    }
    RELGRAPH_RETURN_IF_ERROR(Apply(key, value, &c));
  }
  return c;
}

std::string DaemonUsage() {
  return R"(relgraphd: the relgraph server (protocol: docs/protocol.md)

usage: relgraphd [--key=value ...]      every key may also be set in a --config file
                                        as "key = value" lines ('#' starts a comment)

  --listen=HOST:PORT          address to listen on                  [127.0.0.1:7707]
  --data-dir=DIR              snapshots, WAL and LOCK live here       [./data]
  --fsync=MODE                always: a write is acknowledged after its fsync;
                              everysec: fsync once a second (lose <= ~1 s on a crash);
                              none: leave it to the OS                [everysec]
  --auth-token=TOKEN          clients must send it in HELLO           [none]
  --auth-token-file=PATH      the same, read from the first line of a file
  --clients-file=PATH         named clients, their hashed tokens or certificate
                              names and permissions (docs/security.md); with
                              --auth-token, that token is one more client
                              holding every permission              [none]
  --tls-cert=FILE             speak TLS only (the HTTP port HTTPS), with this
                              certificate chain (PEM); also this node's client
                              certificate on its links
                                                                    [none]
  --tls-key=FILE              the certificate's private key (PEM)   [none]
  --tls-ca=FILE               CAs whose client certificates are accepted (mutual
                              TLS; a client whose certificate's CN names a
                              "cert" client needs no token), and whose server
                              certificates this node's links trust  [none]
  --tls-require-client-cert[=true|false]  refuse TLS clients without a
                              certificate from --tls-ca             [false]
  --require-tls[=true|false]  refuse to start unless both ports speak TLS and a
                              client is defined                     [false]
  --link-tls[=true|false]     links to a primary speak TLS  [as --tls-cert]
  --nats-tls-ca=FILE          CAs NATS servers are checked against (tls:// URLs
                              or a NATS server that requires TLS)   [system]
  --nats-tls-cert=FILE        client certificate for NATS (mutual TLS) [none]
  --nats-tls-key=FILE         its key                               [none]
  --io-threads=N              threads serving connections (1..64)   [1]
  --max-connections=N         more are refused with resource_exhausted [10000]
  --max-frame=BYTES           larger frames close the connection    [1048576]
  --max-unsent=BYTES          per connection: stop reading requests while this
                              many reply bytes are unsent           [4194304]
  --send-timeout-ms=MS        a client that reads nothing this long is cut [30000]
  --idle-timeout-ms=MS        a connection without requests this long is closed
                              with a notice                         [300000]
  --shutdown-grace-ms=MS      on SIGINT/SIGTERM, time to finish replies [10000]
  --snapshot-interval-s=S     write a snapshot this often, 0 = never [3600]
  --wal-segment-bytes=BYTES   start a new WAL segment past this size [67108864]
  --keep-snapshots=N          snapshots kept (WAL kept back to the oldest) [2]
  --stream-retention=B[,S]    named cursors hold at most B bytes of WAL that
                              snapshots no longer need, and only if acked within
                              the last S seconds         [1073741824,604800]
  --replica-of=HOST:PORT      run as a read-only replica of that primary: copy
                              its snapshot if needed, then apply its WAL [none]
  --replica-token=TOKEN       the token this node sends to its primary (a client
                              with the replication permission there) [none]
  --resync[=true|false]       a replica that diverged (after a failover) drops its
                              data and copies the primary again      [false]
  --sync-replicas=N           a write is acknowledged only once N replicas hold it
                              durably (use --fsync=always on them); the group's
                              setting, kept in the data directory and copied by
                              replicas, so it survives promotion and restarts;
                              on a replica, a floor for when it is promoted
                              [the group's, else 0]
  --group=NAME                join replication group NAME with automatic failover:
                              its lease in NATS JetStream names the primary; the
                              others follow it (no --replica-of); with --cluster,
                              the group the shard map names for this shard [none]
  --group-nats=URL[,URL...]   the NATS servers holding the group's lease
                              [--cluster's, else nats://127.0.0.1:4222]
  --advertise=HOST:PORT       this node's address for members and clients
                                                       [the --listen address]
  --group-nats-replicas=N     replicas of the lease's bucket when this node
                              creates it (3 on a three-node NATS cluster) [1]
  --group-lease-ms=MS         the lease's TTL: a primary silent this long is
                              replaced                              [1500]
  --group-renew-ms=MS         the primary renews its lease this often [200]
  --group-store-timeout-ms=MS one call to NATS gives up after this   [500]
  --group-fence-margin-ms=MS  a primary stops acknowledging this long before
                              its lease can lapse elsewhere; renew + 2 x store
                              timeout must not exceed lease - margin [300]
  --cluster=nats://HOST:PORT  run as a shard of the cluster whose shard map and
                              stream are on that NATS JetStream (docs/cluster.md); a
                              comma-separated list names several NATS nodes [none]
  --shard-id=N                this shard's id in the map (with --cluster) [none]
  --max-following=N           most users one user may follow        [1000]
  --max-blocks=N              most users one user may block         [100000]
  --hide-blocked-by[=true|false]  relations never say "they block you" [false]
  --follow-time-resolution=1ms|1s  the follow, block and request times kept
                              and answered; 1s takes ~1.8 B an edge less. Fixed
                              for a data directory (docs/design.md) [1ms]
  --rate-limit=C/R|off        follows: bucket of C tokens, R per second [100/1]
  --feed-posts-per-author=K   posts each author keeps               [300]
  --feed-timeline-length=R    posts in a home timeline              [300]
  --feed-celebrity-fans=T     authors with more fans are pulled     [10000]
  --feed-active-days=D        push only to readers of the last D days [7]
  --feed-inbox-budget-mb=MB   memory for materialized inboxes       [1024]
  --feed-fanout-gather-us=US  fan-out waits this long after a publish,
                              so a burst costs one wake-up (0: none) [1000]
  --http=HOST:PORT|off        the HTTP port: /healthz, /readyz, /metrics and
                              the JSON API /v1/ (docs/http.md); a port taken
                              is logged and relgraphd serves on without it
                                                            [127.0.0.1:7780]
  --http-threads=N            the HTTP port's own threads (1..16)       [1]
  --ready-max-lag-ms=MS       /readyz: a replica further behind its primary
                              is not ready                          [10000]
  --slowlog-us=US|off         keep commands taking at least US µs in the
                              slow-command log (SLOWLOG) and log them; 0:
                              every command; -1 or off: none         [10000]
  --slowlog-max-len=N         entries the slow-command log keeps (0..10000) [128]
  --log-level=LEVEL           error, info or debug                  [info]
  --log-format=FORMAT         text, or json: one object per line with ts,
                              level, msg and the line's fields       [text]
  --config=FILE               read keys from FILE first
  --help                      this text
  --version                   relgraphd VERSION
)";
}

}  // namespace relgraph
