#include "tools/bench/replica_lag.h"

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "tools/bench/pipelined_clients.h"

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
  const Status status = TimeMarkers(
      seconds, std::chrono::seconds(10), "a follow on the replica",
      [&](uint64_t m) -> Status {
        auto followed = (*marker)->Follow(kMarkerBase + m, kMarkerBase + 1'000'000'000 + m);
        if (!followed.ok()) return followed.status();
        if (!followed->created) return Status(Code::kInternal, "a marker follow existed already");
        return Status::OK();
      },
      [&](uint64_t m) -> Result<bool> {
        auto rel = (*reader)->Relation(kMarkerBase + m, kMarkerBase + 1'000'000'000 + m);
        if (!rel.ok()) return rel.status();
        return *rel == net::RelationCode::kFollowing;
      },
      &lags);
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
