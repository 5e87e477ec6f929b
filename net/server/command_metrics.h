// CommandMetrics: what the server counts about the commands it runs, for /metrics
// (docs/http.md): per opcode the requests, their latency in fixed buckets and the errors by
// code, and the bytes read and written.
//
// Why this design: counting must cost the binary protocol next to nothing, so each thread that
// runs commands (every io worker, the background runner) has its own CommandRecorder, written by
// that thread alone with relaxed loads and stores (no locked instruction, no shared cache line),
// and a reader (the HTTP thread) adds them up when asked. Latency is the time the server spent
// on the request: decoding, executing and encoding its reply (not the wait for an fsync or a
// replica, which /metrics shows as the WAL's fsync histogram). A pipelined run of writes that
// executes as one batch gives each of its requests an equal share of the batch's time.
//
// Thread-safety: a CommandRecorder's Record* from its one owning thread; AddTo from any thread.
// CommandMetrics is plain data.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "storage/status.h"

namespace relgraph::net {

// The latency buckets' upper bounds, in nanoseconds: 1 µs to 1 s.
inline constexpr std::array<uint64_t, 19> kLatencyBoundsNs = {
    1'000,      2'500,      5'000,       10'000,      25'000,     50'000,     100'000,
    250'000,    500'000,    1'000'000,   2'500'000,   5'000'000,  10'000'000, 25'000'000,
    50'000'000, 100'000'000, 250'000'000, 500'000'000, 1'000'000'000};
inline constexpr size_t kLatencyBuckets = kLatencyBoundsNs.size() + 1;  // and past the last
inline constexpr size_t kErrorCodes = kMaxCode + 1;

struct CommandCounts {
  uint64_t requests = 0;
  uint64_t latency_ns = 0;  // the sum
  std::array<uint64_t, kLatencyBuckets> buckets{};  // per bucket, not cumulative
  std::array<uint64_t, kErrorCodes> errors{};       // by Code; errors[0] is unused
};

struct CommandMetrics {
  std::array<CommandCounts, 256> commands{};  // by opcode
  uint64_t bytes_in = 0;   // read from clients' sockets
  uint64_t bytes_out = 0;  // written to them
  uint64_t slow_commands = 0;  // kept by the slow-command log since start (slow_log.h)
};

class CommandRecorder {
 public:
  // One request of `opcode` took `ns`; `code` is its reply's (kOk: not an error).
  void Record(uint8_t opcode, uint64_t ns, Code code) {
    Slot& s = slots_[opcode];
    Bump(s.requests, 1);
    Bump(s.latency_ns, ns);
    size_t b = 0;
    while (b < kLatencyBoundsNs.size() && ns > kLatencyBoundsNs[b]) ++b;
    Bump(s.buckets[b], 1);
    if (code != Code::kOk) Bump(s.errors[static_cast<uint16_t>(code) % kErrorCodes], 1);
  }
  void RecordBytesIn(uint64_t n) { Bump(bytes_in_, n); }
  void RecordBytesOut(uint64_t n) { Bump(bytes_out_, n); }

  // Adds what this recorder counted to *m.
  void AddTo(CommandMetrics* m) const;

 private:
  using Counter = std::atomic<uint64_t>;
  // Single writer: a relaxed load and store, no read-modify-write.
  static void Bump(Counter& c, uint64_t n) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  struct Slot {
    Counter requests{0};
    Counter latency_ns{0};
    std::array<Counter, kLatencyBuckets> buckets{};
    std::array<Counter, kErrorCodes> errors{};
  };
  std::array<Slot, 256> slots_{};
  Counter bytes_in_{0};
  Counter bytes_out_{0};
};

}  // namespace relgraph::net
