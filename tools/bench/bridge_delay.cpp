#include "tools/bench/bridge_delay.h"

#include <nats/nats.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "net/cluster/nats_link.h"

namespace relgraph::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now().time_since_epoch())
      .count();
}

struct Receiver {
  uint64_t base = 0;
  std::vector<std::atomic<int64_t>> acked_ns;  // per follow: when its reply arrived (0: not yet)
  std::mutex mu;
  std::vector<double> delays_us;
  std::atomic<uint64_t> received{0};
  explicit Receiver(uint64_t n) : acked_ns(n) {}
};

void OnMessage(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  const int64_t now = NowNs();
  auto* r = static_cast<Receiver*>(closure);
  const std::string data(natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
  natsMsg_Destroy(msg);
  const size_t at = data.find("\"follower\":");
  if (at == std::string::npos) return;
  const uint64_t follower = std::strtoull(data.c_str() + at + 11, nullptr, 10);
  if (follower < r->base || follower - r->base >= r->acked_ns.size()) return;
  // The reply and the message race: a message that wins waits for its reply's time.
  int64_t acked = 0;
  for (int spin = 0; (acked = r->acked_ns[follower - r->base].load()) == 0 && spin < 1000000;
       ++spin) {
  }
  {
    std::lock_guard lock(r->mu);
    r->delays_us.push_back(static_cast<double>(now - acked) / 1000.0);
  }
  r->received.fetch_add(1);
}

}  // namespace

Result<WorkloadResult> BridgeDelay(const net::ClientOptions& client_options,
                                   const std::string& nats_url, const std::string& prefix,
                                   uint64_t ops, uint64_t rate) {
  Receiver r(ops);
  r.base = (uint64_t{1} << 41) + static_cast<uint64_t>(NowNs() % 1'000'000'000) * 1024;
  auto connected = net::ConnectNats(nats_url);  // with the process's NATS TLS (--nats-tls-*)
  if (!connected.ok()) return connected.status();
  natsConnection* nc = *connected;
  natsSubscription* sub = nullptr;
  const std::string subject = prefix + ".follow";
  if (natsConnection_Subscribe(&sub, nc, subject.c_str(), OnMessage, &r) != NATS_OK) {
    natsConnection_Destroy(nc);
    return Status(Code::kUnavailable, "cannot subscribe to " + subject);
  }
  auto client = net::Client::Connect(client_options);
  Status failed = client.status();
  const auto start = SteadyClock::now();
  for (uint64_t i = 0; failed.ok() && i < ops; ++i) {
    // Paced: request i leaves at start + i / rate.
    std::this_thread::sleep_until(start + std::chrono::nanoseconds(i * 1'000'000'000 / rate));
    auto f = (*client)->Follow(r.base + i, r.base + i + 1);
    r.acked_ns[i].store(NowNs());
    if (!f.ok()) failed = f.status();
  }
  const double seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  for (int i = 0; i < 2000 && r.received.load() < ops; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  natsSubscription_Unsubscribe(sub);
  natsSubscription_Destroy(sub);
  natsConnection_Destroy(nc);
  if (!failed.ok()) return failed;
  std::vector<double> delays;
  {
    std::lock_guard lock(r.mu);
    delays = r.delays_us;
  }
  const uint64_t got = delays.size();
  return Summarize("bridge_delay", ops, seconds, std::move(delays),
                   std::to_string(got) + " of " + std::to_string(ops) + " messages arrived, " +
                       std::to_string(rate) + " follows/s; delay from reply to message");
}

}  // namespace relgraph::bench
