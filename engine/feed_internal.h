// Private structures of Feed, shared by its implementation files (feed.cpp: writes, hooks and
// fan-out; feed_read.cpp: timelines and inbox builds; feed_state.cpp: stats and snapshots).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "engine/feed.h"

namespace relgraph {

// One reader's materialized inbox: a 64-byte header, one cache line, so the fan-out reaches
// an inbox's newest entry in two dependent loads (slot, header) after the reader's slot. The
// memory budget evicts by CLOCK (second chance) over the pool, not by an LRU list: a read
// only sets `referenced` in a line it has loaded anyway, instead of relinking neighbours.
struct alignas(64) Feed::Inbox {
  InboxBuffer entries;  // posts of visible ordinary followees, oldest first, at most R
  // Exact above the watermark: every such post with a greater key whose fan-out has run is
  // in `entries`. Posts at or below it may be missing (trimmed), so reads fall back to pull.
  // watermark_ts < 0: no watermark (the inbox holds every such post).
  TimestampMs watermark_ts = -1;
  PostId watermark_id = 0;
  TimestampMs last_read = 0;
  InternalId reader = kNoInternalId;  // the owner; kNoInternalId for a free slot
  uint32_t referenced = 0;            // 1: read since the budget's clock hand last passed
  // Low 32 bits of the celebrity epoch the side's celebrity list was built at (0: stale).
  uint32_t celebrities_epoch = 0;
  uint32_t side = kNoSlot;  // index into Feed::sides_, or none (no celebrities, no pending)

  bool has_watermark() const { return watermark_ts >= 0; }
  PostKey watermark() const { return {watermark_ts, watermark_id}; }
  void set_watermark(const PostKey& k) {
    watermark_ts = k.ts;
    watermark_id = k.post;
  }
  // True when e is at or below the watermark, where the inbox is not kept exact.
  // REQUIRES: entries is empty and holds no block (Clear it with its allocator first).
  void Reset() {
    watermark_ts = -1;
    watermark_id = 0;
    last_read = 0;
    reader = kNoInternalId;
    referenced = 0;
    celebrities_epoch = 0;
    side = kNoSlot;
  }
  bool Below(const PostKey& k) const { return has_watermark() && !(watermark() < k); }
};

// The parts of an inbox that most inboxes do not need, kept off the fan-out's cache line.
struct Feed::InboxSide {
  std::vector<InternalId> celebrities;  // visible celebrity followees, for pulls
  std::vector<InternalId> pending;      // authors whose visibility changed since the last read
  size_t MemoryBytes() const {
    return sizeof(InboxSide) + (celebrities.capacity() + pending.capacity()) * sizeof(InternalId);
  }
};

inline Feed::Inbox* Feed::InboxOf(InternalId reader) {
  const uint32_t slot = SlotOf(reader);
  return slot == kNoSlot ? nullptr : &inbox_pool_[slot];
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
