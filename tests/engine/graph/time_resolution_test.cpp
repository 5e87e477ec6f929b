#include "engine/graph/time_resolution.h"

#include <doctest.h>

#include <random>

namespace relgraph {
namespace {

TEST_CASE("time_resolution: names parse both ways; anything else is refused by name") {
  uint32_t unit = 0;
  REQUIRE(ParseTimeResolution("1ms", &unit).ok());
  CHECK(unit == 1);
  REQUIRE(ParseTimeResolution("1s", &unit).ok());
  CHECK(unit == 1000);
  CHECK(TimeResolutionName(1) == "1ms");
  CHECK(TimeResolutionName(1000) == "1s");
  for (const char* bad : {"", "1", "ms", "1000", "10ms", "1S", "1s "}) {
    CAPTURE(bad);
    const Status s = ParseTimeResolution(bad, &unit);
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message().find("'" + std::string(bad) + "'") != std::string::npos);
  }
}

TEST_CASE("time_resolution: stored times round down and answer whole units") {
  const TimeResolution ms(1), s(1000);
  CHECK(ms.Stored(1'700'000'000'999) == 1'700'000'000'999);
  CHECK(s.Stored(1'700'000'000'999) == 1'700'000'000);
  CHECK(s.Answered(s.Stored(1'700'000'000'999)) == 1'700'000'000'000);
  CHECK(s.Stored(kMaxTimestampMs) * 1000 <= kMaxTimestampMs);
}

// A cursor selects the entries strictly older than it: the same entries whether compared in
// milliseconds or, through StoredKey, in stored units.
TEST_CASE("time_resolution: a cursor's stored key selects the same entries as in milliseconds") {
  std::mt19937_64 rng(5);
  for (uint32_t unit : {1u, 1000u}) {
    const TimeResolution r(unit);
    for (int i = 0; i < 200'000; ++i) {
      const EntryKey entry{static_cast<TimestampMs>(rng() % 5), 1 + rng() % 4};  // stored
      const EntryKey cursor{static_cast<TimestampMs>(rng() % 5000), rng() % 6};  // ms
      const bool older_ms = EntryKey{r.Answered(entry.ts), entry.user} < cursor;
      REQUIRE(older_ms == (entry < r.StoredKey(cursor)));
    }
  }
}

}  // namespace
}  // namespace relgraph
