#include "engine/graph/clock.h"

#include <chrono>

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
  switch (r) {
    case Relation::kNone:
      return "none";
    case Relation::kFollowing:
      return "following";
    case Relation::kFollowedBy:
      return "followed_by";
    case Relation::kMutual:
      return "mutual";
  }
  return "unknown";
}

}  // namespace relgraph
