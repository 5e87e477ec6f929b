#include <doctest.h>

#include "engine/graph/rate_limiter.h"

namespace relgraph {
namespace {

TEST_CASE("rate_limiter: a full bucket allows `capacity` follows, then reports the wait") {
  RateLimiter rl({true, 3, 2});  // 3 tokens, 2 per second: one token per 500 ms
  for (int i = 0; i < 3; ++i) CHECK(rl.TryAcquire(1, 1000) == 0);
  CHECK(rl.TryAcquire(1, 1000) == 500);
  CHECK(rl.TryAcquire(1, 1300) == 200);  // partial refill counts
  CHECK(rl.TryAcquire(1, 1500) == 0);
  CHECK(rl.TryAcquire(2, 1500) == 0);  // buckets are per user
}

TEST_CASE("rate_limiter: refill saturates at capacity and time going backwards adds nothing") {
  RateLimiter rl({true, 2, 1});
  CHECK(rl.TryAcquire(1, 0) == 0);
  CHECK(rl.TryAcquire(1, 0) == 0);
  CHECK(rl.TryAcquire(1, -5000) == 1000);
  // After a very long idle time the bucket holds exactly `capacity`, no overflow.
  CHECK(rl.TryAcquire(1, int64_t{1} << 41) == 0);
  CHECK(rl.TryAcquire(1, int64_t{1} << 41) == 0);
  CHECK(rl.TryAcquire(1, int64_t{1} << 41) == 1000);
}

TEST_CASE("rate_limiter: buckets that refilled are swept, so memory follows active users") {
  RateLimiter rl({true, 100, 1});
  for (UserId u = 1; u <= 10'000; ++u) CHECK(rl.TryAcquire(u, 0) == 0);
  // One second later every bucket is full again; the next sweep drops them.
  for (UserId u = 20'001; u <= 30'000; ++u) CHECK(rl.TryAcquire(u, 1000) == 0);
  CHECK(rl.tracked_users() < 15'000);
}

TEST_CASE("rate_limiter: disabled never refuses") {
  RateLimiter rl({false, 1, 1});
  for (int i = 0; i < 100; ++i) CHECK(rl.TryAcquire(1, 0) == 0);
  CHECK(rl.tracked_users() == 0);
}

}  // namespace
}  // namespace relgraph
