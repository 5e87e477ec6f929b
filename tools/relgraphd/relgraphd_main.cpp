// relgraphd: opens the data directory (recovering it), serves the protocol until SIGINT or
// SIGTERM, then finishes in-flight requests, flushes the WAL and exits 0.
//
// Exit codes: 0 clean shutdown; 1 a runtime failure (recovery, listen, WAL close); 2 bad usage.
// A stop while the WAL cannot be written (a full disk) is clean when nothing acknowledged is
// lost: under `always`, writes still waiting for their fsync were never acknowledged and are
// dropped (Db::Close); under `everysec` and `none` acknowledged writes are lost: exit 1.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "engine/db.h"
#include "net/roles/cluster/shard_node.h"
#include "net/roles/http/observe_port.h"
#include "net/roles/replication/group_agent.h"
#include "net/roles/replication/group_settings.h"
#include "net/roles/replication/replica_follower.h"
#include "net/roles/replication/role_control.h"
#include "net/roles/service/command_service.h"
#include "net/server/server.h"
#include "relgraph_version.h"
#include "tools/relgraphd/crash_report.h"
#include "tools/relgraphd/daemon_config.h"
#include "tools/relgraphd/daemon_log.h"
#include "tools/relgraphd/daemon_reload.h"
#include "tools/relgraphd/systemd_notify.h"

