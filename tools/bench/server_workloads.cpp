#include "tools/bench/server_workloads.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "net/client/subscriber.h"
#include "tools/bench/bridge_delay.h"
#include "tools/bench/http_load.h"
#include "tools/bench/pipelined_clients.h"
#include "tools/bench/replica_lag.h"

namespace relgraph::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

}  // namespace

ServerWorkloads::ServerWorkloads(const GeneratedGraph& data, const ServerFlags& flags,
                                 uint64_t seed)
    : flags_(flags), seed_(seed) {
  std::unordered_set<UserId> from;
  for (const BenchEdge& e : data.edges) from.insert(e.follower);
  followers_.assign(from.begin(), from.end());
  std::sort(followers_.begin(), followers_.end());
}

const std::vector<std::string>& ServerWorkloads::Names() {
  static const std::vector<std::string> names = {"ping",
                                                 "ping_unpipelined",
                                                 "idle_connections",
                                                 "connect",
                                                 "stream_catch_up",
                                                 "bridge_delay",
                                                 "replica_lag",
                                                 "follow_subscribers_0",
                                                 "follow_subscribers_1",
                                                 "follow_subscribers_4",
                                                 "follow_concurrent",
                                                 "http_follow",
                                                 "fans_concurrent",
                                                 "http_fans"};
  return names;
}

void ServerWorkloads::QueueRequest(net::Client& c, const std::string& name, uint64_t i) const {
  const uint64_t r = Mix(seed_ * 1'000'003 + i);
  const UserId follower = followers_[r % followers_.size()];
  if (name == "ping") {
    c.Queue(net::PingRequest{});
  } else if (name == "counts") {
    c.Queue(net::CountsRequest{follower});
  } else if (name.starts_with("follow_subscribers")) {
    // New edges: random pairs among ids far above the loaded graph's, drawn afresh by every
    // row (a repeated pair would be a no-op, logged by no one).
    constexpr uint64_t kBase = uint64_t{1} << 40;
    const uint64_t p = Mix(r + fresh_pairs_.load(std::memory_order_relaxed));
    c.Queue(net::FollowRequest{kBase + (p & 0xffffff), kBase + ((p >> 24) & 0xffffff) + 1,
                               std::nullopt});
  }
}

Result<WorkloadResult> ServerWorkloads::Pipelined(const std::string& name, uint64_t ops) {
  std::atomic<uint64_t> errors{0};
  const auto start = SteadyClock::now();
  const Status s = RunPipelinedClients(
      flags_.connections, flags_.pipeline, ops, [&] { return net::Client::Connect(flags_.client); },
      [&](net::Client& client, uint64_t begin, uint64_t end) -> Status {
        for (uint64_t i = begin; i < end; ++i) QueueRequest(client, name, i);
        auto replies = client.Flush();
        if (!replies.ok()) return replies.status();
        for (const net::RawReply& reply : *replies) errors += reply.status.ok() ? 0 : 1;
        return Status::OK();
      });
  if (!s.ok()) return s;
  return Summarize(name, ops, std::chrono::duration<double>(SteadyClock::now() - start).count(), {},
                   errors > 0 ? std::to_string(errors.load()) + " error replies" : "");
}

Result<WorkloadResult> ServerWorkloads::Unpipelined(const std::string& name, uint64_t ops) {
  const std::string base = PipelinedName(name);
  auto client = net::Client::Connect(flags_.client);
  if (!client.ok()) return client.status();
  std::vector<double> micros;
  micros.reserve(ops);
  const auto start = SteadyClock::now();
  for (uint64_t i = 0; i < ops; ++i) {
    QueueRequest(**client, base, i);
    const auto t0 = SteadyClock::now();
    auto replies = (*client)->Flush();
    micros.push_back(std::chrono::duration<double, std::micro>(SteadyClock::now() - t0).count());
    if (!replies.ok()) return replies.status();
  }
  return Summarize(name, ops, std::chrono::duration<double>(SteadyClock::now() - start).count(),
                   std::move(micros));
}

// The server's view of itself: INFO's rss_bytes, connection_bytes and connections.
struct ServerMemory {
  uint64_t rss = 0, connection_bytes = 0, connections = 0;
};
Result<ServerMemory> ReadServerMemory(net::Client& c) {
  auto info = c.Info();
  if (!info.ok()) return info.status();
  return ServerMemory{info->Get("rss_bytes").value_or(0), info->Get("connection_bytes").value_or(0),
                      info->Get("connections").value_or(0)};
}

