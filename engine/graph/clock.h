// Time source of the engine, injectable for tests.
// Thread-safety: SystemClock is thread-safe; ManualClock is not (tests drive it from one thread).
#pragma once

#include "engine/types.h"

namespace relgraph {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch. May go backwards; the graph never lets its own
  // timestamps do so (it keeps the maximum it has handed out).
  virtual TimestampMs NowMs() = 0;
};

class SystemClock final : public Clock {
 public:
  TimestampMs NowMs() override;
  static SystemClock* Default();  // process-wide instance, never destroyed
};

class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimestampMs start = 1'700'000'000'000) : now_(start) {}
  TimestampMs NowMs() override { return now_; }
  void Set(TimestampMs t) { now_ = t; }
  void Advance(TimestampMs delta) { now_ += delta; }

 private:
  TimestampMs now_;
};

}  // namespace relgraph
