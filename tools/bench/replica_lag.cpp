#include "tools/bench/replica_lag.h"

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

namespace relgraph::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

}  // namespace

Result<WorkloadResult> ReplicaLag(const net::ClientOptions& primary,
                                  const net::ClientOptions& replica, uint32_t pipeline,
                                  double seconds) {
  auto load = net::Client::Connect(primary);
  if (!load.ok()) return load.status();
  auto marker = net::Client::Connect(primary);
  if (!marker.ok()) return marker.status();
  auto reader = net::Client::Connect(replica);
  if (!reader.ok()) return reader.status();
  // Fresh users far above any loaded graph's, and apart from earlier runs', so every follow
  // creates an edge (a follow that exists already is logged nowhere and would show at once).
  const uint64_t run = std::random_device{}() & 0xffff;
  const uint64_t kLoadBase = (uint64_t{1} << 40) + (run << 23);
  const uint64_t kMarkerBase = (uint64_t{1} << 41) + (run << 23);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> loaded{0};
  Status load_status;
  std::thread loader([&] {
    for (uint64_t i = 0; !stop;) {
      for (uint32_t k = 0; k < pipeline; ++k, ++i) {
        (*load)->Queue(
            net::FollowRequest{kLoadBase + i / 900, kLoadBase + 1'000'000 + i % 900, std::nullopt});
      }
      auto replies = (*load)->Flush();
      if (!replies.ok()) {
        load_status = replies.status();
        return;
      }
      loaded.fetch_add(pipeline);
    }
  });
  std::vector<double> lags;
  const auto start = SteadyClock::now();
  Status status;
  for (uint64_t m = 0; SteadyClock::now() - start < std::chrono::duration<double>(seconds); ++m) {
    const uint64_t a = kMarkerBase + m, b = kMarkerBase + 1'000'000'000 + m;
    auto followed = (*marker)->Follow(a, b);
    if (!followed.ok() || !followed->created) {
      status = followed.ok() ? Status(Code::kInternal, "a marker follow existed already")
                             : followed.status();
      break;
    }
    const auto acked = SteadyClock::now();
    for (;;) {
      auto rel = (*reader)->Relation(a, b);
      if (!rel.ok()) {
        status = rel.status();
        break;
      }
      if (*rel == net::RelationCode::kFollowing) break;
      if (SteadyClock::now() - acked > std::chrono::seconds(10)) {
        status = Status(Code::kTimeout, "the replica did not show a follow within 10 s");
        break;
      }
    }
    if (!status.ok()) break;
    lags.push_back(std::chrono::duration<double, std::micro>(SteadyClock::now() - acked).count());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop = true;
  loader.join();
  const double secs = std::chrono::duration<double>(SteadyClock::now() - start).count();
  if (!status.ok()) return status;
  if (!load_status.ok()) return load_status;
  return Summarize("replica_lag", loaded.load(), secs, lags,
                   std::to_string(lags.size()) +
                       " markers: primary's ack to the replica showing it, under the load");
}

}  // namespace relgraph::bench
