// Private structures of Feed, shared by its implementation files (feed.cpp: writes, hooks,
// inbox maintenance and replay; feed_fanout.cpp: the background fan-out; feed_read.cpp:
// timelines and inbox builds; feed_state.cpp: stats and snapshots; feed_verify.cpp: checks).
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "engine/feed/feed.h"
#include "engine/feed/id_list_pair.h"

namespace relgraph {

// One reader's materialized inbox, in two parts kept in parallel pools (one slot names both):
// - Inbox, 32 bytes: what the fan-out touches for every insert (the entries, the watermark's
//   time, the last read), so the fan-out reaches an inbox's newest entry in two dependent
//   loads (slot, header) after the reader's slot, and two headers share a cache line, none
//   crossing one.
// - InboxCold, 12 bytes: what only reads, the memory budget and checks use.
// Split, a reader's inbox costs 44 bytes before entries, not 64 (docs/feed.md, "Memory per
// inbox entry and per post"). The id of a watermark that a build set, which a comparison
// needs only at the watermark's own millisecond, lives apart in Feed::exact_watermarks_: few
// inboxes have one (a build sets it only when more than R posts qualify). The memory budget evicts
// by CLOCK (second chance) over the cold pool, not by an LRU list: a read only sets `referenced` in
// a line it has loaded anyway, instead of relinking neighbours.
//
// Inbox derives from its entry buffer, not holds it, so that last_read fills the buffer's
// tail padding.
struct Feed::Inbox : InboxBuffer {
  // Activity ticks (Feed::ActivityTick) at the last read.
  uint32_t last_read = 0;
  // Exact above the watermark: every such post with a greater key whose fan-out has run is
  // in the entries. Posts at or below it may be missing (trimmed), so reads fall back to
  // pull. -1: no watermark (the inbox holds every such post). Else the watermark's time
  // shifted left by one, and in bit 0 a 1 when the watermark is the top of its millisecond
  // (id ~0, set by trims), a 0 when its id is in Feed::exact_watermarks_ (set by builds).
  int64_t watermark = -1;

  // Posts of visible ordinary followees, oldest first, at most R.
  InboxBuffer& entries() { return *this; }
  const InboxBuffer& entries() const { return *this; }
  bool has_watermark() const { return watermark >= 0; }
  // A watermark a build set, whose id Feed::exact_watermarks_ keeps.
  bool has_exact_watermark() const { return watermark >= 0 && (watermark & 1) == 0; }
  TimestampMs watermark_ts() const { return watermark >> 1; }
  bool watermark_at_top() const { return (watermark & 1) != 0; }
  // True when k is at or below the watermark, where the inbox is not kept exact.
  // `exact_id()` gives the id kept apart; it is called only when k's time is the
  // watermark's and the watermark is not the top of its millisecond.
  template <typename ExactId>
  bool Below(const PostKey& k, ExactId&& exact_id) const {
    if (watermark < 0) return false;
    const TimestampMs ts = watermark_ts();
    if (k.ts != ts) return k.ts < ts;
    return watermark_at_top() || k.post <= exact_id();
  }
  // Raises the watermark to the top of millisecond ts, unless it is there or above already.
  void RaiseToTopOf(TimestampMs ts) {
    if (watermark < 0 || watermark_ts() < ts || (watermark_ts() == ts && !watermark_at_top()))
      watermark = (ts << 1) | 1;
  }
  // Back to a free slot's state.
  // REQUIRES: entries is empty and holds no block (Clear it with its allocator first).
  void Reset() {
    last_read = 0;
    watermark = -1;
  }
};

struct Feed::InboxCold {
  InternalId reader = kNoInternalId;  // the owner; kNoInternalId for a free slot
  // Low 30 bits of the celebrity epoch that the reader's celebrity followees were listed at
  // (0: stale).
  uint32_t celebrities_epoch : 30 = 0;
  // `side` holds the reader's one visible celebrity followee, not a side slot.
  uint32_t one_celebrity : 1 = 0;
  uint32_t referenced : 1 = 0;  // read since the budget's clock hand last passed
  // Index into Feed::sides_, or kNoSlot (no side: at most one celebrity, nothing pending);
  // when one_celebrity, that celebrity's internal id.
  uint32_t side = kNoSlot;
};

// The parts of an inbox that most inboxes do not need, kept off the fan-out's cache line: the
// reader's visible celebrity followees (for pulls) when there are two or more, or one and
// something pending, then the authors whose visibility changed since the last read. 16 bytes
// here, the ids in a block of Feed::side_pool_.
struct Feed::InboxSide : IdListPair {
  std::span<const InternalId> celebrities() const { return first(); }
  std::span<const InternalId> pending() const { return second(); }
  size_t MemoryBytes() const { return sizeof(InboxSide) + BlockBytes(); }
};

inline Feed::Inbox* Feed::InboxOf(InternalId reader) {
  const uint32_t slot = SlotOf(reader);
  return IsPoolSlot(slot) ? &inbox_pool_[slot] : nullptr;
}

// REQUIRES (both): the reader has a header.
inline Feed::InboxCold& Feed::ColdOf(InternalId reader) {
  return inbox_cold_[SlotOf(reader)];
}

inline const Feed::InboxCold& Feed::ColdOf(InternalId reader) const {
  return inbox_cold_[SlotOf(reader)];
}

template <typename Fn>
void Feed::ForEachVisibleCelebrity(const Graph& g, InternalId reader, Fn&& fn) const {
  const FollowingList& following = g.FollowingOf(reader);
  for (size_t i = 0; i < following.size(); ++i) {
    const InternalId f = following.PeerAt(i);
    if (audience_.IsCelebrity(f) && audience_.Visible(reader, f)) fn(f);
  }
}

inline bool Feed::Below(const Inbox& in, InternalId reader, const PostKey& k) const {
  return in.Below(k, [&] { return exact_watermarks_.at(SlotOf(reader)); });
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
