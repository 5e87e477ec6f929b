// Per-user slot arrays: a uint32_t per user id naming something in a pool (a ring, an inbox),
// ~0u for "none". Thread-safety: as the vector's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace relgraph {

// Grows `slots` (filled with ~0u) to cover index u. Sized to `users` (the graph's user count)
// plus an eighth for growth: a doubling vector would leave up to half of a per-user array
// unused.
inline void GrowSlotArray(std::vector<uint32_t>& slots, size_t u, size_t users) {
  if (u < slots.size()) return;
  const size_t want = std::max<size_t>(u + 1, users);
  slots.reserve(want + want / 8);
  slots.resize(want, ~uint32_t{0});
}

}  // namespace relgraph
