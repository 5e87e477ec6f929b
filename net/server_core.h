// State shared by everything inside one Server: options, the service, counters, and the two
// helper threads (durability waits and background commands). Internal to net/.
//
// Thread-safety: counters are atomics; DurabilityWaiter and BackgroundRunner are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "net/service.h"

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
};

// Runs Service::WaitDurable on its own thread so io threads never block on fsync: connections
// ask for a ticket and are told (on_change) when the durable ticket moves or the wait failed.
class DurabilityWaiter {
 public:
  using OnChange = std::function<void()>;
  explicit DurabilityWaiter(Service* service) : service_(service) {}
  ~DurabilityWaiter() { Stop(); }
  void Start(OnChange on_change);
  void Stop();
  void Request(uint64_t ticket);
  uint64_t durable() const { return durable_.load(std::memory_order_acquire); }
  bool failed() const { return failed_.load(std::memory_order_acquire); }

 private:
  void Loop();
  Service* const service_;
  OnChange on_change_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t wanted_ = 0;
  bool stop_ = false;
  std::atomic<uint64_t> durable_{0};
  std::atomic<bool> failed_{false};
  std::thread thread_;
};

// One thread running slow commands (snapshot) in arrival order.
class BackgroundRunner {
 public:
  ~BackgroundRunner() { Stop(); }
  void Start();
  void Stop();  // runs what is queued, then joins
  void Post(std::function<void()> task);

 private:
  void Loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::thread thread_;
};

struct ServerCore {
  ServerCore(const ServerOptions& o, Service* s) : options(o), service(s), durability(s) {}
  ServerStats Stats() const;
  // True when `token` equals the configured one; the time taken does not depend on where
  // they differ.
  bool TokenMatches(std::string_view token) const;

  const ServerOptions options;
  Service* const service;
  const std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::atomic<uint64_t> connections{0};
  std::atomic<uint64_t> connections_total{0};
  std::atomic<uint64_t> requests_total{0};
  DurabilityWaiter durability;
  BackgroundRunner background;
};

}  // namespace relgraph::net
