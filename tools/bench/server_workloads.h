// The benchmark's rows that only relgraphd has (the graph and feed rows every design shares
// are in design_workloads.h), over TCP through net::Client.
//
// `ping` runs `connections` client threads, each keeping `pipeline` requests per round trip;
// `ping_unpipelined` one connection, one request per round trip, with p50/p99: the floor of
// every unpipelined row. `idle_connections` opens
// `idle_connections` connections that do nothing beside `busy_connections` that run counts
// requests, and reports the server's resident memory (INFO rss_bytes) before, with them and
// after they close: the bytes an idle connection costs. `follow_subscribers_N` runs pipelined
// follows of new random pairs while N subscribers read the change stream; `stream_catch_up`
// has one subscriber read the whole stream from the oldest kept LSN and reports events/s, and
// reports the write throughput (the cost of subscribers to the primary) and how long the
// subscribers took to catch up once the writes ended.
//
// Thread-safety: one ServerWorkloads per thread; it starts its own client threads.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "net/client/client.h"
#include "tools/bench/workload_generator.h"
#include "tools/bench/workloads.h"

namespace relgraph::bench {

struct ServerFlags {
  net::ClientOptions client;
  uint32_t connections = 4;
  uint32_t pipeline = 64;
  uint64_t ops = 2'000'000;       // per pipelined query workload
  uint64_t latency_ops = 50'000;  // per unpipelined workload
  uint32_t idle_connections = 10'000;
  uint32_t busy_connections = 200;
  std::string nats_url;         // bridge_delay: the NATS server a running relgraph-bridge feeds
  uint64_t bridge_rate = 5000;  // bridge_delay: follows per second
  std::string replica;          // replica_lag: a replica of the server, "host:port"
  double replica_lag_seconds = 10;
  std::string http_host = "127.0.0.1";  // http_*: the JSON API (--http)
  uint16_t http_port = 7780;
};

class ServerWorkloads {
 public:
  ServerWorkloads(const GeneratedGraph& data, const ServerFlags& flags, uint64_t seed);
  // In run order; `load` comes first and the others read what it loaded.
  static const std::vector<std::string>& Names();
  Result<WorkloadResult> Run(const std::string& name);

 private:
  // Builds request i of workload `name` into the client's queue.
  void QueueRequest(net::Client& c, const std::string& name, uint64_t i) const;
  Result<WorkloadResult> Pipelined(const std::string& name, uint64_t ops);
  Result<WorkloadResult> Unpipelined(const std::string& name, uint64_t ops);
  Result<WorkloadResult> IdleConnections();
  // --latency-ops connections one after another, each opened (TCP, the TLS handshake when
  // the client speaks TLS, HELLO), answering one PING, and closed: connections/s, p50/p99.
  Result<WorkloadResult> Connects();
  Status BusyConnections(const std::atomic<bool>& stop, uint64_t* done, uint64_t* errors);
  Result<WorkloadResult> FollowsWithSubscribers(const std::string& name, uint32_t subscribers);
  Result<WorkloadResult> StreamCatchUp();
  // http_follow, http_fans, follow_concurrent, fans_concurrent (http_load.h).
  Result<WorkloadResult> OneInFlight(const std::string& name);

  const ServerFlags flags_;
  const uint64_t seed_;
  std::atomic<uint64_t> fresh_pairs_{0};  // follow_subscribers_*: a salt new for every row
  std::vector<UserId> followers_;         // users with a following list, for counts picks
};

}  // namespace relgraph::bench
