// The graph's messages (docs/protocol.md 0x10-0x19): follows, relations, pages of users,
// counts, known followers, user removal. Field order is wire order.
//
// Thread-safety: plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "net/protocol/messages_common.h"

namespace relgraph::net {

struct FollowReply {
  bool created = false;
  RelationCode relation = RelationCode::kNone;
  int64_t followed_at = 0;
  RELGRAPH_WIRE_FIELDS(created, relation, followed_at)
};
struct FollowRequest {
  static constexpr Opcode kOpcode = Opcode::kFollow;
  using Reply = FollowReply;
  uint64_t follower = 0;
  uint64_t followee = 0;
  std::optional<int64_t> ts;  // absent: the server's clock
  RELGRAPH_WIRE_FIELDS(follower, followee, ts)
};

struct UnfollowReply {
  bool removed = false;
  RELGRAPH_WIRE_FIELDS(removed)
};
struct UnfollowRequest {
  static constexpr Opcode kOpcode = Opcode::kUnfollow;
  using Reply = UnfollowReply;
  uint64_t follower = 0;
  uint64_t followee = 0;
  RELGRAPH_WIRE_FIELDS(follower, followee)
};

struct RelationReply {
  RelationCode relation = RelationCode::kNone;
  RELGRAPH_WIRE_FIELDS(relation)
};
struct RelationRequest {
  static constexpr Opcode kOpcode = Opcode::kRelation;
  using Reply = RelationReply;
  uint64_t a = 0;
  uint64_t b = 0;
  RELGRAPH_WIRE_FIELDS(a, b)
};

struct RelationsReply {
  std::vector<RelationCode> relations;  // relation(a, others[i])
  RELGRAPH_WIRE_FIELDS(relations)
};
struct RelationsRequest {
  static constexpr Opcode kOpcode = Opcode::kRelations;
  using Reply = RelationsReply;
  uint64_t a = 0;
  std::vector<uint64_t> others;
  RELGRAPH_WIRE_FIELDS(a, others)
};

struct FollowingRequest : PageQuery {
  static constexpr Opcode kOpcode = Opcode::kFollowing;
  using Reply = PageReply;
};
struct FansRequest : PageQuery {
  static constexpr Opcode kOpcode = Opcode::kFans;
  using Reply = PageReply;
};
struct FriendsRequest : PageQuery {
  static constexpr Opcode kOpcode = Opcode::kFriends;
  using Reply = PageReply;
};

struct CountsReply {
  uint32_t following = 0;
  uint32_t fans = 0;
  uint32_t friends = 0;
  RELGRAPH_WIRE_FIELDS(following, fans, friends)
};
struct CountsRequest {
  static constexpr Opcode kOpcode = Opcode::kCounts;
  using Reply = CountsReply;
  uint64_t user = 0;
  RELGRAPH_WIRE_FIELDS(user)
};

struct KnownFollowersReply {
  uint32_t total = 0;
  std::vector<uint64_t> users;
  RELGRAPH_WIRE_FIELDS(total, users)
};
struct KnownFollowersRequest {
  static constexpr Opcode kOpcode = Opcode::kKnownFollowers;
  using Reply = KnownFollowersReply;
  uint64_t viewer = 0;
  uint64_t target = 0;
  uint16_t limit = 3;
  RELGRAPH_WIRE_FIELDS(viewer, target, limit)
};

struct RemoveUserReply {
  uint64_t edges_removed = 0;
  RELGRAPH_WIRE_FIELDS(edges_removed)
};
struct RemoveUserRequest {
  static constexpr Opcode kOpcode = Opcode::kRemoveUser;
  using Reply = RemoveUserReply;
  uint64_t user = 0;
  RELGRAPH_WIRE_FIELDS(user)
};

}  // namespace relgraph::net
