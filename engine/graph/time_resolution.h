// TimeResolution: the unit in which the graph keeps its times (GraphOptions::
// time_resolution_ms; relgraphd's --follow-time-resolution=1ms|1s; docs/design.md, "Time
// resolution").
//
// Why this design: a packed list spends on each time the bits of its distance from the list's
// oldest (engine/graph/following_list.h, packed_run.h). Times kept in seconds are 1000 times
// smaller numbers, ~10 bits less an entry on each side of an edge, for products that show
// follow times to the second. The lists hold *stored* times (milliseconds / unit); the
// Graph's public calls take and answer milliseconds, converting at that boundary only, so that
// nothing below it knows the unit. A stored time converts back to a whole number of units in
// milliseconds: with 1 s every answer, cursor and logged time is a multiple of 1000.
//
// Thread-safety: immutable.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/graph/edge_entry.h"
#include "storage/status.h"

namespace relgraph {

class TimeResolution {
 public:
  // REQUIRES: unit_ms is 1 or 1000 (ValidateGraphOptions).
  explicit TimeResolution(uint32_t unit_ms = 1) : unit_(unit_ms) {}
  uint32_t unit_ms() const { return unit_; }
  bool exact() const { return unit_ == 1; }
  // A time in [0, kMaxTimestampMs] as the lists keep it: rounded down to the unit.
  TimestampMs Stored(TimestampMs ms) const { return exact() ? ms : ms / unit_; }
  TimestampMs Answered(TimestampMs stored) const { return stored * unit_; }
  // A cursor (entries strictly older than `key`) as a key over stored times. A time between
  // two units keeps every entry of the unit below it: (t, any user) < (ms, user) for every
  // t * unit < ms, so the key is (t + 1, user 0), which no entry equals.
  EntryKey StoredKey(EntryKey key) const {
    if (exact() || key.ts % unit_ == 0) return {Stored(key.ts), key.user};
    return {key.ts / unit_ + 1, 0};
  }

 private:
  uint32_t unit_;
};

// "1ms" -> 1, "1s" -> 1000; kInvalidArgument naming the text otherwise.
Status ParseTimeResolution(std::string_view text, uint32_t* unit_ms);
// 1 -> "1ms", 1000 -> "1s".
std::string TimeResolutionName(uint32_t unit_ms);

}  // namespace relgraph
