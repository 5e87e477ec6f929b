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

// How `a` relates to `b` in relation(a, b): a set of bits. Values are stable (wire and WAL use
// them); 0..3 are the follow states, the higher bits exist only where blocks or follow
// requests do (docs/access.md). Which combinations occur: a block (either way) excludes every
// other bit but the opposite block; kRequested excludes kFollowing, kRequestedBy excludes
// kFollowedBy.
enum class Relation : uint8_t {
  kNone = 0,
  kFollowing = 1,    // a follows b
  kFollowedBy = 2,   // b follows a
  kMutual = 3,       // both: friends
  kRequested = 4,    // a asked to follow b (b is private) and b has not answered
  kRequestedBy = 8,  // b asked to follow a and a has not answered
  kBlocking = 16,    // a blocks b
  kBlockedBy = 32,   // b blocks a (reported as kNone when GraphOptions::hide_blocked_by)
};
inline constexpr uint8_t kRelationBits = 0x3f;
constexpr Relation operator|(Relation x, Relation y) {
  return static_cast<Relation>(static_cast<uint8_t>(x) | static_cast<uint8_t>(y));
}
constexpr Relation operator&(Relation x, Relation y) {
  return static_cast<Relation>(static_cast<uint8_t>(x) & static_cast<uint8_t>(y));
}
// Whether r holds every bit of `bits`: Has(r, Relation::kFollowing) is "a follows b".
constexpr bool Has(Relation r, Relation bits) {
  return (r & bits) == bits && bits != Relation::kNone;
}
// "none", "following", "followed_by", "mutual", "requested", "requested_by", "blocking",
// "blocked_by", and combinations joined by '+' ("requested+followed_by"); "invalid" for a
// value with bits outside kRelationBits.
const char* RelationName(Relation r);

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
  uint32_t blocks = 0;    // users this user blocks
  uint32_t requests = 0;  // pending follow requests to this user
  friend bool operator==(const Counts&, const Counts&) = default;
};

struct FollowOutcome {
  // false: a already followed (or had asked to follow) b; nothing changed.
  bool created = false;
  // relation(a, b) after the call. Has(relation, kRequested): b is private, so the call made
  // (or found) a pending follow request, not an edge.
  Relation relation = Relation::kNone;
  // The edge's follow time, or the request's time (the original one when not created).
  TimestampMs followed_at = 0;
};

struct BlockOutcome {
  bool created = false;           // false: a already blocked b; nothing changed
  TimestampMs ts = 0;             // the block's time (the original one when not created)
  bool unfollowed = false;        // the block removed a -> b
  bool lost_follower = false;     // the block removed b -> a
  bool requests_removed = false;  // it removed a pending request between the two
};

struct SetPrivateOutcome {
  bool changed = false;   // false: the account already was as asked
  uint64_t approved = 0;  // going public approves every pending request
  TimestampMs ts = 0;     // the change's time: the follow time of the edges it approved
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
  uint64_t blocked = 0;  // edges between two users one of whom blocks the other: skipped
  ImportStats& operator+=(const ImportStats& o) {
    added += o.added;
    blocked += o.blocked;
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

// Internal ids are 4 bytes and UINT32_MAX means "none": ids 0 .. 2^32 - 2.
inline constexpr uint64_t kMaxUsersLimit = (uint64_t{1} << 32) - 1;

struct GraphOptions {
  uint32_t max_following = 1000;  // 1..kMaxFollowingLimit
  RateLimitOptions rate_limit;
  Clock* clock = nullptr;  // not owned; nullptr = the system clock
  // Fan lists longer than this are stored as a chunked list (tuning and test knob, >= 4).
  uint32_t fan_chunk_entries = 256;
  uint32_t max_blocks = 100'000;  // per user, 1..kMaxBlocksLimit (kLimitExceeded past it)
  // true: relation(a, b) never says that b blocks a (kBlockedBy reads as kNone), for products
  // that keep a block from its target; a follow it forbids still fails with kBlocked, whose
  // message is the same whichever side blocks.
  bool hide_blocked_by = false;
  // Users the graph may hold, 1..kMaxUsersLimit: a call that would add one more fails with
  // kResourceExhausted and changes nothing. The default is what 4-byte internal ids allow; a
  // smaller value is a test and capacity-planning knob.
  uint64_t max_users = kMaxUsersLimit;
  // The unit of the times the graph keeps (follows, blocks, requests): 1 (exact milliseconds)
  // or 1000 (whole seconds: every kept time, answer and cursor is rounded down to one, and
  // each packed time takes ~10 bits less; engine/graph/time_resolution.h). Fixed for a data
  // directory: its snapshots record it and a node with another refuses them.
  uint32_t time_resolution_ms = 1;
  // Users of the id index each new user moves while the index grows (engine/graph/id_map.h):
  // 0 or 2..2^20 (a step of 1 would let the new users fill the larger table; 2^20 moves take
  // ~20 ms under the writers' lock). 0: 1,024 (IdMap::kGrowthStep), or 64 in a Db whose
  // background worker moves the rest (DbOptions::background_id_growth), so that a follow
  // naming a new user does not also pay ~21 us of moves on a map of 40M users.
  uint32_t id_growth_step = 0;
};
inline constexpr uint32_t kMaxBlocksLimit = 1u << 24;
// The largest follow cap: what a following list's 19-bit size holds (its handle keeps the size
// beside the block's address in one word: engine/graph/following_list.h).
inline constexpr uint32_t kMaxFollowingLimit = (1u << 19) - 1;

}  // namespace relgraph
