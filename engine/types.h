// Public value types of the follow-graph engine: ids, relations, pages, options.
// Plain data; safe to copy across threads.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace relgraph {

class Clock;

using UserId = uint64_t;      // 0 is invalid
using TimestampMs = int64_t;  // milliseconds since the Unix epoch

// Timestamps are stored in 42 bits: [0, kMaxTimestampMs] covers 1970 to the year 2109.
inline constexpr TimestampMs kMaxTimestampMs = (TimestampMs{1} << 42) - 1;

// How `a` relates to `b` in relation(a, b). Values are stable (wire and WAL use them).
enum class Relation : uint8_t {
  kNone = 0,
  kFollowing = 1,   // a follows b, b does not follow a
  kFollowedBy = 2,  // b follows a, a does not follow b
  kMutual = 3,      // friends
};
const char* RelationName(Relation r);  // "none", "following", "followed_by", "mutual"

// Position in a list ordered newest first by (ts, user) descending: a page "after" a cursor holds
// the entries strictly older than it. Every page reply carries the cursor of its next page.
struct Cursor {
  TimestampMs ts = 0;
  UserId user = 0;
  friend bool operator==(const Cursor&, const Cursor&) = default;
};

inline constexpr uint32_t kMaxPageLimit = 1000;
inline constexpr uint32_t kMaxBatchSize = 1000;

struct PageRequest {
  uint32_t limit = 20;           // 1..kMaxPageLimit
  uint32_t offset = 0;           // used only when `after` is empty
  std::optional<Cursor> after;   // search-after cursor; stable under concurrent changes
  std::optional<UserId> viewer;  // when set, each entry carries viewer's relation to it
};

struct ListEntry {
  UserId user = 0;
  TimestampMs ts = 0;  // follow time; for friends, the time the pair became mutual
  Relation viewer_relation = Relation::kNone;  // relation(viewer, user); kNone without a viewer
  bool mutual = false;  // the list's owner and `user` follow each other (always true for friends)
  friend bool operator==(const ListEntry&, const ListEntry&) = default;
};

struct Page {
  std::vector<ListEntry> entries;
  std::optional<Cursor> next;  // empty when the list has nothing after this page
};

struct Counts {
  uint32_t following = 0;
  uint32_t fans = 0;
  uint32_t friends = 0;
  friend bool operator==(const Counts&, const Counts&) = default;
};

struct FollowOutcome {
  bool created = false;                 // false: a already followed b; nothing changed
  Relation relation = Relation::kNone;  // relation(a, b) after the call
  TimestampMs followed_at = 0;  // the edge's follow time (the original one when not created)
};

struct ImportEdge {
  UserId follower = 0;
  UserId followee = 0;
  TimestampMs ts = 0;
};

struct ImportStats {
  uint64_t added = 0;
  uint64_t duplicates = 0;
  uint64_t self_loops = 0;
  uint64_t over_cap = 0;
  ImportStats& operator+=(const ImportStats& o) {
    added += o.added;
    duplicates += o.duplicates;
    self_loops += o.self_loops;
    over_cap += o.over_cap;
    return *this;
  }
};

struct KnownFollowers {
  std::vector<UserId> users;  // newest first by the time the viewer followed them
  uint32_t total = 0;         // all users the viewer follows who follow the target
};

struct RateLimitOptions {
  bool enabled = true;
  double capacity = 100;         // tokens; one follow costs one
  double refill_per_second = 1;  // tokens added per second, up to capacity
};

struct GraphOptions {
  uint32_t max_following = 1000;  // 1..kMaxFollowingLimit
  RateLimitOptions rate_limit;
  Clock* clock = nullptr;  // not owned; nullptr = the system clock
  // Fan lists longer than this are stored as a chunked list (tuning and test knob, >= 4).
  uint32_t fan_chunk_entries = 256;
};
inline constexpr uint32_t kMaxFollowingLimit = 1u << 20;

}  // namespace relgraph
