// Routing: which users' state a request reads or changes, so that a cluster (docs/cluster.md)
// sends it to the shard that owns them and a shard can tell a request it must not answer.
//
// `user` is the user a request is routed by: the follower of a follow, the `a` of a relation,
// the owner of a page, the author of a post, the reader of a timeline. `viewer` is a second
// user whose state the answer also reads (a page's viewer, the target of known_followers);
// 0 when there is none. A request about no user (INFO, SUBSCRIBE, ...) has both 0.
//
// Routing is declared, never guessed: each command's row in the command table
// (net/protocol/command_table.h) names the member that holds its user and the one that holds
// its viewer with RouteBy; RoutingOf (there) reads them. A field named `user` routes nothing
// unless its row says so.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>

namespace relgraph::net {

struct Routing {
  uint64_t user = 0;
  uint64_t viewer = 0;
};

// A routing declaration: `User` and `Viewer` are pointers to members of the request (or of a
// base it shares, PageQuery::user), holding a uint64_t or an optional<uint64_t> (absent: 0);
// nullptr for none. RouteBy<> (NoRoute) routes nothing.
template <auto User = nullptr, auto Viewer = nullptr>
struct RouteBy {
  static_assert(User != nullptr || Viewer == nullptr, "a viewer without a user routes nothing");
  static constexpr bool kRouted = User != nullptr;
  static constexpr bool kReadsViewer = Viewer != nullptr;

  template <typename Req>
  static Routing Of(const Req& r) {
    Routing out;
    if constexpr (User != nullptr) out.user = UserId(r.*User);
    if constexpr (Viewer != nullptr) out.viewer = UserId(r.*Viewer);
    return out;
  }

 private:
  static uint64_t UserId(uint64_t id) { return id; }
  static uint64_t UserId(const std::optional<uint64_t>& id) { return id.value_or(0); }
};
using NoRoute = RouteBy<>;

}  // namespace relgraph::net
