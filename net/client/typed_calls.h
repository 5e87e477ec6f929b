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

  // ---- feed ----
  Result<PublishReply> Publish(uint64_t author, uint64_t post, uint8_t kind,
                               std::optional<int64_t> ts = std::nullopt) {
    return self().Call(PublishRequest{author, post, kind, ts});
  }
  Status DeletePost(uint64_t author, uint64_t post) {
    return self().Call(DeletePostRequest{author, post}).status();
  }
  Result<FeedReply> Timeline(const FeedQuery& query) { return self().Call(TimelineRequest{query}); }
  Result<FeedReply> UserPosts(const FeedQuery& query) {
    return self().Call(UserPostsRequest{query});
  }
  // on: mute / hide; off: unmute / unhide. Whether it changed anything.
  Result<bool> Mute(uint64_t user, uint64_t other, bool on) {
    return on ? ChangedOf(self().Call(MuteRequest{{user, other}}))
              : ChangedOf(self().Call(UnmuteRequest{{user, other}}));
  }
  Result<bool> Hide(uint64_t author, uint64_t from, bool on) {
    return on ? ChangedOf(self().Call(HideRequest{{author, from}}))
              : ChangedOf(self().Call(UnhideRequest{{author, from}}));
  }
  Result<std::vector<uint64_t>> Mutes(uint64_t user) {
    return UsersOf(self().Call(MutesRequest{user}));
  }
  Result<std::vector<uint64_t>> Hides(uint64_t author) {
    return UsersOf(self().Call(HidesRequest{author}));
  }

  // ---- blocks, private accounts, follow requests (docs/access.md) ----
  Result<BlockReply> Block(uint64_t user, uint64_t blocked) {
    return self().Call(BlockRequest{user, blocked});
  }
  Result<bool> Unblock(uint64_t user, uint64_t blocked) {  // whether a block was lifted
    return ChangedOf(self().Call(UnblockRequest{{user, blocked}}));
  }
  Result<SetPrivateReply> SetPrivate(uint64_t user, bool is_private) {
    return self().Call(SetPrivateRequest{user, is_private});
  }
  Result<bool> IsPrivate(uint64_t user) {
    auto r = self().Call(IsPrivateRequest{user});
    if (!r.ok()) return r.status();
    return r->is_private;
  }
  // `user` answers `requester`'s request (Approve: the edge requester -> user, as FOLLOW's
  // reply from the requester's side); Withdraw: `requester` takes its request to `target`
  // back. The bools say whether there was a request.
  Result<FollowReply> Approve(uint64_t user, uint64_t requester) {
    return self().Call(ApproveRequest{{user, requester}});
  }
  Result<bool> Reject(uint64_t user, uint64_t requester) {
    return ChangedOf(self().Call(RejectRequest{{user, requester}}));
  }
  Result<bool> Withdraw(uint64_t requester, uint64_t target) {
    return ChangedOf(self().Call(WithdrawRequest{{requester, target}}));
  }

 protected:
  // A reply's "changed" flag, and a user list reply's ids.
  static Result<bool> ChangedOf(Result<ChangedReply> r) {
    if (!r.ok()) return r.status();
    return r->changed;
  }
  static Result<std::vector<uint64_t>> UsersOf(Result<UserListReply> r) {
    if (!r.ok()) return r.status();
    return std::move(r->users);
  }

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
};

}  // namespace relgraph::net
