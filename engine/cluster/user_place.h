// Where a cluster shard has a user, as its shard map says (docs/cluster.md; the shard node
// tells the Db through Db::SetPlacement). It decides what the Db does about the copies of
// other shards' authors' posts.
// Thread-safety: values.
#pragma once

#include <cstdint>
#include <functional>

#include "engine/types.h"

namespace relgraph {

enum class UserPlace : uint8_t {
  kHere,        // decided here and staying: its follows make the author's shard send posts here
  kLeaving,     // its bucket is moving away (prepare, flip): still decided here
  kHandedOver,  // moving away (copy): decided by the new owner; its own posts stay here until
                // the old owner drops them, and may not have been exported yet
  kElsewhere,   // another shard's
};
inline bool DecidedHere(UserPlace p) {
  return p == UserPlace::kHere || p == UserPlace::kLeaving;
}
// nullptr: a single node, every user here.
using PlacementFn = std::function<UserPlace(UserId)>;

}  // namespace relgraph
