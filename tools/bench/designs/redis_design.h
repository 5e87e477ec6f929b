// The Redis sorted-set design (docs/comparison.md), through hiredis:
//   fo:{u}  whom u follows     fa:{u}  who follows u     fr:{u}  u's friends
//   tl:{u}  u's home timeline, trimmed to the newest 300 posts
// each a sorted set of user (or post) ids scored by the time. Follow and unfollow are Lua
// scripts that keep the four sets (and so friends) consistent; publish is a Lua script that
// pushes the post into every fan's timeline and the author's own. Reads are the commands of
// the design; an operation whose second command needs the first's answer (a page with the
// viewer's relation) takes a second round trip for the whole batch.
//
// Thread-safety: one instance per thread.
#pragma once

#include <memory>
#include <string>

#include "tools/bench/designs/design.h"

namespace relgraph::bench {

inline constexpr uint32_t kRedisTimelineLength = 300;  // relgraphd's --feed-timeline-length

// url: redis://HOST:PORT.
Result<std::unique_ptr<Design>> ConnectRedisDesign(const std::string& url, uint32_t max_following);

}  // namespace relgraph::bench
