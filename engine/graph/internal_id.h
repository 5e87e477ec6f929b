// InternalId: the dense 32-bit number the graph gives each user (IdMap hands them out).
#pragma once

#include <cstdint>

namespace relgraph {

using InternalId = uint32_t;
inline constexpr InternalId kNoInternalId = UINT32_MAX;

}  // namespace relgraph
