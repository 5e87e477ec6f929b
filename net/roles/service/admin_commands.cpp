// CommandService's admin handlers: INFO (the engine's, the server's and the cluster's numbers)
// and SNAPSHOT.
#include "net/roles/service/command_service.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <mutex>

#include "engine/graph/graph.h"
#include "engine/mem/resident.h"
#include "relgraph_build.h"
#include "relgraph_version.h"

namespace relgraph {
namespace {

net::DurabilityCode ToWire(DurabilityMode mode) {
  switch (mode) {
    case DurabilityMode::kAlways:
      return net::DurabilityCode::kAlways;
    case DurabilityMode::kEverySec:
      return net::DurabilityCode::kEverySec;
    case DurabilityMode::kNone:
      return net::DurabilityCode::kNone;
  }
  return net::DurabilityCode::kEverySec;
}

// CPU time this process has used, user and system, in milliseconds.
uint64_t ProcessCpuMs() {
  rusage u{};
  if (::getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<uint64_t>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000 +
         static_cast<uint64_t>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1000;
}

}  // namespace

uint64_t CommandService::OpsPerSecond() {
  // The rate over the last whole window of at least one second, refreshed lazily.
  std::lock_guard lock(rate_mu_);
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - window_start_).count();
  if (seconds >= 1.0) {
    const uint64_t ops = ops_.load(std::memory_order_relaxed);
    last_rate_ = static_cast<uint64_t>(static_cast<double>(ops - window_ops_) / seconds);
    window_ops_ = ops;
    window_start_ = now;
  }
  return last_rate_;
}

Result<net::ShardMapReply> CommandService::ShardMap(const net::ShardMapRequest&, Context&) {
  if (gate_ == nullptr) {
    return Status(Code::kUnsupported, "shard_map: this node is not a shard of a cluster");
  }
  auto text = gate_->MapText();
  if (!text.ok()) return text.status();
  return net::ShardMapReply{std::move(*text)};
}

Result<net::InfoReply> CommandService::Info(const net::InfoRequest&, Context& c) {
  net::InfoReply r;
  auto add = [&r](const char* name, uint64_t value) { r.fields.push_back({name, value}); };
  db_->Read([&](const Graph& g) {
    add("users", g.user_count());
    add("edges", g.edge_count());
    add("memory_bytes", g.Memory().total());
    return 0;
  });
  add("ops_total", ops_.load(std::memory_order_relaxed));
  add("ops_per_sec", OpsPerSecond());
  add("connections", c.stats->connections);
  add("connections_total", c.stats->connections_total);
  add("requests_total", c.stats->requests_total);
  add("uptime_ms", c.stats->uptime_ms);
  add("connection_bytes", c.stats->connection_bytes);
  add("rss_bytes", ResidentBytes());
  add("cpu_ms", ProcessCpuMs());
  add("last_lsn", db_->last_lsn());
  add("durable_lsn", db_->durable_lsn());
  add("durability", static_cast<uint64_t>(ToWire(db_->durability())));
  const auto cursors = db_->Cursors();
  add("cursors", cursors.size());
  add("cursors_expired",
      static_cast<uint64_t>(std::count_if(cursors.begin(), cursors.end(),
                                          [](const Db::CursorInfo& k) { return k.expired; })));
  add("oldest_wal_lsn", db_->OldestWalLsn());
  const auto snapshot = db_->last_snapshot();
  add("last_snapshot_lsn", snapshot ? snapshot->lsn : db_->recovery().snapshot_lsn);
  add("last_snapshot_ms", snapshot ? static_cast<uint64_t>(snapshot->created_ms) : 0);
  add("recovered_records", db_->recovery().replayed_records);
  const FeedStats feed = db_->feed_stats();
  add("posts", feed.posts);
  add("post_bytes", feed.post_bytes);
  add("post_index_bytes", feed.post_index_bytes);
  add("feed_user_bytes", feed.feed_user_bytes);
  add("inboxes", feed.inboxes);
  add("inbox_entries", feed.inbox_entries);
  add("inbox_bytes", feed.inbox_bytes);
  add("celebrities", feed.celebrities);
  add("fanout_queue", feed.fanout_queue);
  add("fanout_inserts", feed.fanout_inserts);
  const Epoch epoch = db_->epoch();
  add("role", replication_->is_replica() ? 1 : 0);
  add("epoch", epoch.number);
  add("replicas", replication_->Replicas().size());
  add("sync_replicas", replication_->sync_replicas());
  const Replication::Link link = replication_->link();
  const uint64_t last = db_->last_lsn();
  add("replica_lag_records",
      replication_->is_replica() && link.primary_lsn > last ? link.primary_lsn - last : 0);
  add("replica_lag_ms", replication_->is_replica() ? link.lag_ms : 0);
  // While the WAL cannot be written: 1 a full disk, 2 another I/O error.
  const Status wal = db_->WalHealth();
  add("writes_refused", wal.ok() ? 0 : 1);
  add("writes_refused_reason", wal.ok() ? 0 : IsNoSpace(wal) ? 1 : 2);
  add("server_version", kVersionNumber);  // major << 32 | minor << 16 | patch
  add("server_build", kBuildNumber);      // the git commit's first 16 hex digits; 0 unknown
  if (gate_ != nullptr) gate_->AddInfo(&r.fields);
  return r;
}

Result<net::SnapshotReply> CommandService::Snapshot(const net::SnapshotRequest&, Context&) {
  auto info = db_->Snapshot();
  if (!info.ok()) return info.status();
  return net::SnapshotReply{info->lsn, info->edges, info->file_bytes, info->created_ms};
}

}  // namespace relgraph
