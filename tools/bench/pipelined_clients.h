// What the benchmark's TCP rows share: the client threads of a pipelined row, the stateless
// pick of operation i, the name of a row's unpipelined variant, and the timing of markers
// (a change made in one place, then polled for where it must show).
//
// Thread-safety: RunPipelinedClients starts and joins its own threads; connect and batch
// must be safe to call from them (each thread gets its own connection).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "storage/status.h"

namespace relgraph::bench {

// A cheap, stateless pseudo-random pick (SplitMix64's finalizer): operation i of a row always
// asks the same thing, whichever thread sends it.
inline uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline constexpr std::string_view kUnpipelinedSuffix = "_unpipelined";

// "relation_unpipelined" -> "relation"; a name without the suffix is returned as it is.
inline std::string PipelinedName(const std::string& name) {
  return name.ends_with(kUnpipelinedSuffix)
             ? name.substr(0, name.size() - kUnpipelinedSuffix.size())
             : name;
}

// Runs operations [0, ops) from `connections` threads. Each thread opens its own connection
// with connect() (a Result holding a pointer) and then takes up to `pipeline` operations at a
// time: batch(connection, begin, end) sends them as one round trip and returns its Status.
// Returns the first failure of any thread (its connect or a batch), once all have stopped.
template <typename Connect, typename Batch>
Status RunPipelinedClients(uint32_t connections, uint32_t pipeline, uint64_t ops,
                           const Connect& connect, const Batch& batch) {
  std::atomic<uint64_t> next{0};
  std::mutex mu;
  Status failure;
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < connections; ++t) {
    threads.emplace_back([&] {
      auto connection = connect();
      Status s = connection.status();
      while (s.ok()) {
        const uint64_t begin = next.fetch_add(pipeline);
        if (begin >= ops) break;
        s = batch(**connection, begin, std::min<uint64_t>(ops, begin + pipeline));
      }
      if (!s.ok()) {
        std::lock_guard lock(mu);
        if (failure.ok()) failure = s;
      }
    });
  }
  for (auto& th : threads) th.join();
  return failure;
}

// For `seconds`, every 5 ms: make(m) makes marker m and returns once it is acknowledged, then
// shows(m) (a Result<bool>) is asked until true. Appends each marker's delay from the
// acknowledgement to showing, in µs, to *delays_us. kTimeout (naming `what`) when a marker
// does not show within `timeout`; the first error of make or shows otherwise.
template <typename Make, typename Shows>
Status TimeMarkers(double seconds, std::chrono::seconds timeout, const std::string& what,
                   const Make& make, const Shows& shows, std::vector<double>* delays_us) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (uint64_t m = 0; Clock::now() - start < std::chrono::duration<double>(seconds); ++m) {
    RELGRAPH_RETURN_IF_ERROR(make(m));
    const auto acked = Clock::now();
    for (;;) {
      auto shown = shows(m);
      if (!shown.ok()) return shown.status();
      if (*shown) break;
      if (Clock::now() - acked > timeout) {
        return Status(Code::kTimeout,
                      what + " did not show within " + std::to_string(timeout.count()) + " s");
      }
    }
    delays_us->push_back(std::chrono::duration<double, std::micro>(Clock::now() - acked).count());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return Status::OK();
}

}  // namespace relgraph::bench
