// The shapes several families share: relations, empty bodies, pages of users, a pair of
// users, the changed flag, the error body. Field order is wire order (docs/protocol.md).
//
// Thread-safety: plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/protocol/protocol.h"
#include "net/protocol/wire_codec.h"

namespace relgraph::net {

// relation(a, b) on the wire: a set of bits, the engine's values, which never change. 0..3 are
// the follow states; the others appear only where blocks or follow requests exist.
enum class RelationCode : uint8_t {
  kNone = 0,
  kFollowing = 1,    // a follows b
  kFollowedBy = 2,   // b follows a
  kMutual = 3,       // both
  kRequested = 4,    // a asked to follow b, pending
  kRequestedBy = 8,  // b asked to follow a, pending
  kBlocking = 16,    // a blocks b
  kBlockedBy = 32,   // b blocks a (unless the server hides it)
};
inline constexpr uint8_t kRelationCodeBits = 0x3f;
// "none", "following", "mutual", "requested+followed_by", ... (bits joined by '+');
// "invalid" for a value with bits above kRelationCodeBits.
std::string_view RelationCodeName(RelationCode r);

struct Empty {
  auto WireTie() { return std::tie(); }
  auto WireTie() const { return std::tie(); }
  static constexpr std::string_view WireNames() { return ""; }
};

struct WireCursor {
  int64_t ts = 0;
  uint64_t user = 0;
  RELGRAPH_WIRE_FIELDS(ts, user)
  friend bool operator==(const WireCursor&, const WireCursor&) = default;
};
struct PageEntry {
  uint64_t user = 0;
  int64_t ts = 0;
  RelationCode viewer_relation = RelationCode::kNone;
  bool mutual = false;
  RELGRAPH_WIRE_FIELDS(user, ts, viewer_relation, mutual)
  friend bool operator==(const PageEntry&, const PageEntry&) = default;
};
struct PageReply {
  std::vector<PageEntry> entries;
  std::optional<WireCursor> next;
  RELGRAPH_WIRE_FIELDS(entries, next)
};
struct PageQuery {
  uint64_t user = 0;
  uint16_t limit = 20;
  uint32_t offset = 0;  // used only without `after`
  std::optional<WireCursor> after;
  std::optional<uint64_t> viewer;
  RELGRAPH_WIRE_FIELDS(user, limit, offset, after, viewer)
};

// A page of blocks or requests, and how many the whole list holds.
struct CountedPageReply {
  uint32_t total = 0;
  std::vector<PageEntry> entries;
  std::optional<WireCursor> next;
  RELGRAPH_WIRE_FIELDS(total, entries, next)
};

struct ChangedReply {
  bool changed = false;
  RELGRAPH_WIRE_FIELDS(changed)
};
// mute/unmute: `user` (un)mutes `other`; hide/unhide: `user` (the author) (un)hides its posts
// from `other`.
struct PairQuery {
  uint64_t user = 0;
  uint64_t other = 0;
  RELGRAPH_WIRE_FIELDS(user, other)
};

// The body of every error reply and notice.
struct ErrorBody {
  int64_t detail = 0;  // Status::detail(): retry-after ms for rate_limited, else 0
  std::string message;
  RELGRAPH_WIRE_FIELDS(detail, message)
};

}  // namespace relgraph::net
