// What a failover test's writers were told: a pair followed and acknowledged must be there at
// the end; one unfollowed and acknowledged must not; a pair whose last write's outcome is
// unknown (its primary died, or the reply timed out) may be either.
//
// Thread-safety: thread-safe (the writers share one).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

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

// One writer until *stop: follows of fresh pairs (follower 100000 + n for the n-th write
// drawn from *next, followee target(n)) and, every seventh write, an unfollow of the last pair
// it followed, each recorded in *ledger as unknown before it is sent and as done once
// acknowledged. `client` is any client with Follow and Unfollow (one that finds the primary).
template <typename Client, typename Target>
void WriteFreshPairs(Client& client, Target target, std::atomic<uint64_t>* next, Ledger* ledger,
                     const std::atomic<bool>* stop) {
  std::vector<std::pair<uint64_t, uint64_t>> followed;
  while (!*stop) {
    const uint64_t n = next->fetch_add(1);
    if (n % 7 == 3 && !followed.empty()) {
      const auto [a, b] = followed.back();
      followed.pop_back();
      ledger->Set(a, b, Ledger::State::kUnknown);
      if (client.Unfollow(a, b).ok()) ledger->Set(a, b, Ledger::State::kUnfollowed);
      continue;
    }
    const uint64_t a = 100000 + n, b = target(n);
    ledger->Set(a, b, Ledger::State::kUnknown);
    if (client.Follow(a, b).ok()) {
      ledger->Set(a, b, Ledger::State::kFollowed);
      followed.push_back({a, b});
    }
  }
}

// Sets *stop and joins the writers when it goes out of scope, also when a REQUIRE ends the
// test early.
struct JoinWriters {
  std::atomic<bool>& stop;
  std::vector<std::thread>& writers;
  ~JoinWriters() {
    stop = true;
    for (auto& t : writers) {
      if (t.joinable()) t.join();
    }
  }
};

}  // namespace relgraph::testing