// Runs counts requests on busy_connections connections until `stop`: a few threads, each
// cycling through its share with a pipelined batch on each, so every busy connection has
// requests in flight all along. Adds replies and error replies to *done and *errors.
Status ServerWorkloads::BusyConnections(const std::atomic<bool>& stop, uint64_t* done,
                                        uint64_t* errors) {
  constexpr uint32_t kThreads = 4;
  constexpr uint32_t kBatch = 16;
  std::atomic<uint64_t> replies_seen{0}, error_replies{0};
  std::mutex mu;
  Status failure;
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto fail = [&](const Status& s) {
        std::lock_guard lock(mu);
        failure = s;
      };
      std::vector<std::unique_ptr<net::Client>> mine;
      for (uint32_t i = t; i < flags_.busy_connections; i += kThreads) {
        auto c = net::Client::Connect(flags_.client);
        if (!c.ok()) return fail(c.status());
        mine.push_back(std::move(*c));
      }
      for (uint64_t round = 0; !stop; ++round) {
        for (auto& c : mine) {
          for (uint32_t k = 0; k < kBatch; ++k) QueueRequest(*c, "counts", round * kBatch + k);
        }
        for (auto& c : mine) {
          auto replies = c->Flush();
          if (!replies.ok()) return fail(replies.status());
          for (const net::RawReply& r : *replies) error_replies += r.status.ok() ? 0 : 1;
          replies_seen += replies->size();
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  *done += replies_seen;
  *errors += error_replies;
  return failure;
}

Result<WorkloadResult> ServerWorkloads::Connects() {
  std::vector<double> micros;
  micros.reserve(flags_.latency_ops);
  const auto start = SteadyClock::now();
  for (uint64_t i = 0; i < flags_.latency_ops; ++i) {
    const auto t0 = SteadyClock::now();
    auto client = net::Client::Connect(flags_.client);
    if (!client.ok()) return client.status();
    RELGRAPH_RETURN_IF_ERROR((*client)->Ping());
    client->reset();  // closed: its socket and TLS session end here
    micros.push_back(std::chrono::duration<double, std::micro>(SteadyClock::now() - t0).count());
  }
  const std::string note =
      flags_.client.tls.enabled ? "TLS handshake + HELLO + PING each" : "TCP + HELLO + PING each";
  return Summarize("connect", flags_.latency_ops,
                   std::chrono::duration<double>(SteadyClock::now() - start).count(),
                   std::move(micros), note);
}

Result<WorkloadResult> ServerWorkloads::IdleConnections() {
  auto probe = net::Client::Connect(flags_.client);
  if (!probe.ok()) return probe.status();
  auto before = ReadServerMemory(**probe);
  if (!before.ok()) return before.status();
  std::vector<std::unique_ptr<net::Client>> idle;
  idle.reserve(flags_.idle_connections);
  for (uint32_t i = 0; i < flags_.idle_connections; ++i) {
    auto c = net::Client::Connect(flags_.client);
    if (!c.ok()) {
      return Status(c.status().code(),
                    "idle connection " + std::to_string(i) + ": " + c.status().message());
    }
    idle.push_back(std::move(*c));
  }
  auto with_idle = ReadServerMemory(**probe);
  if (!with_idle.ok()) return with_idle.status();

  const auto start = SteadyClock::now();
  std::atomic<bool> stop{false};
  uint64_t done = 0, errors = 0;
  Status failure;
  std::thread busy([&] { failure = BusyConnections(stop, &done, &errors); });
  std::this_thread::sleep_for(std::chrono::seconds(3));
  auto with_busy = ReadServerMemory(**probe);
  stop = true;
  busy.join();
  const double seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  if (!failure.ok()) return failure;
  if (!with_busy.ok()) return with_busy.status();

  idle.clear();
  Result<ServerMemory> after = ServerMemory{};
  for (int i = 0; i < 500; ++i) {  // until the server has seen every close (up to 5 s)
    after = ReadServerMemory(**probe);
    if (!after.ok() || after->connections <= 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!after.ok()) return after.status();
  const auto mib = [](uint64_t b) { return std::to_string(b / (1 << 20)) + " MiB"; };
  const uint64_t n = std::max<uint32_t>(1, flags_.idle_connections);
  const int64_t rss_per_idle =
      (static_cast<int64_t>(with_idle->rss) - static_cast<int64_t>(before->rss)) /
      static_cast<int64_t>(n);
  std::string note = "server rss " + mib(before->rss) + "; with " +
                     std::to_string(flags_.idle_connections) + " idle " + mib(with_idle->rss) +
                     " (" + std::to_string(rss_per_idle) + " B per idle connection, " +
                     std::to_string((with_idle->connection_bytes - before->connection_bytes) / n) +
                     " B in buffers and records); with " + std::to_string(flags_.busy_connections) +
                     " busy too " + mib(with_busy->rss) + "; after all closed " + mib(after->rss);
  if (errors > 0) note += "; " + std::to_string(errors) + " error replies";
  return Summarize("idle_connections", done, seconds, {}, note);
}

Result<WorkloadResult> ServerWorkloads::FollowsWithSubscribers(const std::string& name,
                                                               uint32_t subscribers) {
  std::atomic<bool> stop{false};
  std::vector<std::atomic<uint64_t>> seen(subscribers);
  std::vector<Status> ended(subscribers);
  std::vector<std::thread> readers;
  for (uint32_t i = 0; i < subscribers; ++i) {
    readers.emplace_back([&, i] {
      net::SubscriberOptions o;
      o.client = flags_.client;
      o.from = net::SubscribeFrom::kNow;
      ended[i] = net::Subscribe(
          o,
          [&](const net::WireEvent& e) {
            seen[i].store(e.lsn, std::memory_order_relaxed);
            return true;
          },
          &stop);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // all subscribed
  auto client = net::Client::Connect(flags_.client);
  if (!client.ok()) return client.status();
  auto before = (*client)->Info();
  // New in every row and every run (a rerun against the same server must not repeat pairs).
  fresh_pairs_ = static_cast<uint64_t>(SteadyClock::now().time_since_epoch().count());
  auto result = Pipelined(name, flags_.ops);
  const auto written = SteadyClock::now();
  std::string note;
  auto info = (*client)->Info();
  if (before.ok() && info.ok() && subscribers > 0) {
    note = std::to_string(info->Get("last_lsn").value_or(0) - before->Get("last_lsn").value_or(0)) +
           " events; ";
    const uint64_t last = info->Get("last_lsn").value_or(0);
    // How long after the last write the slowest subscriber had every event (30 s at most).
    while (SteadyClock::now() - written < std::chrono::seconds(30)) {
      bool all = true;
      for (auto& s : seen) all &= s.load(std::memory_order_relaxed) >= last;
      if (all) break;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    note += std::to_string(subscribers) + " subscribers caught up " +
            std::to_string(static_cast<int64_t>(
                std::chrono::duration<double, std::milli>(SteadyClock::now() - written).count())) +
            " ms after the last write; ";
    info = (*client)->Info();
  }
  if (before.ok() && info.ok()) {
    // The server's CPU per follow, streaming every event to the subscribers included: its
    // cost, whichever core the clients share.
    const double cpu_ms =
        static_cast<double>(info->Get("cpu_ms").value_or(0) - before->Get("cpu_ms").value_or(0));
    char buf[64];
    std::snprintf(buf, sizeof buf, "server CPU %.2f us per follow",
                  cpu_ms * 1000.0 / static_cast<double>(flags_.ops));
    note += buf;
  }
  stop = true;
  for (auto& t : readers) t.join();
  for (const Status& s : ended) {
    if (!s.ok()) note += "; a subscriber ended: " + s.ToString();
  }
  if (!result.ok()) return result;
  if (!note.empty()) result->note = result->note.empty() ? note : result->note + "; " + note;
  return result;
}

Result<WorkloadResult> ServerWorkloads::StreamCatchUp() {
  // One subscriber reads the whole change stream from LSN 1 (everything the earlier rows
  // wrote, at least `load`'s follows) as fast as the server sends it.
  auto client = net::Client::Connect(flags_.client);
  if (!client.ok()) return client.status();
  auto info = (*client)->Info();
  if (!info.ok()) return info.status();
  const uint64_t last = info->Get("last_lsn").value_or(0);
  const uint64_t oldest = info->Get("oldest_wal_lsn").value_or(1);
  uint64_t events = 0;
  net::SubscriberOptions o;
  o.client = flags_.client;
  o.from = net::SubscribeFrom::kLsn;
  o.lsn = std::max<uint64_t>(oldest, 1);
  const auto start = SteadyClock::now();
  Status s = net::Subscribe(o, [&](const net::WireEvent& e) {
    ++events;
    return e.lsn < last;
  });
  const double seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  if (!s.ok()) return s;
  return Summarize(
      "stream_catch_up", events, seconds, {},
      "one subscriber from LSN " + std::to_string(o.lsn) + " to " + std::to_string(last));
}

Result<WorkloadResult> ServerWorkloads::Run(const std::string& name) {
  if (name == "idle_connections") return IdleConnections();
  if (name == "connect") return Connects();
  if (name == "stream_catch_up") return StreamCatchUp();
  if (name == "bridge_delay") {
    if (flags_.nats_url.empty()) {
      return Status::InvalidArgument(
          "bridge_delay needs --nats=URL (and a relgraph-bridge running)");
    }
    return BridgeDelay(flags_.client, flags_.nats_url, "relgraph", flags_.latency_ops,
                       flags_.bridge_rate);
  }
  if (name == "replica_lag") {
    if (flags_.replica.empty()) {
      return Status::InvalidArgument(
          "replica_lag needs --replica=HOST:PORT (a replica of the server)");
    }
    net::ClientOptions replica = flags_.client;
    RELGRAPH_RETURN_IF_ERROR(net::ParseHostPort(flags_.replica, &replica.host, &replica.port));
    return ReplicaLag(flags_.client, replica, flags_.pipeline, flags_.replica_lag_seconds);
  }
  if (name.starts_with("follow_subscribers_")) {
    return FollowsWithSubscribers(name, name.back() == '4' ? 4 : name.back() == '1' ? 1 : 0);
  }
  if (name.starts_with("http_") || name.ends_with("_concurrent")) return OneInFlight(name);
  if (name.ends_with(kUnpipelinedSuffix)) return Unpipelined(name, flags_.latency_ops);
  return Pipelined(name, flags_.ops);
}

}  // namespace relgraph::bench

namespace relgraph::bench {

Result<WorkloadResult> ServerWorkloads::OneInFlight(const std::string& name) {
  // Follows of new pairs far above the loaded graph's ids (a repeated pair is a no-op), and
  // fans pages of loaded users; the same requests over both protocols.
  const bool follows = name.find("follow") != std::string::npos;
  const uint64_t salt = Mix(seed_ + fresh_pairs_.fetch_add(1'000'003));
  auto pair = [&](uint64_t i) {
    constexpr uint64_t kBase = uint64_t{1} << 40;
    const uint64_t p = Mix(salt + i);
    return std::pair<uint64_t, uint64_t>{kBase + (p & 0xffffff), kBase + ((p >> 24) & 0xffffff) + 1};
  };
  auto fans_of = [&](uint64_t i) { return followers_[Mix(salt + i) % followers_.size()]; };
  if (name.starts_with("http_")) {
    const std::string host = flags_.http_host + ":" + std::to_string(flags_.http_port);
    const std::string auth = flags_.client.token.empty()
                                 ? ""
                                 : "Authorization: Bearer " + flags_.client.token + "\r\n";
    return RunHttpLoad(
        name, flags_.http_host, flags_.http_port, flags_.connections, flags_.latency_ops,
        [&](uint64_t i) {
          if (follows) {
            const auto [a, b] = pair(i);
            const std::string body =
                "{\"follower\":" + std::to_string(a) + ",\"followee\":" + std::to_string(b) + "}";
            return "POST /v1/follow HTTP/1.1\r\nHost: " + host + "\r\n" + auth +
                   "Content-Type: application/json\r\nContent-Length: " +
                   std::to_string(body.size()) + "\r\n\r\n" + body;
          }
          return "GET /v1/fans?user=" + std::to_string(fans_of(i)) + "&limit=20 HTTP/1.1\r\nHost: " +
                 host + "\r\n" + auth + "\r\n";
        });
  }
  return RunConcurrentCalls(name, flags_.client, flags_.connections, flags_.latency_ops,
                            [&](net::Client& c, uint64_t i) {
                              if (follows) {
                                const auto [a, b] = pair(i);
                                c.Queue(net::FollowRequest{a, b, std::nullopt});
                              } else {
                                net::FansRequest q;
                                q.user = fans_of(i);
                                q.limit = 20;
                                c.Queue(q);
                              }
                            });
}

}  // namespace relgraph::bench
