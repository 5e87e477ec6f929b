#include "tools/bench/group_writer.h"

#include <atomic>
#include <mutex>
#include <thread>

#include "net/client/group_client.h"

namespace relgraph::bench {

int RunGroupWriters(const GroupWriterFlags& flags, std::ostream& out) {
  std::mutex out_mu;
  std::atomic<uint64_t> acked{0}, unknown{0}, retries{0};
  const auto deadline = std::chrono::steady_clock::now() + flags.duration;
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < flags.writers; ++w) {
    threads.emplace_back([&, w] {
      net::GroupClientOptions o;
      o.nodes = flags.nodes;
      o.connection = flags.connection;
      o.connection.io_timeout = std::chrono::milliseconds(2000);
      o.connection.connect_timeout = std::chrono::milliseconds(300);
      o.failover_timeout = std::chrono::milliseconds(30000);
      auto c = net::GroupClient::Connect(o);
      if (!c.ok()) {
        std::lock_guard lock(out_mu);
        out << "writer " << w << ": " << c.status().ToString() << "\n";
        return;
      }
      std::string primary;
      auto last_ack = std::chrono::steady_clock::now();
      for (uint64_t n = 0; std::chrono::steady_clock::now() < deadline; ++n) {
        const uint64_t a = (uint64_t{w} + 1) << 40 | n, b = 1 + n % 1000;
        auto r = (*c)->Follow(a, b);
        if (!r.ok()) {
          unknown.fetch_add(1);
          continue;
        }
        acked.fetch_add(1);
        const auto now = std::chrono::steady_clock::now();
        if ((*c)->primary() != primary) {
          if (!primary.empty()) {
            const auto unix_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
            std::lock_guard lock(out_mu);
            out << "primary_change writer=" << w << " to=" << (*c)->primary()
                << " first_ack_unix_us=" << unix_us
                << " gap_ms=" << std::chrono::duration<double, std::milli>(now - last_ack).count()
                << "\n"
                << std::flush;
          }
          primary = (*c)->primary();
        }
        last_ack = now;
      }
      retries.fetch_add((*c)->retries());
    });
  }
  for (auto& t : threads) t.join();
  out << "writers " << flags.writers << ": " << acked.load() << " acknowledged, " << retries.load()
      << " retries, " << unknown.load() << " outcome unknown\n";
  return acked.load() > 0 ? 0 : 1;
}

}  // namespace relgraph::bench
