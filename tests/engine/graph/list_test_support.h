// What the list tests share: users interned so that internal id = index, and the random shape
// of a list kept short (sizes in [0, top], a 32- or 42-bit base time, spans of a millisecond to
// years, mostly appends of the newest entry).
#pragma once

#include <doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "engine/graph/id_map.h"

namespace relgraph::testing {

struct InternedUsers {
  std::vector<UserId> external;
  IdMap ids;
  InternedUsers(std::mt19937_64& rng, size_t n) : external(n) {
    for (UserId& u : external) u = rng() | 1;
    for (UserId u : external) {
      const InternalId id = ids.Intern(u);
      REQUIRE(id + 1 == ids.size());  // internal id = index
    }
  }
};

struct ShortListRound {
  TimestampMs origin;
  uint64_t span;
  uint32_t top;  // the most entries the list holds

  explicit ShortListRound(std::mt19937_64& rng)
      : origin(rng() % 2 == 0 ? 0 : (TimestampMs{1} << 41)),
        span(uint64_t{1} << (rng() % 38)),
        top(1 + static_cast<uint32_t>(rng() % 10)) {}

  // The time of an insert: mostly after `newest` (an append), sometimes anywhere in the span.
  TimestampMs NextTime(std::mt19937_64& rng, TimestampMs newest) const {
    if (rng() % 4 == 0) return origin + static_cast<TimestampMs>(rng() % (span + 1));
    return newest + static_cast<TimestampMs>(rng() % (span / 8 + 2));
  }
};

}  // namespace relgraph::testing
