#include "engine/graph/time_resolution.h"

namespace relgraph {

Status ParseTimeResolution(std::string_view text, uint32_t* unit_ms) {
  if (text == "1ms") {
    *unit_ms = 1;
  } else if (text == "1s") {
    *unit_ms = 1000;
  } else {
    return Status::InvalidArgument("follow time resolution must be 1ms or 1s, got '" +
                                   std::string(text) + "'");
  }
  return Status::OK();
}

std::string TimeResolutionName(uint32_t unit_ms) {
  return unit_ms == 1000 ? "1s" : unit_ms == 1 ? "1ms" : std::to_string(unit_ms) + "ms";
}

}  // namespace relgraph
