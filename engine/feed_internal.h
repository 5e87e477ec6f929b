// Private structures of Feed, shared by its implementation files (feed.cpp: writes, hooks and
// fan-out; feed_read.cpp: timelines and inbox builds; feed_state.cpp: stats and snapshots).
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "engine/feed.h"
#include "engine/id_list_pair.h"

namespace relgraph {

// One reader's materialized inbox, in two parts kept in parallel pools (one slot names both):
// - Inbox, 40 bytes: what the fan-out touches for every insert (the entries, the watermark,
//   the last read), so the fan-out reaches an inbox's newest entry in two dependent loads
//   (slot, header) after the reader's slot, and the pool packs 1.6 headers to a cache line.
// - InboxCold, 12 bytes: what only reads, the memory budget and checks use.
// Split, a reader's inbox costs 52 bytes before entries, not 64 (docs/feed.md, "Memory per
// inbox entry and per post"). The memory budget evicts by CLOCK (second chance) over the
// cold pool, not by an LRU list: a read only sets `referenced` in a line it has loaded
// anyway, instead of relinking neighbours.
//
// Inbox derives from its entry buffer, not holds it, so that last_read fills the buffer's
// tail padding.
struct Feed::Inbox : InboxBuffer {
  // Activity ticks (Feed::ActivityTick) at the last read.
  uint32_t last_read = 0;
  // Exact above the watermark: every such post with a greater key whose fan-out has run is
  // in the entries. Posts at or below it may be missing (trimmed), so reads fall back to
  // pull. watermark_ts < 0: no watermark (the inbox holds every such post).
  TimestampMs watermark_ts = -1;
  PostId watermark_id = 0;

  // Posts of visible ordinary followees, oldest first, at most R.
  InboxBuffer& entries() { return *this; }
  const InboxBuffer& entries() const { return *this; }
  bool has_watermark() const { return watermark_ts >= 0; }
  PostKey watermark() const { return {watermark_ts, watermark_id}; }
  void set_watermark(const PostKey& k) {
    watermark_ts = k.ts;
    watermark_id = k.post;
  }
  // True when k is at or below the watermark, where the inbox is not kept exact.
  bool Below(const PostKey& k) const { return has_watermark() && !(watermark() < k); }
  // Back to a free slot's state.
  // REQUIRES: entries is empty and holds no block (Clear it with its allocator first).
  void Reset() {
    last_read = 0;
    watermark_ts = -1;
    watermark_id = 0;
  }
};

struct Feed::InboxCold {
  InternalId reader = kNoInternalId;  // the owner; kNoInternalId for a free slot
  // Low 31 bits of the celebrity epoch the side's celebrity list was built at (0: stale).
  uint32_t celebrities_epoch : 31 = 0;
  uint32_t referenced : 1 = 0;  // read since the budget's clock hand last passed
  uint32_t side = kNoSlot;      // index into Feed::sides_, or none (no celebrities, no pending)
};

// The parts of an inbox that most inboxes do not need, kept off the fan-out's cache line: the
// reader's visible celebrity followees (for pulls), then the authors whose visibility
// changed since the last read. 16 bytes here, the ids in a block of Feed::side_pool_.
struct Feed::InboxSide : IdListPair {
  std::span<const InternalId> celebrities() const { return first(); }
  std::span<const InternalId> pending() const { return second(); }
  size_t MemoryBytes() const { return sizeof(InboxSide) + BlockBytes(); }
};

inline Feed::Inbox* Feed::InboxOf(InternalId reader) {
  const uint32_t slot = SlotOf(reader);
  return slot == kNoSlot ? nullptr : &inbox_pool_[slot];
}

inline Feed::InboxCold& Feed::ColdOf(InternalId reader) {
  return inbox_cold_[SlotOf(reader)];
}

inline bool Feed::Inactive(const Inbox& in, uint32_t now_tick) const {
  return uint64_t{now_tick} > uint64_t{in.last_read} + active_ticks_;
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
