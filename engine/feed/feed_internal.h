// Helpers shared by Feed's implementation files (feed.cpp: writes, hooks and replay;
// feed_fanout.cpp: the background fan-out; feed_read.cpp: timelines and inbox builds;
// feed_state.cpp: stats and snapshots; feed_verify.cpp: checks).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "engine/feed/feed.h"

namespace relgraph {

template <typename Fn>
void Feed::ForEachVisibleCelebrity(const Graph& g, InternalId reader, Fn&& fn) const {
  const FollowingList& following = g.FollowingOf(reader);
  for (size_t i = 0; i < following.size(); ++i) {
    const InternalId f = following.PeerAt(i);
    if (audience_.IsCelebrity(f) && audience_.Visible(reader, f)) fn(f);
  }
}

// kInvalidUserId for id 0, naming the id's role ("author", "user", ...).
inline Status CheckUser(UserId u, const char* role) {
  if (u == 0) return Status(Code::kInvalidUserId, std::string(role) + " id must be nonzero");
  return Status::OK();
}

inline bool SortedContains(const std::vector<InternalId>& v, InternalId x) {
  return std::binary_search(v.begin(), v.end(), x);
}

}  // namespace relgraph
