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
#include <utility>
#include <vector>

#include "net/server/command_metrics.h"
#include "net/server/server_options.h"
#include "net/service.h"

namespace relgraph::net {

// Runs Service::WaitDurable on its own thread so io threads never block on fsync: connections
// ask for a ticket and are told (on_change) when the durable ticket moves or the wait failed.
// A failed wait fails every ticket up to its target (failed_through: those writes are never
// acknowledged); later tickets are waited for again (a WAL that recovered, a node that stepped
// down and became a primary again).
class DurabilityWaiter {
 public:
  using OnChange = std::function<void()>;
  explicit DurabilityWaiter(Service* service) : service_(service) {}
  ~DurabilityWaiter() { Stop(); }
  void Start(OnChange on_change);
  void Stop();
  void Request(uint64_t ticket);
  uint64_t durable() const { return durable_.load(std::memory_order_acquire); }
  // The newest ticket a failed wait covered (0: none failed).
  uint64_t failed_through() const { return failed_through_.load(std::memory_order_acquire); }
  // Whether `ticket` was in a failed wait's range (its write must never be acknowledged,
  // even once a later wait succeeds past it).
  bool Failed(uint64_t ticket) const;

 private:
  void Loop();
  Service* const service_;
  OnChange on_change_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t wanted_ = 0;
  bool stop_ = false;
  std::atomic<uint64_t> durable_{0};
  std::atomic<uint64_t> failed_through_{0};
  // The ranges (first, last) of failed waits, newest last; guarded by mu_.
  std::vector<std::pair<uint64_t, uint64_t>> failed_ranges_;
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
  CommandRecorder background_recorder;  // written by the background runner's thread only
};

}  // namespace relgraph::net
