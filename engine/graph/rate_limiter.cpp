#include "engine/graph/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace relgraph {

RateLimiter::RateLimiter(const RateLimitOptions& options)
    : enabled_(options.enabled),
      capacity_(std::llround(options.capacity * kMicroTokensPerToken)),
      per_ms_(std::llround(options.refill_per_second * 1000)) {}

int64_t RateLimiter::Refilled(const Bucket& b, TimestampMs now) const {
  const int64_t elapsed = std::max<int64_t>(0, now - b.last_ms);
  // Saturate before multiplying: elapsed * per_ms_ could overflow after a long idle time.
  if (elapsed >= (capacity_ - b.micro_tokens) / std::max<int64_t>(per_ms_, 1) + 1) return capacity_;
  return std::min(capacity_, b.micro_tokens + elapsed * per_ms_);
}

int64_t RateLimiter::TryAcquire(UserId user, TimestampMs now) {
  if (!enabled_) return 0;
  auto [it, inserted] = buckets_.try_emplace(user, Bucket{capacity_, now});
  Bucket& b = it->second;
  const int64_t tokens = inserted ? capacity_ : Refilled(b, now);
  if (tokens < kMicroTokensPerToken) {
    b.micro_tokens = tokens;
    b.last_ms = std::max(b.last_ms, now);
    const int64_t missing = kMicroTokensPerToken - tokens;
    return (missing + per_ms_ - 1) / per_ms_;
  }
  b.micro_tokens = tokens - kMicroTokensPerToken;
  b.last_ms = std::max(b.last_ms, now);
  if (buckets_.size() >= sweep_at_) Sweep(now);
  return 0;
}

void RateLimiter::Sweep(TimestampMs now) {
  std::erase_if(buckets_, [&](const auto& kv) { return Refilled(kv.second, now) >= capacity_; });
  sweep_at_ = std::max<size_t>(4096, buckets_.size() * 2);
}

size_t RateLimiter::MemoryBytes() const {
  // Node-based map: one node (key, value, next, cached hash) plus a bucket pointer per entry.
  return buckets_.size() * (sizeof(UserId) + sizeof(Bucket) + 2 * sizeof(void*)) +
         buckets_.bucket_count() * sizeof(void*);
}

}  // namespace relgraph
