// SlowLog: the server's slow-command log (docs/protocol.md, "Slow-command log"): every command
// that took at least the threshold, in a bounded ring, read (and emptied) with SLOWLOG.
//
// Why this design: the server is what knows a command's duration and its client, so the ring
// lives in net/server and SLOWLOG is answered by the server itself, like PING (the command
// service lists it as not served): net/service.h stays the engine's interface alone, and a
// replica, a shard or a primary answer it the same way. A command below the threshold costs
// one relaxed load (Wants); only a slow one takes the lock, renders its arguments and is
// handed to `on_entry` (relgraphd's log line), outside the lock.
//
// Thread-safety: every method from any thread (io workers and the background runner add).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>

#include "net/protocol/messages.h"

namespace relgraph::net {

inline constexpr int64_t kSlowLogOff = -1;

class SlowLog {
 public:
  using OnEntry = std::function<void(const SlowlogEntry&)>;
  // threshold_us: log commands taking at least this many µs (0: all; kSlowLogOff: none).
  SlowLog(int64_t threshold_us, uint32_t max_len, OnEntry on_entry = nullptr);

  // Whether a command of `ns` nanoseconds is kept.
  bool Wants(uint64_t ns) const {
    const int64_t t = threshold_us_.load(std::memory_order_relaxed);
    return t >= 0 && ns / 1000 >= static_cast<uint64_t>(t);
  }
  // Keeps `entry` (its id is assigned here), dropping the oldest past max_len, then calls
  // on_entry. REQUIRES: Wants(entry's duration) was true (not checked: a reconfiguration
  // between the two is harmless).
  void Add(SlowlogEntry entry);
  // The newest `count` entries (0: all), newest first, with the threshold and length in
  // force; with `reset`, the log is emptied in the same step (ids keep growing).
  SlowlogReply Read(uint16_t count, bool reset);
  // Changes the threshold and the length at once; a shorter length drops the oldest entries.
  void Configure(int64_t threshold_us, uint32_t max_len);
  int64_t threshold_us() const { return threshold_us_.load(std::memory_order_relaxed); }
  uint32_t max_len() const;
  // Entries added since start (reset does not lower it): /metrics' relgraph_slow_commands_total.
  uint64_t total() const { return total_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> threshold_us_;
  std::atomic<uint64_t> total_{0};
  const OnEntry on_entry_;
  mutable std::mutex mu_;
  uint32_t max_len_;                  // guarded by mu_
  uint64_t next_id_ = 1;              // guarded by mu_
  std::deque<SlowlogEntry> entries_;  // oldest first; guarded by mu_
};

}  // namespace relgraph::net