namespace relgraph {
namespace {

// Writes a snapshot every `interval` seconds until stopped.
class SnapshotScheduler {
 public:
  SnapshotScheduler(Db* db, uint32_t interval_s) : db_(db), interval_(interval_s) {
    if (interval_s > 0) thread_ = std::thread([this] { Loop(); });
  }
  ~SnapshotScheduler() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Loop() {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, interval_, [&] { return stop_; })) {
      lock.unlock();
      auto info = db_->Snapshot();
      if (info.ok()) {
        Log(LogLevel::kInfo, "snapshot at lsn %llu: %llu edges, %llu bytes",
            static_cast<unsigned long long>(info->lsn),
            static_cast<unsigned long long>(info->edges),
            static_cast<unsigned long long>(info->file_bytes));
      } else {
        Log(LogLevel::kError, "scheduled snapshot failed: %s", info.status().ToString().c_str());
      }
      lock.lock();
    }
  }
  Db* const db_;
  const std::chrono::seconds interval_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// Raises the soft limit on open files toward what --max-connections needs (plus files for the
// WAL, snapshots and listening), as far as the hard limit allows; warns when that is short.
void RaiseOpenFileLimit(uint32_t max_connections) {
  const rlim_t want = rlim_t{max_connections} + 64;
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= want) return;
  const rlim_t target = lim.rlim_max == RLIM_INFINITY ? want : std::min(want, lim.rlim_max);
  if (target > lim.rlim_cur) {
    lim.rlim_cur = target;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  if (target < want) {
    Log(LogLevel::kError,
        "open-file limit %llu is below --max-connections + 64 = %llu: raise it (ulimit -n, "
        "LimitNOFILE) or connections past it will be refused by the kernel",
        static_cast<unsigned long long>(target), static_cast<unsigned long long>(want));
  }
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// A port others can reach, without TLS or without clients, is said loudly at start;
// --require-tls refuses to start unless both ports speak TLS and a client is defined.
bool CheckExposure(const DaemonConfig& config) {
  const bool tls = config.server.tls.enabled();
  const bool clients = !config.server.auth_token.empty() || !config.server.clients_file.empty();
  if (config.require_tls && (!tls || !clients)) {
    Log(LogLevel::kError, "--require-tls: %s (docs/security.md)",
        !tls ? "give --tls-cert and --tls-key" : "define a client: --clients-file or --auth-token");
    return false;
  }
  const bool exposed = !IsLoopback(config.server.host) ||
                       (config.http && !IsLoopback(config.http_host));
  if (exposed && (!tls || !clients)) {
    Log(LogLevel::kError,
        "WARNING: listening on %s:%u%s %s: %s. Anyone who can reach the port can read "
        "and change the whole graph. See docs/security.md; --require-tls refuses this.",
        config.server.host.c_str(), static_cast<unsigned>(config.server.port),
        config.http ? (" and HTTP " + config.http_host + ":" + std::to_string(config.http_port)).c_str() : "",
        !tls && !clients ? "without TLS and without clients"
                         : !tls ? "without TLS" : "without clients",
        !tls ? "tokens, user ids and follows travel in clear text"
             : "every connection gets every permission");
  }
  return true;
}

// The group agent's settings from the flags.
GroupAgentOptions GroupOptionsOf(const DaemonConfig& config, const std::string& advertise) {
  GroupAgentOptions go;
  go.group = config.group;
  go.address = advertise;
  go.store.nats_urls = config.group_nats;
  go.store.replicas = static_cast<int>(config.group_nats_replicas);
  go.store.op_timeout = config.group_store_timeout;
  go.lease_ttl = config.group_lease;
  go.renew_interval = config.group_renew;
  go.poll_interval = std::min(config.group_renew, std::chrono::milliseconds(20));
  go.fence_margin = config.group_fence_margin;
  go.log = [](const std::string& line) { Log(LogLevel::kInfo, "group %s", line.c_str()); };
  return go;
}

int Main(int argc, char** argv) {
  InstallCrashReport();
  SighupReloader reloader;  // first: SIGHUP stays blocked in every thread started after it
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto config = ParseDaemonConfig(args);
  if (!config.ok()) {
    Log(LogLevel::kError, "%s", config.status().ToString().c_str());
    return 2;
  }
  if (config->help) {
    std::fputs(DaemonUsage().c_str(), stdout);
    return 0;
  }
  if (config->version) {
    std::printf("relgraphd %s\n", kVersion);
    return 0;
  }
  SetLog(config->log_level, config->log_format);
  RaiseOpenFileLimit(config->server.max_connections);

  if (!config->cluster.empty() && config->shard_id == 0) {
    Log(LogLevel::kError, "--cluster needs --shard-id (this shard's id in the map)");
    return 2;
  }
  if (!config->cluster.empty() && !config->replica_of.empty()) {
    Log(LogLevel::kError,
        "a shard's replica is a member of the shard's replication group: "
        "give --group (the group the shard map names) instead of --replica-of "
        "(docs/cluster.md, \"Shard replicas\")");
    return 2;
  }
  if (!config->cluster.empty() && config->db.feed.posts_per_author > kMaxPostsPerRecord) {
    // A first fan's back-fill carries an author's retained posts in one WAL record.
    Log(LogLevel::kError,
        "a cluster shard keeps at most %u posts per author (posts_per_author "
        "is %u)",
        kMaxPostsPerRecord, config->db.feed.posts_per_author);
    return 2;
  }
  if (!config->group.empty() && !config->replica_of.empty()) {
    Log(LogLevel::kError,
        "a group member follows whomever the group's lease names: drop "
        "--replica-of");
    return 2;
  }
  if (config->group_nats.empty()) {
    config->group_nats = config->cluster.empty() ? "nats://127.0.0.1:4222" : config->cluster;
  }
  if (!CheckExposure(*config)) return 2;
  net::SetNatsTls({config->nats_tls_ca, config->nats_tls_cert, config->nats_tls_key});
  if (!config->group.empty()) {
    if (Status s = CheckGroupTiming(GroupOptionsOf(*config, "(this node)")); !s.ok()) {
      Log(LogLevel::kError, "%s", s.message().c_str());
      return 2;
    }
    if (config->server.host == "0.0.0.0" && config->advertise.empty()) {
      Log(LogLevel::kError,
          "listening on 0.0.0.0: give --advertise=HOST:PORT, the "
          "address the group's members and clients reach this node at");
      return 2;
    }
  }
  if (config->resync && config->replica_of.empty()) {
    Log(LogLevel::kError, "--resync needs --replica-of");
    return 2;
  }
  // The HTTP port first: /healthz answers and /readyz says "recovering" while the data
  // directory is opened. Its own thread; a port taken costs the port, not the server.
  ObservePortOptions oo;
  oo.http.host = config->http_host;
  oo.http.port = config->http_port;
  oo.http.threads = config->http_threads;
  oo.http.tls = config->server.tls;  // HTTPS with the binary port's certificate (docs/http.md)
  oo.ready_max_lag_ms = config->ready_max_lag_ms;
  ObservePort observe(oo);
  if (config->http) {
    if (Status s = observe.Start(); !s.ok()) {
      Log(LogLevel::kError, "no HTTP port: %s", s.ToString().c_str());
    } else {
      Log(LogLevel::kInfo, "%s on %s:%u (/healthz, /readyz, /metrics, /v1/ JSON API)",
          oo.http.tls.enabled() ? "HTTPS" : "HTTP", config->http_host.c_str(),
          static_cast<unsigned>(observe.port()));
    }
  }
  // The replication group's sync_replicas outlives the process (docs/replication.md).
  auto group = LoadGroupSettings(Env::Posix(), config->data_dir);
  if (!group.ok()) {
    Log(LogLevel::kError, "%s", group.status().ToString().c_str());
    return 1;
  }
  const bool group_member = !config->group.empty();
  const bool replica = !config->replica_of.empty() || group_member;
  // A primary's flag sets the group's value; a replica's is its floor once promoted.
  const uint32_t floor = replica ? config->sync_replicas.value_or(0) : 0;
  uint32_t sync_replicas = !replica && config->sync_replicas
                               ? *config->sync_replicas
                               : std::max(floor, group->value_or(GroupSettings{}).sync_replicas);
  // Synchronous replicas wait per write, so every write needs its LSN as a ticket; a replica
  // may be promoted, and may learn a nonzero setting from its primary at any time.
  config->db.report_commit_lsn = sync_replicas > 0 || replica;
  // A WAL that cannot be written (a full disk) is logged when it happens and when it is over.
  config->db.on_wal_event = [](const WalEvent& e) {
    Log(e.kind == WalEvent::Kind::kResumed ? LogLevel::kInfo : LogLevel::kError, "%s",
        e.message.c_str());
  };
  Log(LogLevel::kInfo, "opening %s (fsync %s)", config->data_dir.c_str(),
      DurabilityModeName(config->db.durability));
  auto db = Db::Open(config->data_dir, config->db);
  if (!db.ok()) {
    Log(LogLevel::kError, "cannot open %s: %s", config->data_dir.c_str(),
        db.status().ToString().c_str());
    return 1;
  }
  const RecoveryInfo& r = (*db)->recovery();
  for (const std::string& skipped : r.skipped_snapshots) {
    Log(LogLevel::kError, "skipped snapshot %s (an older one and the WAL serve)", skipped.c_str());
  }
  Log(LogLevel::kInfo,
      "recovered lsn %llu: snapshot '%s' (%llu edges) + %llu WAL records in %.2f s",
      static_cast<unsigned long long>(r.last_lsn), r.snapshot_file.c_str(),
      static_cast<unsigned long long>(r.snapshot_edges),
      static_cast<unsigned long long>(r.replayed_records), r.seconds);

  Replication replication(sync_replicas);
  replication.SetSyncReplicasFloor(floor);
  const auto save_group = [dir = config->data_dir](uint32_t n) {
    if (Status s = SaveGroupSettings(Env::Posix(), dir, GroupSettings{n}); !s.ok()) {
      Log(LogLevel::kError, "cannot save the group's sync_replicas: %s", s.ToString().c_str());
      return;
    }
    Log(LogLevel::kInfo, "replication group: sync_replicas %u", n);
  };
  if (!group->has_value() || (*group)->sync_replicas != sync_replicas) save_group(sync_replicas);
  replication.SetOnGroupChange(save_group);
  // A group member starts read-only, following nobody, until its lease says what it is.
  if (replica) replication.SetReplicaOf(config->replica_of);
  CommandService service(db->get(), &replication);
  std::unique_ptr<ShardNode> shard;
  if (!config->cluster.empty()) {
    ShardNodeOptions so;
    so.nats_url = config->cluster;
    so.shard_id = config->shard_id;
    so.broadcast_fans = config->db.feed.celebrity_fans;
    so.data_dir = config->data_dir;  // the last shard map seen is kept there
    so.log = [](const std::string& line) { Log(LogLevel::kError, "cluster %s", line.c_str()); };
    so.group = config->group;  // the shard's outbox, inbox and mover run on its primary
    if (group_member) {
      so.commit_wait = [&replication](uint64_t lsn) { return replication.WaitReplicated(lsn); };
    }
    shard = std::make_unique<ShardNode>(db->get(), so);
    const auto join_started = std::chrono::steady_clock::now();
    if (Status s = shard->Start(); !s.ok()) {
      Log(LogLevel::kError, "cannot join the cluster at %s as shard %u: %s",
          config->cluster.c_str(), config->shard_id, s.ToString().c_str());
      return 1;
    }
    service.SetClusterGate(shard.get());
    // How long NATS took to answer: a start that waits on a JetStream cluster still electing
    // its leaders can take tens of seconds, each request up to its timeout.
    const double join_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - join_started).count();
    Log(LogLevel::kInfo, "shard %u of the cluster at %s (shard map version %llu, %.2f s)%s",
        config->shard_id, config->cluster.c_str(),
        static_cast<unsigned long long>(shard->stats().map_version), join_s,
        shard->joined() ? "" : ", not joined yet: NATS does not answer (INFO cluster_joined)");
  }
  config->server.on_slow_command = [](const net::SlowlogEntry& e) {
    LogLine(LogLevel::kInfo, "slow command",
            {{"command", e.command},
             {"duration_us", std::to_string(e.duration_us), true},
             {"client", e.client},
             {"args", e.args}});
  };
  config->server.on_security_event = [](const std::string& line) {
    Log(LogLevel::kInfo, "security: %s", line.c_str());
  };
  net::Server server(config->server, &service);
  if (Status s = server.Start(); !s.ok()) {
    Log(LogLevel::kError, "%s", s.ToString().c_str());
    return 1;
  }
  // SIGHUP reads the HTTP port's certificate again with the binary port's.
  reloader.OnSecurityReload([&](const DaemonConfig& c) { return observe.ReloadTls(c.server.tls); });
  reloader.Start(args, *config, &server);  // SIGHUP: daemon_reload.h
  Log(LogLevel::kInfo, "listening on %s:%u%s%s", config->server.host.c_str(),
      static_cast<unsigned>(server.port()),
      config->server.tls.enabled() ? " over TLS" : "",
      server.Authenticate("").ok() ? " (no clients defined: anyone may do anything)" : "");
  // The address members and clients reach this node at.
  const std::string advertise = !config->advertise.empty()
                                    ? config->advertise
                                    : config->server.host + ":" + std::to_string(server.port());
  FollowerOptions fo;
  fo.primary.token = config->replica_token;
  fo.primary.tls = LinkTlsOf(*config);
  fo.name = advertise;
  fo.resync_when_diverged = group_member;  // a group saves a diverged tail and resyncs
  if (group_member) fo.silence_timeout = config->group_lease;
  fo.log = [](const std::string& line) { Log(LogLevel::kInfo, "replication %s", line.c_str()); };
  RoleControl role(db->get(), &replication, fo);
  replication.SetRoleChanger(&role);
  if (shard && group_member) role.SetRoleObserver([&shard](bool p) { shard->SetPrimary(p); });
  std::unique_ptr<GroupAgent> agent;
  if (group_member) {
    GroupAgentOptions go = GroupOptionsOf(*config, advertise);
    agent = std::make_unique<GroupAgent>(db->get(), &replication, &role, go);
    replication.SetRoleChanger(agent.get());
    agent->Start();
    Log(LogLevel::kInfo, "member %s of group %s (lease in %s, TTL %lld ms)", advertise.c_str(),
        config->group.c_str(), config->group_nats.c_str(),
        static_cast<long long>(config->group_lease.count()));
  } else if (!config->replica_of.empty()) {
    if (Status s = role.Follow(config->replica_of, config->resync); !s.ok()) {
      Log(LogLevel::kError, "%s", s.ToString().c_str());
      return 2;
    }
    Log(LogLevel::kInfo, "replica of %s (epoch %llu, lsn %llu)%s", config->replica_of.c_str(),
        static_cast<unsigned long long>((*db)->epoch().number),
        static_cast<unsigned long long>((*db)->last_lsn()),
        config->resync ? ": resynchronizing from its snapshot" : "");
  }
  observe.Attach(db->get(), &service, &server, &replication);
  struct DetachObserve {  // before what it reports on goes away, whichever return is taken
    ObservePort* port;
    ~DetachObserve() { port->Detach(); }
  } detach_observe{&observe};
  // Under systemd (Type=notify), the unit is started once the data is recovered and the
  // port accepts connections.
  const std::string ready = "READY=1\nSTATUS=serving on " + config->server.host + ":" +
                            std::to_string(server.port()) + " at lsn " +
                            std::to_string((*db)->last_lsn());
  if (Status s = NotifySystemd(ready); !s.ok()) Log(LogLevel::kError, "%s", s.ToString().c_str());
  Status closed;
  {
    SnapshotScheduler snapshots(db->get(), config->snapshot_interval_s);
    closed = server.Wait();  // returns after SIGINT/SIGTERM and a drained shutdown
  }
  reloader.Stop();
  NotifySystemd("STOPPING=1\nSTATUS=flushing and stopping").IgnoreError();
  if (agent) agent->Stop(/*release=*/true);  // a member takes over at once
  role.Stop();
  replication.Stop();  // a shard's threads waiting for the group end first
  if (shard) shard->Stop();
  if (!closed.ok()) {
    Log(LogLevel::kError, "closing the WAL failed: %s", closed.ToString().c_str());
    return 1;
  }
  Log(LogLevel::kInfo, "stopped cleanly at lsn %llu",
      static_cast<unsigned long long>((*db)->durable_lsn()));  // what a restart recovers
  return 0;
}

}  // namespace
}  // namespace relgraph

int main(int argc, char** argv) {
  return relgraph::Main(argc, argv);
}
