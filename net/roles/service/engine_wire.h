// Conversions between the engine's value types and the protocol's (net/ knows no engine type),
// shared by the command handlers. Pure functions.
#pragma once

#include "engine/types.h"
#include "net/protocol/messages.h"
#include "storage/status.h"

namespace relgraph {

static_assert(static_cast<uint8_t>(net::RelationCode::kMutual) ==
              static_cast<uint8_t>(Relation::kMutual));
static_assert(static_cast<uint8_t>(net::RelationCode::kBlockedBy) ==
              static_cast<uint8_t>(Relation::kBlockedBy));
static_assert(net::kRelationCodeBits == kRelationBits);

inline net::RelationCode ToWire(Relation r) {
  return static_cast<net::RelationCode>(static_cast<uint8_t>(r));
}

inline PageRequest ToPageRequest(const net::PageQuery& q) {
  PageRequest r;
  r.limit = q.limit;
  r.offset = q.offset;
  if (q.after) r.after = Cursor{q.after->ts, q.after->user};
  r.viewer = q.viewer;
  return r;
}

inline net::PageReply ToWire(const Page& page) {
  net::PageReply r;
  r.entries.reserve(page.entries.size());
  for (const ListEntry& e : page.entries) {
    r.entries.push_back({e.user, e.ts, ToWire(e.viewer_relation), e.mutual});
  }
  if (page.next) r.next = net::WireCursor{page.next->ts, page.next->user};
  return r;
}

inline net::FollowReply ToWire(const FollowOutcome& o) {
  return net::FollowReply{o.created, ToWire(o.relation), o.followed_at};
}

inline Result<net::ChangedReply> ToChanged(const Result<bool>& r) {
  if (!r.ok()) return r.status();
  return net::ChangedReply{*r};
}

}  // namespace relgraph
