// TypedCalls: the typed calls every client shape offers the same way, whatever carries the
// request: each builds its request struct and unwraps its reply. `Derived` supplies
// `Call<Request>(const Request&)`: Client (net/client/client.h) sends it on its connection,
// ClusterClient (net/cluster/cluster_client.h) to the shard that owns its user.
//
// Thread-safety: as Derived's Call.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "net/protocol/messages.h"
#include "storage/status.h"

namespace relgraph::net {

template <typename Derived>
class TypedCalls {
 public:
  Result<FollowReply> Follow(uint64_t follower, uint64_t followee,
                             std::optional<int64_t> ts = std::nullopt) {
    return self().Call(FollowRequest{follower, followee, ts});
  }
  Result<bool> Unfollow(uint64_t follower, uint64_t followee) {
    auto r = self().Call(UnfollowRequest{follower, followee});
    if (!r.ok()) return r.status();
    return r->removed;
  }
  Result<RelationCode> Relation(uint64_t a, uint64_t b) {
    auto r = self().Call(RelationRequest{a, b});
    if (!r.ok()) return r.status();
    return r->relation;
  }
  Result<std::vector<RelationCode>> Relations(uint64_t a, std::span<const uint64_t> others) {
    if (others.size() > kMaxWireList) {
      return Status::InvalidArgument("relations: at most 65535 ids fit in one request");
    }
    auto r = self().Call(RelationsRequest{a, {others.begin(), others.end()}});
    if (!r.ok()) return r.status();
    return std::move(r->relations);
  }
  Result<CountsReply> Counts(uint64_t user) { return self().Call(CountsRequest{user}); }
  Result<uint64_t> RemoveUser(uint64_t user) {
    auto r = self().Call(RemoveUserRequest{user});
    if (!r.ok()) return r.status();
    return r->edges_removed;
  }

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
};

}  // namespace relgraph::net
