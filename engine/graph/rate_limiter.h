// RateLimiter: a token bucket per follower, kept only for followers who spent tokens recently.
//
// Exact semantics (the differential test's reference model implements the same):
//   tokens are counted in micro-tokens; a bucket starts full (capacity); each elapsed
//   millisecond adds round(refill_per_second * 1000) micro-tokens, up to capacity; a follow
//   costs 1,000,000. When fewer are left, the call is refused with
//   retry_after_ms = ceil(missing / per_ms) and nothing is spent.
//   Time that goes backwards adds nothing.
// A bucket that would be full again is indistinguishable from no bucket, so Sweep() drops them:
// memory is proportional to recently active followers, not to all users.
//
// Thread-safety: none; the owning graph serializes follows.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "engine/types.h"

namespace relgraph {

class RateLimiter {
 public:
  explicit RateLimiter(const RateLimitOptions& options);

  bool enabled() const { return enabled_; }
  // Spends one token of `user` at time `now`; returns 0 on success, else the milliseconds
  // until a token will be available (nothing spent).
  int64_t TryAcquire(UserId user, TimestampMs now);
  // Forgets a user's bucket (account deletion).
  void Forget(UserId user) { buckets_.erase(user); }
  size_t tracked_users() const { return buckets_.size(); }
  size_t MemoryBytes() const;

 private:
  struct Bucket {
    int64_t micro_tokens;
    TimestampMs last_ms;
  };
  int64_t Refilled(const Bucket& b, TimestampMs now) const;
  void Sweep(TimestampMs now);

  bool enabled_;
  int64_t capacity_;  // micro-tokens
  int64_t per_ms_;    // micro-tokens added per millisecond
  std::unordered_map<UserId, Bucket> buckets_;
  size_t sweep_at_ = 4096;
};

inline constexpr int64_t kMicroTokensPerToken = 1'000'000;

}  // namespace relgraph
