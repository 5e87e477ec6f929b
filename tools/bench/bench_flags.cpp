#include "tools/bench/bench_flags.h"

#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

#include "engine/graph/time_resolution.h"
#include "net/tls/tls_flags.h"
#include "tools/bench/access_workloads.h"
#include "tools/bench/design_workloads.h"
#include "tools/bench/durability_workloads.h"
#include "tools/bench/feed_workloads.h"
#include "tools/bench/server_workloads.h"
#include "tools/bench/stall_workloads.h"
#include "tools/bench/workloads.h"

namespace relgraph::bench {
namespace {

bool ParseUint(const std::string& s, uint64_t* out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = std::strtoull(s.c_str(), nullptr, 10);
  return true;
}

}  // namespace

const char* const kUsage = R"(usage: relgraph-bench [flags]

Loads a follow graph into relgraph and measures workloads, one row each.

  --target=embedded      where to run: embedded (the in-process engine; the durability
                         workloads run a Db on local disk), server (relgraphd over TCP, see
                         below), redis://HOST:PORT (the Redis sorted-set design) or
                         postgres://USER@HOST:PORT/DB (the relational design on PostgreSQL);
                         docs/comparison.md describes both designs; scale-build and
                         scale-server are the halves of tools/scale-run.sh (below)
  --edges=N              edges to generate (default 10000000)
  --seed=S               generator and sampling seed (default 1)
  --dataset=PATH         load a SNAP edge list (plain or .gz) instead of generating
  --id-offset=N          add N to every id of --dataset (use 1 for 0-based files; default 0)
  --max-following=N      the follow cap (default 1000)
  --reciprocity=F        the fraction of generated edges that are mutual, 0 to 0.9
                         (default 0.22, Twitter's; tools/bench/graph_shape.h)
  --follow-times=bursty|even
                         generated follow times: sessions and popular moments, edges
                         arriving in time order (default); or evenly spaced over ten years,
                         edges in random order (the earlier generator)
  --follow-time-resolution=1ms|1s
                         the times the embedded graph keeps (default 1ms; relgraphd's flag
                         of that name)
  --workloads=a,b,...    subset to run (default: all), from
                         graph:      load relation relations_batch following_page fans_page_deep
                                     friends_page counts known_followers churn layout_bound
                                     (layout_bound: the fewest bytes per edge any encoding
                                     of the loaded graph can take, beside what it takes)
                         durability: wal_off wal_none wal_everysec wal_always wal_always_concurrent
                                     snapshot recovery_wal stream_read replica_apply import
                                     first_touch (what writing fresh memory costs here)
                                     id_growth (the id index's growth on a 40M-user map)
                         feed:       publish fanout timeline_first_page timeline_deep_page
                                     timeline_heavy_reader
                         access:     block relation_blocked unblock follow_request approve
                                     reject block_celebrity go_public (run last: they
                                     change the graph)
                         pauses:     remove_user_pause go_public_pause export_bucket_pause
                                     (each on a Db of its own: a writer's longest wait
                                     while one command runs)
  --ops=N                operations per query workload (default 2000000)
  --wal-ops=N            follows per wal_* workload (default 1000000; wal_always: 2000)
  --writers=N            threads of wal_always_concurrent (default 256)
  --feed-readers=N       active readers of the feed workloads (default 1000000)
  --feed-posts=N         posts of the publish workload (default 1000000)
  --data-dir=DIR         scratch directory for durability workloads (default: a new one in
                         /tmp, removed at the end; a given one is left in place)
  --format=text|csv      output format (default text)
  --help                 this text
  --version              relgraph-bench VERSION
  --open-only=DIR        internal: open DIR as a Db, print "<edges> <seconds>", exit (the
                         snapshot workload runs its recovery_snapshot_restart row this way)

Over TCP (--target=server, redis://..., postgres://...):
  --server=HOST:PORT     relgraphd (default 127.0.0.1:7707); start it with --rate-limit=off,
                         or `load` is throttled
  --token=TOKEN          its auth token, if it has one
  --tls, --tls-ca=FILE, --tls-cert=FILE, --tls-key=FILE, --tls-server-name=NAME,
  --tls-insecure         connect over TLS (docs/security.md)
  --connections=N        client connections of the pipelined rows (default 4)
  --pipeline=D           operations per round trip of the pipelined rows (default 64)
  --latency-ops=N        operations of each *_unpipelined row (default 50000)
  --no-load              the server already holds the graph (the same --edges/--seed or
                         --dataset): skip `load`, still read its memory
  rows of every target, each also as <row>_unpipelined (one connection, p50/p99) but load:
             load relation relations_100 following_page fans_page fans_page_deep
             friends_page counts follow unfollow publish timeline_first_page
             (tools/bench/design_workloads.h says what each does)
  rows of relgraphd only (--target=server):
             ping, ping_unpipelined,
             connect (--latency-ops connections one after another: TCP, the TLS
             handshake with --tls*, HELLO, one PING, close; connections/s, p50/p99),
             idle_connections (server memory per idle connection; needs open files for
             idle + busy connections on both sides: ulimit -n),
             stream_catch_up (one subscriber reads the whole stream, events/s),
             bridge_delay (reply to NATS message through a running relgraph-bridge, p50/p99),
             replica_lag (primary's ack to the replica showing it, under pipelined follows),
             follow_subscribers_0, _1, _4 (pipelined follows of new edges with 0, 1 or 4
             change-stream subscribers reading everything; needs a server with --data-dir),
             http_follow, http_fans (the JSON API, docs/http.md: follows of new pairs and
             fans pages of 20 over --connections keep-alive connections, one request in
             flight on each, p50/p99) and follow_concurrent, fans_concurrent (the same
             requests at the same concurrency over the binary protocol)
  --idle-connections=N   idle connections of the idle_connections row (default 10000)
  --busy-connections=N   busy connections beside them (default 200)
  --nats=URL             bridge_delay: the NATS server a running relgraph-bridge feeds
  --bridge-rate=N        bridge_delay: follows per second (default 5000; --latency-ops of them)
  --replica=HOST:PORT    replica_lag: a replica of --server (relgraphd --replica-of)
  --http=HOST:PORT       http_*: the server's HTTP port (default 127.0.0.1:7780)
  Default rows: every shared row, and for relgraphd ping and ping_unpipelined.

A replication group (docs/replication.md, "Automatic failover"), its primary failed or switched
over meanwhile (tools/bench/failover_bench.sh does both and reports the figures):
  --target=group         --connections writers follow fresh pairs through a GroupClient for
                         --seconds (60), printing each change of primary they see (the time of
                         the first write the new primary acknowledged, the gap since the last
                         one on the old)
  --group-nodes=A,B,C    the members' HOST:PORT

A cluster (docs/cluster.md), started beforehand with --rate-limit=off on every shard:
  --target=cluster       rows through the shard map read from --nats (default
                         nats://127.0.0.1:4222): cluster_follow_same_unpipelined,
                         cluster_follow_cross_unpipelined, cluster_relation_unpipelined
                         (--latency-ops each), cluster_follows (--ops pipelined follows,
                         --connections per shard, --pipeline deep, then the barrier),
                         cluster_propagation_idle and cluster_propagation (ack to the
                         followee's shard showing it, alone and beside --load-rate follows/s,
                         default 100000; --propagation-seconds each, default 5); no graph
                         is loaded

The billion-edge run (tools/scale-run.sh drives both halves, relgraphd between them):
  --target=scale-build   streams ScaleGenerator's graph of --edges into an embedded graph by
                         Import (nothing held beside it), prints the import row, the memory
                         row and the process's peak RSS, and writes snapshot-0.rgs into
                         --data-dir (required) for relgraphd to restart from
  --target=scale-server  the same graph (same --edges, --seed) served by --server: rows
                         relation, counts, following_page (with a viewer), fans_page_deep,
                         follow and unfollow, each unpipelined with p50/p99 (--latency-ops)

Unless --no-load, the graph is always loaded; `load` only decides whether its row is printed.
)";

Status ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string key = arg.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    uint64_t n = 0;
    auto number = [&](uint64_t* out) -> Status {
      if (!ParseUint(value, &n))
        return Status::InvalidArgument(key + " needs a whole number, got '" + value + "'");
      *out = n;
      return Status::OK();
    };
    if (auto tls = net::ApplyTlsFlag(arg, &f->server.client.tls); !tls.ok() || *tls) {
      RELGRAPH_RETURN_IF_ERROR(tls.status());
    } else if (key == "--target") {
      if (value != "embedded" && value != "cluster" && value != "group" && value != "scale-build" &&
          value != "scale-server" && !IsDesignTarget(value)) {
        return Status::InvalidArgument(
            "--target is embedded, server, cluster, redis://HOST:PORT, postgres://..., scale-build "
            "or "
            "scale-server, not " +
            value);
      }
      f->target = value;
    } else if (key == "--group-nodes") {
      f->group_nodes.clear();
      size_t at = 0;
      while (at <= value.size()) {
        const size_t comma = std::min(value.find(',', at), value.size());
        if (comma > at) f->group_nodes.push_back(value.substr(at, comma - at));
        at = comma + 1;
      }
    } else if (key == "--seconds") {
      RELGRAPH_RETURN_IF_ERROR(number(&f->seconds));
    } else if (arg == "--no-load") {
      f->no_load = true;
    } else if (key == "--replica") {
      f->server.replica = value;
    } else if (key == "--http") {
      RELGRAPH_RETURN_IF_ERROR(net::ParseHostPort(value, &f->server.http_host, &f->server.http_port));
    } else if (key == "--load-rate") {
      RELGRAPH_RETURN_IF_ERROR(number(&f->load_rate));
      if (f->load_rate < 1) return Status::InvalidArgument("--load-rate must be >= 1");
    } else if (key == "--propagation-seconds") {
      f->propagation_seconds = std::atof(value.c_str());
      if (!(f->propagation_seconds > 0)) {
        return Status::InvalidArgument("--propagation-seconds must be a positive number");
      }
    } else if (key == "--nats") {
      f->server.nats_url = value;
    } else if (key == "--bridge-rate") {
      RELGRAPH_RETURN_IF_ERROR(number(&f->server.bridge_rate));
      if (f->server.bridge_rate < 1) return Status::InvalidArgument("--bridge-rate must be >= 1");
    } else if (key == "--server") {
      RELGRAPH_RETURN_IF_ERROR(
          net::ParseHostPort(value, &f->server.client.host, &f->server.client.port));
    } else if (key == "--token") {
      f->server.client.token = value;
    } else if (key == "--connections" || key == "--pipeline") {
      uint64_t v = 0;
      RELGRAPH_RETURN_IF_ERROR(number(&v));
      if (v < 1 || v > 4096) return Status::InvalidArgument(key + " must be in [1, 4096]");
      (key == "--connections" ? f->server.connections : f->server.pipeline) =
          static_cast<uint32_t>(v);
    } else if (key == "--idle-connections" || key == "--busy-connections") {
      uint64_t v = 0;
      RELGRAPH_RETURN_IF_ERROR(number(&v));
      if (v > 1'000'000) return Status::InvalidArgument(key + " must be at most 1000000");
      (key == "--idle-connections" ? f->server.idle_connections : f->server.busy_connections) =
          static_cast<uint32_t>(v);
    } else if (key == "--latency-ops") {
      RELGRAPH_RETURN_IF_ERROR(number(&f->server.latency_ops));
      if (f->server.latency_ops < 1) return Status::InvalidArgument("--latency-ops must be >= 1");
    } else if (key == "--edges") {
      RELGRAPH_RETURN_IF_ERROR(number(&f->edges));
      if (f->edges < 100) return Status::InvalidArgument("--edges must be at least 100");
    } else if (key == "--seed") {
      RELGRAPH_RETURN_IF_ERROR(number(&f->seed));
    } else if (key == "--dataset") {
      f->dataset = value;
    } else if (key == "--reciprocity") {
      char* end = nullptr;
      const double r = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(r >= 0 && r <= 0.9)) {
        return Status::InvalidArgument("--reciprocity wants a fraction from 0 to 0.9, not '" +
                                       value + "'");
      }
      f->shape.reciprocity = r;
    } else if (key == "--follow-times") {
      if (value != "bursty" && value != "even") {
        return Status::InvalidArgument("--follow-times wants bursty or even, not '" + value + "'");
      }
      f->shape.bursty_times = value == "bursty";
    } else if (key == "--follow-time-resolution") {
      if (!ParseTimeResolution(value, &f->time_resolution_ms).ok()) {
        return Status::InvalidArgument("--follow-time-resolution wants 1ms or 1s, not '" + value +
                                       "'");
      }
    } else if (key == "--id-offset") {
      RELGRAPH_RETURN_IF_ERROR(number(&f->id_offset));
    } else if (key == "--max-following") {
      uint64_t cap = 0;
      RELGRAPH_RETURN_IF_ERROR(number(&cap));
      if (cap < 1 || cap > kMaxFollowingLimit)
        return Status::InvalidArgument("--max-following out of range");
      f->max_following = static_cast<uint32_t>(cap);
    } else if (key == "--ops") {
      RELGRAPH_RETURN_IF_ERROR(number(&f->ops));
      if (f->ops < 100) return Status::InvalidArgument("--ops must be at least 100");
    } else if (key == "--wal-ops") {
      RELGRAPH_RETURN_IF_ERROR(number(&f->wal_ops));
      if (f->wal_ops < 1) return Status::InvalidArgument("--wal-ops must be at least 1");
    } else if (key == "--feed-readers" || key == "--feed-posts") {
      uint64_t& count = key == "--feed-readers" ? f->feed_readers : f->feed_posts;
      RELGRAPH_RETURN_IF_ERROR(number(&count));
      if (count < 1) return Status::InvalidArgument(key + " must be at least 1");
    } else if (key == "--writers") {
      RELGRAPH_RETURN_IF_ERROR(number(&f->writers));
      if (f->writers < 1 || f->writers > 4096)
        return Status::InvalidArgument("--writers must be in [1, 4096]");
    } else if (key == "--data-dir") {
      if (value.empty()) return Status::InvalidArgument("--data-dir needs a directory");
      f->data_dir = value;
    } else if (key == "--format") {
      if (value != "text" && value != "csv")
        return Status::InvalidArgument("--format is text or csv");
      f->csv = value == "csv";
    } else if (key == "--workloads") {
      std::set<std::string> known(Workloads::Names().begin(), Workloads::Names().end());
      known.insert(DurabilityWorkloads::Names().begin(), DurabilityWorkloads::Names().end());
      known.insert(ServerWorkloads::Names().begin(), ServerWorkloads::Names().end());
      known.insert(DesignWorkloads::Names().begin(), DesignWorkloads::Names().end());
      known.insert(FeedWorkloads::Names().begin(), FeedWorkloads::Names().end());
      known.insert(AccessWorkloads::Names().begin(), AccessWorkloads::Names().end());
      known.insert(StallWorkloads::Names().begin(), StallWorkloads::Names().end());
      std::stringstream ss(value);
      std::string w;
      while (std::getline(ss, w, ',')) {
        if (!known.count(w)) return Status::InvalidArgument("unknown workload '" + w + "'");
        f->workloads.push_back(w);
      }
    } else {
      return Status::InvalidArgument("unknown flag '" + arg + "'");
    }
  }
  return Status::OK();
}

}  // namespace relgraph::bench
