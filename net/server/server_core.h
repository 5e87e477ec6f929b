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

#include "net/server/server_options.h"
#include "net/service.h"

namespace relgraph::net {

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
  std::atomic<int64_t> connection_bytes{0};  // each Connection adds its record and buffers
  DurabilityWaiter durability;
  BackgroundRunner background;
};

}  // namespace relgraph::net
