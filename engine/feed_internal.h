// Private structures of Feed, shared by its implementation files (feed.cpp: writes, hooks and
// fan-out; feed_read.cpp: timelines and inbox builds; feed_state.cpp: stats and snapshots).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "engine/feed.h"

namespace relgraph {

struct Feed::Inbox {
  PostBuffer entries;  // posts of visible ordinary followees, oldest first, at most R
  // Exact above the watermark: every such post with a greater key whose fan-out has run is
  // in `entries`. Posts at or below it may be missing (trimmed), so reads fall back to pull.
  std::optional<PostKey> watermark;
  TimestampMs last_read = 0;
  InternalId lru_prev = kNoInternalId, lru_next = kNoInternalId;
  std::vector<InternalId> celebrities;  // visible celebrity followees, for pulls
  uint64_t celebrities_epoch = 0;       // 0: stale
  std::vector<InternalId> pending;      // authors whose visibility changed since the last read
};

struct Feed::FeedUser {
  PostBuffer posts;  // retained, undeleted posts, oldest first, at most K
  std::unique_ptr<Inbox> inbox;
  std::vector<InternalId> mutes;  // sorted: authors this user does not want to see
  std::vector<InternalId> hides;  // sorted: readers this author keeps its posts from
};

// kInvalidUserId for id 0, naming the id's role ("author", "user", ...).
inline Status CheckUser(UserId u, const char* role) {
  if (u == 0) return Status(Code::kInvalidUserId, std::string(role) + " id must be nonzero");
  return Status::OK();
}

inline bool SortedContains(const std::vector<InternalId>& v, InternalId x) {
  return std::binary_search(v.begin(), v.end(), x);
}

}  // namespace relgraph
