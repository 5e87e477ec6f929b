// State shared by everything inside one Server: options, the service, counters, and the two
// helper threads (durability waits and background commands). Internal to net/.
//
// Thread-safety: counters are atomics; DurabilityWaiter, BackgroundRunner and SlowLog are
// thread-safe.
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

#include "net/auth/client_registry.h"
#include "net/protocol/frame.h"
#include "net/protocol/messages.h"
#include "net/server/command_metrics.h"
#include "net/server/server_options.h"
#include "net/server/slow_log.h"
#include "net/service.h"
#include "net/tls/tls_context.h"

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
  ServerCore(const ServerOptions& o, Service* s)
      : options(o),
        service(s),
        durability(s),
        slow_log(o.slowlog_us, o.slowlog_max_len, o.on_slow_command),
        max_connections(o.max_connections),
        idle_timeout_ms(o.idle_timeout.count()),
        send_timeout_ms(o.send_timeout.count()) {}
  std::chrono::milliseconds idle_timeout() const {
    return std::chrono::milliseconds(idle_timeout_ms.load(std::memory_order_relaxed));
  }
  std::chrono::milliseconds send_timeout() const {
    return std::chrono::milliseconds(send_timeout_ms.load(std::memory_order_relaxed));
  }
  ServerStats Stats() const;
  // Checks HELLO (its version, and its token or `cert_name`, the verified client
  // certificate's name) and on success sets *who and appends the reply frame to *out;
  // returns the error to close with.
  Status AnswerHello(const Frame& frame, std::string_view cert_name, ClientIdentity* who,
                     std::string* out) const;

  // The TLS context new connections use (nullptr: plain TCP) and the named clients; both
  // swapped whole by a reload (Server::ReloadSecurity), which bumps clients_generation so a
  // connection looks its client up again before its next command.
  std::shared_ptr<const TlsContext> tls() const {
    std::lock_guard lock(security_mu);
    return tls_context;
  }
  std::shared_ptr<const ClientRegistry> clients() const {
    std::lock_guard lock(security_mu);
    return client_registry;
  }
  // Reports a security event (a refused handshake or login, an admin command) to
  // options.on_security_event, if set. Any thread.
  void Log(const std::string& message) const {
    if (options.on_security_event) options.on_security_event(message);
  }

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
  SlowLog slow_log;
  // The limits that change live (Server::SetLimits); options holds their starting values.
  std::atomic<uint32_t> max_connections;
  std::atomic<int64_t> idle_timeout_ms;
  std::atomic<int64_t> send_timeout_ms;
  mutable std::mutex security_mu;
  std::shared_ptr<const TlsContext> tls_context;                                // security_mu
  std::shared_ptr<const ClientRegistry> client_registry =                       // security_mu
      std::make_shared<const ClientRegistry>();
  std::atomic<uint64_t> clients_generation{0};
};

}  // namespace relgraph::net
