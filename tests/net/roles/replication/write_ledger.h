// What a failover test's writers were told: a pair followed and acknowledged must be there at
// the end; one unfollowed and acknowledged must not; a pair whose last write's outcome is
// unknown (its primary died, or the reply timed out) may be either.
//
// Thread-safety: thread-safe (the writers share one).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

namespace relgraph::testing {

struct Ledger {
  enum class State { kFollowed, kUnfollowed, kUnknown };
  std::mutex mu;
  std::map<std::pair<uint64_t, uint64_t>, State> pairs;  // guarded by mu
  uint64_t acked = 0;                                    // guarded by mu
  void Set(uint64_t a, uint64_t b, State s) {
    std::lock_guard lock(mu);
    pairs[{a, b}] = s;
    if (s != State::kUnknown) ++acked;
  }
  uint64_t Acked() {
    std::lock_guard lock(mu);
    return acked;
  }
};

}  // namespace relgraph::testing
