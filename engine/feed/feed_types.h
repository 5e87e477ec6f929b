// Public value types of the feed engine (docs/feed.md): posts, timeline pages, options.
// Plain data; safe to copy across threads.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/types.h"

namespace relgraph {

using PostId = uint64_t;  // 0 is invalid; unique among the posts the engine holds

inline constexpr uint32_t kMaxPostKind = 63;  // kinds are 0..63, so a filter is a 64-bit mask
inline constexpr uint32_t kMaxFeedPageLimit = 100;

// Feed order: newest first by (ts, post id), both descending. A cursor is the key of the last
// entry of a page; the next page holds the entries strictly older than it.
struct PostKey {
  TimestampMs ts = 0;
  PostId post = 0;
  friend auto operator<=>(const PostKey&, const PostKey&) = default;
};

struct FeedPageRequest {
  uint32_t limit = 20;           // 1..kMaxFeedPageLimit
  std::optional<PostKey> after;  // search-after cursor
  uint64_t kinds = 0;            // bit k set: include kind k; 0: every kind
};

struct FeedEntry {
  PostId post = 0;
  UserId author = 0;
  TimestampMs ts = 0;
  uint8_t kind = 0;
  friend bool operator==(const FeedEntry&, const FeedEntry&) = default;
};

struct FeedPage {
  std::vector<FeedEntry> entries;
  std::optional<PostKey> next;  // set iff the page is full and more entries follow it
};

struct PublishOutcome {
  TimestampMs ts = 0;    // the post's time (the engine clock's when none was given)
  bool retained = true;  // false: older than the author's newest K posts, so not kept
  PostId evicted = 0;    // the post this one pushed out of the author's newest K (0: none)
};

struct FeedOptions {
  uint32_t posts_per_author = 300;  // K: each author keeps the newest K posts (1..100,000)
  uint32_t timeline_length = 300;   // R: a timeline is the newest R visible posts (1..100,000)
  // Authors with more fans than this are pulled at read time instead of pushed; they go back
  // to push when they fall below half of it (hysteresis). >= 1.
  uint32_t celebrity_fans = 10'000;
  // Readers who read within this window get pushed posts; others' inboxes are dropped.
  int64_t active_reader_ms = int64_t{7} * 24 * 3600 * 1000;
  uint64_t inbox_memory_budget = uint64_t{1} << 30;  // bytes of materialized inboxes
  uint32_t fanout_batch = 4096;  // fans visited per lock hold by the background fan-out
  uint32_t max_mutes = 10'000;   // per user
  uint32_t max_hides = 10'000;   // per author
};

// Where FeedStats::inbox_bytes goes (Feed::InboxMemoryBreakdown); the four parts add up to
// it. Inbox memory grows with entries, with inboxes that have a header, and with users (the
// slot array), so a figure per entry alone depends on how full inboxes are.
struct InboxMemory {
  uint64_t entry_bytes = 0;  // entry blocks (their capacity) and the free space of their pool
  // Per-inbox records: headers and cold parts (their arrays' whole chunks, free slots
  // included) and the watermark ids kept apart.
  uint64_t header_bytes = 0;
  uint64_t side_bytes = 0;  // side lists (celebrity followees, pending authors) and their pool
  uint64_t slot_bytes = 0;  // the per-user slot array and the free lists
  uint64_t headers = 0;     // inboxes with a header (not kept as a mark)
  uint64_t total() const { return entry_bytes + header_bytes + side_bytes + slot_bytes; }
};

struct FeedStats {
  uint64_t posts = 0;             // retained posts
  uint64_t post_bytes = 0;        // author rings (with their slab's free space) plus the post index
  uint64_t post_index_bytes = 0;  // the post index's share of post_bytes
  // Per-user feed state: authors' ring headers (their pool's whole chunks), the user -> ring
  // slot array, and the mute and hide maps with their lists (map nodes estimated). A cost per
  // user, not per post, so not in post_bytes.
  uint64_t feed_user_bytes = 0;
  uint64_t inboxes = 0;  // materialized inboxes
  uint64_t inbox_entries = 0;
  uint64_t empty_inboxes = 0;  // of `inboxes`: empty ones kept as a mark, with no header
  // Everything inboxes use: headers, entry buffers, side lists, free pool and slab space,
  // and the per-user slot array.
  uint64_t inbox_bytes = 0;
  uint64_t celebrities = 0;
  uint64_t fanout_queue = 0;         // tasks waiting or running
  uint64_t fanout_inserts = 0;       // inbox inserts since start
  uint64_t inbox_rebuilds = 0;       // inboxes built by pull (first reads, fallbacks, drops)
  uint64_t inbox_drops = 0;          // inboxes dropped (inactive, budget, celebrity change)
  uint64_t watermark_fallbacks = 0;  // reads that needed posts below an inbox's watermark
};

}  // namespace relgraph
