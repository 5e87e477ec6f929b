#include "net/server/command_metrics.h"

namespace relgraph::net {

void CommandRecorder::AddTo(CommandMetrics* m) const {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  for (size_t op = 0; op < slots_.size(); ++op) {
    const Slot& s = slots_[op];
    const uint64_t requests = s.requests.load(kRelaxed);
    if (requests == 0) continue;
    CommandCounts& c = m->commands[op];
    c.requests += requests;
    c.latency_ns += s.latency_ns.load(kRelaxed);
    for (size_t b = 0; b < kLatencyBuckets; ++b) c.buckets[b] += s.buckets[b].load(kRelaxed);
    for (size_t e = 0; e < kErrorCodes; ++e) c.errors[e] += s.errors[e].load(kRelaxed);
  }
  m->bytes_in += bytes_in_.load(kRelaxed);
  m->bytes_out += bytes_out_.load(kRelaxed);
}

}  // namespace relgraph::net
