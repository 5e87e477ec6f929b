#include "net/roles/http/metrics_page.h"

#include <map>

#include "net/http/prometheus_text.h"
#include "net/protocol/protocol.h"
#include "storage/wal/wal_writer.h"

namespace relgraph {
namespace {

constexpr double kMs = 0.001;

// The families of a page, each written once with all its samples even when they are gathered
// from several places (relgraph_memory_bytes from INFO and from the graph's parts).
class Families {
 public:
  using LabelPairs = std::vector<std::pair<std::string, std::string>>;
  struct Sample {
    LabelPairs labels;
    double value;
  };
  void Add(std::string_view name, std::string_view type, std::string_view help,
           LabelPairs labels, double value) {
    auto [it, fresh] = index_.try_emplace(std::string(name), families_.size());
    if (fresh) families_.push_back({std::string(name), std::string(type), std::string(help), {}});
    families_[it->second].samples.push_back({std::move(labels), value});
  }
  void WriteTo(net::PrometheusText* out) const {
    for (const Family& f : families_) {
      out->Family(f.name, f.type, f.help);
      for (const Sample& s : f.samples) {
        std::vector<net::Label> labels;
        for (const auto& [k, v] : s.labels) labels.push_back({k, v});
        const double whole = static_cast<double>(static_cast<uint64_t>(s.value));
        if (s.value >= 0 && s.value < 1.8e19 && whole == s.value) {
          out->Sample(f.name, labels, static_cast<uint64_t>(s.value));
        } else {
          out->Sample(f.name, labels, s.value);
        }
      }
    }
  }

