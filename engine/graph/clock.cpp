#include "engine/graph/clock.h"

#include <array>
#include <chrono>
#include <string>

namespace relgraph {

TimestampMs SystemClock::NowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

SystemClock* SystemClock::Default() {
  static SystemClock* clock = new SystemClock();
  return clock;
}

const char* RelationName(Relation r) {
  // Every combination of the six bits, named once.
  static const std::array<std::string, 64> names = [] {
    static constexpr const char* kBitNames[] = {"following",    "followed_by", "requested",
                                                "requested_by", "blocking",    "blocked_by"};
    std::array<std::string, 64> out;
    out[0] = "none";
    out[3] = "mutual";
    for (uint32_t v = 1; v < 64; ++v) {
      if (v == 3) continue;
      std::string name = (v & 3) == 3 ? "mutual" : "";
      for (uint32_t bit = (v & 3) == 3 ? 2 : 0; bit < 6; ++bit) {
        if ((v & (1u << bit)) == 0) continue;
        if (!name.empty()) name += '+';
        name += kBitNames[bit];
      }
      out[v] = name;
    }
    return out;
  }();
  const uint8_t v = static_cast<uint8_t>(r);
  return v < 64 ? names[v].c_str() : "invalid";
}

}  // namespace relgraph
