// UserRecord: what the graph keeps per user, indexed by internal id: the external id, the two
// lists' handles and the counters that are not list sizes. 28 bytes.
//
// Why the external id is here: the id map's slots keep only the internal id and a fingerprint
// (engine/graph/id_map.h), so a lookup confirms its key by reading the record, which the query
// reads next anyway: the confirmation costs no cache miss of its own.
//
// Thread-safety: none; the owning graph serializes mutations.
#pragma once

#include <cstdint>

#include "engine/graph/fan_list.h"
#include "engine/graph/following_list.h"
#include "engine/types.h"

namespace relgraph {

#pragma pack(push, 4)
struct UserRecord {
  UserId external = 0;
  FollowingList following;
  FanList fans;
  uint32_t friends : 24 = 0;  // <= following <= kMaxFollowingLimit (2^19 - 1)
  uint32_t access : 8 = 0;    // Graph's kPrivateBit and kHasAccessBit
};
#pragma pack(pop)
static_assert(sizeof(UserRecord) == 28);

}  // namespace relgraph