 private:
  struct Family {
    std::string name, type, help;
    std::vector<Sample> samples;
  };
  std::map<std::string, size_t> index_;
  std::vector<Family> families_;
};

using LabelPairs = std::vector<std::pair<std::string, std::string>>;
LabelPairs L(std::string_view k, std::string_view v) { return {{std::string(k), std::string(v)}}; }
LabelPairs L(std::string_view k1, std::string_view v1, std::string_view k2, std::string_view v2) {
  return {{std::string(k1), std::string(v1)}, {std::string(k2), std::string(v2)}};
}

uint64_t Field(const std::vector<net::InfoField>& info, std::string_view name, uint64_t def = 0) {
  for (const auto& f : info) {
    if (f.name == name) return f.value;
  }
  return def;
}

// A request's name; "unknown" for the opcodes no client sends (the server's pushed frames).
std::string_view Name(size_t opcode) {
  const std::string_view name = net::OpcodeName(static_cast<uint8_t>(opcode));
  if (name == "notice" || name == "events" || name == "snapshot_data" || name == "records") {
    return "unknown";
  }
  return name;
}

template <size_t N>
std::vector<double> Seconds(const std::array<uint64_t, N>& bounds_ns) {
  std::vector<double> s;
  for (uint64_t ns : bounds_ns) s.push_back(static_cast<double>(ns) * 1e-9);
  return s;
}

}  // namespace

const std::vector<InfoMetric>& InfoMetrics() {
  static const std::vector<InfoMetric> table = {
      {"users", "relgraph_users", "gauge", "", 1, "Users in the graph."},
      {"edges", "relgraph_edges", "gauge", "", 1, "Follow edges in the graph."},
      {"memory_bytes", "", "", "", 1,
       "left out: the sum of relgraph_memory_bytes' graph parts (id_map ... access)"},
      {"ops_total", "relgraph_engine_operations_total", "counter", "", 1,
       "Commands the engine executed."},
      {"ops_per_sec", "", "", "", 1, "left out: rate(relgraph_engine_operations_total[1m])"},
      {"connections", "relgraph_connections", "gauge", "", 1, "Client connections open now."},
      {"connections_total", "relgraph_connections_accepted_total", "counter", "", 1,
       "Client connections accepted."},
      {"requests_total", "relgraph_requests_total", "counter", "", 1,
       "Request frames the server executed."},
      {"uptime_ms", "relgraph_uptime_seconds", "gauge", "", kMs, "Time since the server started."},
      {"connection_bytes", "relgraph_memory_bytes", "gauge", "part=connections", 1,
       "Memory by part: the graph's parts, the feed's, and open connections' buffers."},
      {"rss_bytes", "relgraph_resident_memory_bytes", "gauge", "", 1,
       "Resident memory of the process."},
      {"cpu_ms", "relgraph_cpu_seconds_total", "counter", "", kMs,
       "CPU time of the process, user and system."},
      {"last_lsn", "relgraph_wal_last_lsn", "gauge", "", 1, "The newest LSN logged."},
      {"durable_lsn", "relgraph_wal_durable_lsn", "gauge", "", 1, "The newest LSN fsynced."},
      {"durability", "", "", "", 1, "left out: a setting (--fsync), not a measure"},
      {"cursors", "relgraph_cursors", "gauge", "", 1, "Named cursors of the change stream."},
      {"cursors_expired", "relgraph_cursors_expired", "gauge", "", 1,
       "Named cursors whose position the WAL no longer holds."},
      {"oldest_wal_lsn", "relgraph_wal_oldest_lsn", "gauge", "", 1, "The oldest LSN the WAL holds."},
      {"last_snapshot_lsn", "relgraph_snapshot_lsn", "gauge", "", 1,
       "The LSN of the newest snapshot."},
      {"last_snapshot_ms", "relgraph_snapshot_timestamp_seconds", "gauge", "", kMs,
       "When the newest snapshot written by this process was made (Unix time; 0 none)."},
      {"recovered_records", "relgraph_recovered_records", "gauge", "", 1,
       "WAL records replayed at start."},
      {"posts", "relgraph_posts", "gauge", "", 1, "Posts retained."},
      {"post_bytes", "relgraph_memory_bytes", "gauge", "part=posts", 1, ""},
      {"post_index_bytes", "relgraph_memory_bytes", "gauge", "part=post_index", 1, ""},
      {"feed_user_bytes", "relgraph_memory_bytes", "gauge", "part=feed_users", 1, ""},
      {"inboxes", "relgraph_inboxes", "gauge", "", 1, "Home-timeline inboxes."},
      {"inbox_entries", "relgraph_inbox_entries", "gauge", "", 1, "Entries in the inboxes."},
      {"inbox_bytes", "relgraph_memory_bytes", "gauge", "part=inboxes", 1, ""},
      {"celebrities", "relgraph_celebrities", "gauge", "", 1,
       "Authors whose posts are pulled at read time."},
      {"fanout_queue", "relgraph_fanout_queue", "gauge", "", 1,
       "Publishes and deletes whose fan-out has not finished."},
      {"fanout_inserts", "relgraph_fanout_inserts_total", "counter", "", 1,
       "Inbox entries written by the fan-out."},
      {"role", "relgraph_replication_replica", "gauge", "", 1,
       "The replication role: 1 a replica, 0 a primary."},
      {"epoch", "relgraph_replication_epoch", "gauge", "", 1, "The replication epoch."},
      {"replicas", "relgraph_replication_replicas", "gauge", "", 1,
       "Replicas streaming from this node."},
      {"sync_replicas", "relgraph_replication_sync_replicas", "gauge", "", 1,
       "Replicas that must hold a write before its reply."},
      {"replica_lag_records", "relgraph_replication_lag_records", "gauge", "", 1,
       "A replica: records its primary logged that it has not applied."},
      {"replica_lag_ms", "relgraph_replication_lag_seconds", "gauge", "", kMs,
       "A replica: how old the newest frame it applied was while it lagged."},
      {"writes_refused", "relgraph_wal_writes_refused", "gauge", "", 1,
       "1 while the WAL cannot be written and writes are refused."},
      {"writes_refused_reason", "relgraph_wal_writes_refused_reason", "gauge", "", 1,
       "Why writes are refused: 0 they are not, 1 a full disk, 2 another I/O error."},
      {"server_version", "", "", "", 1, "left out: relgraph_build_info's version label"},
      {"server_build", "", "", "", 1, "left out: relgraph_build_info's build label"},
      {"cluster_shard_id", "relgraph_cluster_shard_id", "gauge", "", 1, "This shard's id."},
      {"cluster_joined", "relgraph_cluster_joined", "gauge", "", 1,
       "1 once the shard has joined its cluster."},
      {"cluster_active", "relgraph_cluster_active", "gauge", "", 1,
       "1 while the shard's outbox, inbox and mover run (its group's primary)."},
      {"cluster_map_version", "relgraph_cluster_map_version", "gauge", "", 1,
       "The shard map's version."},
      {"cluster_map_generation", "relgraph_cluster_map_generation", "gauge", "", 1,
       "The shard map's generation."},
      {"cluster_map_digest", "", "", "", 1, "left out: an identity, not a measure"},
      {"cluster_forwarded_lsn", "relgraph_cluster_forwarded_lsn", "gauge", "", 1,
       "The newest LSN the outbox has sent on."},
      {"cluster_messages_sent", "relgraph_cluster_messages_sent_total", "counter", "", 1,
       "Messages the outbox sent."},
      {"cluster_records_sent", "relgraph_cluster_records_sent_total", "counter", "", 1,
       "Records the outbox sent."},
      {"cluster_messages_applied", "relgraph_cluster_messages_applied_total", "counter", "", 1,
       "Messages the inbox applied."},
      {"cluster_records_applied", "relgraph_cluster_records_applied_total", "counter", "", 1,
       "Records the inbox applied."},
      {"cluster_records_skipped", "relgraph_cluster_records_skipped_total", "counter", "", 1,
       "Records the inbox skipped (already applied)."},
      {"cluster_messages_rejected", "relgraph_cluster_messages_rejected_total", "counter", "", 1,
       "Messages the inbox rejected."},
      {"cluster_messages_filled", "relgraph_cluster_messages_filled_total", "counter", "", 1,
       "Messages the inbox filled in."},
      {"cluster_post_conflicts", "relgraph_cluster_post_conflicts_total", "counter", "", 1,
       "Post id conflicts between shards."},
      {"cluster_inbound_pending", "relgraph_cluster_inbox_pending", "gauge", "", 1,
       "Messages waiting in JetStream for this shard's inbox (2^64-1: JetStream did not answer)."},
      {"cluster_inbound_delay_ms", "relgraph_cluster_inbox_delay_seconds", "gauge", "", kMs,
       "How old the newest message the inbox applied was."},
      {"cluster_outbox_map_version", "relgraph_cluster_outbox_map_version", "gauge", "", 1,
       "The shard map version the outbox routes by."},
      {"cluster_outbox_map_generation", "relgraph_cluster_outbox_map_generation", "gauge", "", 1,
       "The shard map generation the outbox routes by."},
      {"cluster_inbox_held", "relgraph_cluster_inbox_held", "gauge", "", 1,
       "1 while the inbox is held (a bucket move)."},
      {"cluster_moves_exported", "relgraph_cluster_moves_exported_total", "counter", "", 1,
       "Buckets moved out of this shard."},
      {"cluster_moves_imported", "relgraph_cluster_moves_imported_total", "counter", "", 1,
       "Buckets moved into this shard."},
      {"cluster_foreign_dropped", "relgraph_cluster_foreign_dropped_total", "counter", "", 1,
       "Records about users of other shards dropped."},
  };
  return table;
}

std::string MetricsPage(const MetricsInputs& in) {
  Families f;
  // ---- INFO's fields, as the table says ----
  std::map<std::string_view, const InfoMetric*> rows;
  for (const InfoMetric& m : InfoMetrics()) rows[m.field] = &m;
  std::map<std::string_view, std::string_view> help;  // a family's help, from any of its rows
  for (const InfoMetric& m : InfoMetrics()) {
    if (!m.metric.empty() && !m.help.empty()) help.try_emplace(m.metric, m.help);
  }
  const MemoryUsage& g = in.graph_memory;
  const std::pair<const char*, size_t> graph_parts[] = {
      {"id_map", g.id_map},         {"user_records", g.user_records},
      {"edge_blocks", g.edge_blocks}, {"fan_index", g.fan_index},
      {"rate_limiter", g.rate_limiter}, {"access", g.access}};
  for (const auto& [part, bytes] : graph_parts) {
    f.Add("relgraph_memory_bytes", "gauge", help["relgraph_memory_bytes"], L("part", part),
          static_cast<double>(bytes));
  }
  for (const net::InfoField& field : in.info) {
    const auto it = rows.find(field.name);
    if (it == rows.end() || it->second->metric.empty()) continue;
    const InfoMetric& m = *it->second;
    LabelPairs labels;
    if (!m.label.empty()) {
      const size_t eq = m.label.find('=');
      labels = L(m.label.substr(0, eq), m.label.substr(eq + 1));
    }
    f.Add(m.metric, m.type, help[m.metric], labels, static_cast<double>(field.value) * m.scale);
  }
  // ---- derived from INFO ----
  const uint64_t last_lsn = Field(in.info, "last_lsn");
  const uint64_t snapshot_ms = Field(in.info, "last_snapshot_ms");
  if (snapshot_ms != 0 && in.now_ms >= snapshot_ms) {
    f.Add("relgraph_snapshot_age_seconds", "gauge",
          "Time since the newest snapshot written by this process (absent: none yet).", {},
          static_cast<double>(in.now_ms - snapshot_ms) * kMs);
  }
  if (Field(in.info, "cluster_joined", UINT64_MAX) != UINT64_MAX) {
    const uint64_t forwarded = Field(in.info, "cluster_forwarded_lsn");
    f.Add("relgraph_cluster_outbox_pending_records", "gauge",
          "Records logged here that the outbox has not sent on yet.", {},
          static_cast<double>(last_lsn > forwarded ? last_lsn - forwarded : 0));
  }
  // ---- storage ----
  const WalStats& w = in.storage.wal;
  f.Add("relgraph_wal_appends_total", "counter", "Records appended to the WAL.", {},
        static_cast<double>(w.appends));
  f.Add("relgraph_wal_appended_bytes_total", "counter", "Bytes appended to the WAL.", {},
        static_cast<double>(w.appended_bytes));
  f.Add("relgraph_wal_segments", "gauge", "Segment files the WAL holds.", {},
        static_cast<double>(in.storage.wal_segments));
  f.Add("relgraph_snapshot_last_duration_seconds", "gauge",
        "How long the newest snapshot written by this process took (0: none yet).", {},
        static_cast<double>(in.storage.last_snapshot_us) * 1e-6);
  // ---- named cursors ----
  for (const Db::CursorInfo& c : in.cursors) {
    f.Add("relgraph_cursor_lag_records", "gauge",
          "Per named cursor: records logged past its acknowledged position.",
          L("cursor", c.name),
          static_cast<double>(last_lsn > c.acked_lsn ? last_lsn - c.acked_lsn : 0));
  }
  for (const Db::CursorInfo& c : in.cursors) {
    f.Add("relgraph_cursor_ack_age_seconds", "gauge",
          "Per named cursor: time since its consumer last acknowledged.",
          L("cursor", c.name),
          c.acked_ms <= 0 || in.now_ms < static_cast<uint64_t>(c.acked_ms)
              ? 0.0
              : (in.now_ms - static_cast<uint64_t>(c.acked_ms)) * kMs);
  }
  // ---- the commands ----
  if (in.commands != nullptr) {
    const net::CommandMetrics& cm = *in.commands;
    f.Add("relgraph_received_bytes_total", "counter", "Bytes read from clients.", {},
          static_cast<double>(cm.bytes_in));
    f.Add("relgraph_sent_bytes_total", "counter", "Bytes written to clients.", {},
          static_cast<double>(cm.bytes_out));
    f.Add("relgraph_slow_commands_total", "counter",
          "Commands the slow-command log kept: at least --slowlog-us long (SLOWLOG).", {},
          static_cast<double>(cm.slow_commands));
    for (size_t op = 0; op < cm.commands.size(); ++op) {
      if (Name(op) == "unknown") continue;
      f.Add("relgraph_commands_total", "counter", "Requests by command.",
            L("command", Name(op)), static_cast<double>(cm.commands[op].requests));
    }
    for (size_t op = 0; op < cm.commands.size(); ++op) {
      if (Name(op) == "unknown") continue;
      for (size_t code = 1; code < net::kErrorCodes; ++code) {
        const uint64_t n = cm.commands[op].errors[code];
        if (n == 0) continue;
        f.Add("relgraph_command_errors_total", "counter",
              "Error replies by command and error code (docs/protocol.md).",
              L("command", Name(op), "code", CodeName(static_cast<Code>(code))),
              static_cast<double>(n));
      }
    }
  }
  f.Add("relgraph_build_info", "gauge", "The server's version and build (1).",
        L("version", in.version, "build", in.build), 1);

  net::PrometheusText out;
  f.WriteTo(&out);
  // ---- histograms: written as they are ----
  if (in.commands != nullptr) {
    const std::vector<double> bounds = Seconds(net::kLatencyBoundsNs);
    bool first = true;
    for (size_t op = 0; op < in.commands->commands.size(); ++op) {
      const net::CommandCounts& c = in.commands->commands[op];
      // HELLO is counted, not timed (once per connection).
      if (c.requests == 0 || Name(op) == "unknown" || Name(op) == "hello") {
        continue;
      }
      if (first) {
        out.Family("relgraph_command_duration_seconds", "histogram",
                   "Time the server spent on a request, by command (a batch of pipelined writes "
                   "shares its time equally).");
        first = false;
      }
      const net::Label label{"command", Name(op)};
      out.Histogram("relgraph_command_duration_seconds", net::Labels(&label, 1), bounds,
                    c.buckets, static_cast<double>(c.latency_ns) * 1e-9);
    }
  }
  out.Family("relgraph_wal_fsync_duration_seconds", "histogram",
             "Time of the WAL's fsyncs of its segment files.");
  out.Histogram("relgraph_wal_fsync_duration_seconds", {}, Seconds(kFsyncBoundsNs),
                w.fsync_buckets, static_cast<double>(w.fsync_ns) * 1e-9);
  return out.Take();
}

}  // namespace relgraph
