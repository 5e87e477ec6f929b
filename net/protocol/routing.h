// Routing: which users' state a request reads or changes, so that a cluster (docs/cluster.md)
// sends it to the shard that owns them and a shard can tell a request it must not answer.
//
// `user` is the user a request is routed by: the follower of a follow, the `a` of a relation,
// the owner of a page, the author of a post, the reader of a timeline. `viewer` is a second
// user whose state the answer also reads (a page's viewer, the target of known_followers);
// 0 when there is none. A request about no user (INFO, SUBSCRIBE, ...) has both 0.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <type_traits>

#include "net/protocol/messages.h"

namespace relgraph::net {

struct Routing {
  uint64_t user = 0;
  uint64_t viewer = 0;
};

template <typename Req>
Routing RoutingOf(const Req& r) {
  if constexpr (requires { r.follower; }) {
    return {r.follower, 0};
  } else if constexpr (std::is_base_of_v<PageQuery, Req>) {
    return {r.user, r.viewer.value_or(0)};
  } else if constexpr (requires {
                         r.viewer;
                         r.target;
                       }) {
    return {r.viewer, r.target};  // known followers: viewer's follows, target's fans
  } else if constexpr (requires { r.author; }) {
    return {r.author, 0};
  } else if constexpr (requires { r.a; }) {
    return {r.a, 0};
  } else if constexpr (requires { r.user; }) {
    return {r.user, 0};
  } else {
    return {};
  }
}

}  // namespace relgraph::net
