// Routing: the user (and viewer) every request type is routed by, pinned one by one, so that
// a change to how routing is declared cannot move a command to another shard unnoticed.
#include "net/protocol/command_table.h"

#include <doctest.h>

namespace relgraph::net {
namespace {

// Every user field of a request gets its own id, so the routing names which field it took.
constexpr uint64_t kU1 = 11, kU2 = 22, kU3 = 33;

template <typename Req>
void CheckRoute(const Req& r, uint64_t user, uint64_t viewer) {
  const Routing got = RoutingOf(r);
  INFO(OpcodeName(Req::kOpcode));
  CHECK(got.user == user);
  CHECK(got.viewer == viewer);
}

template <typename Page>
void CheckPage() {
  Page p;
  p.user = kU1;
  CheckRoute(p, kU1, 0);  // no viewer
  p.viewer = kU2;
  CheckRoute(p, kU1, kU2);
}

template <typename Pair>
void CheckPair() {
  Pair p;
  p.user = kU1;
  p.other = kU2;
  CheckRoute(p, kU1, 0);
}

template <typename Feed>
void CheckFeed() {
  Feed f;
  f.user = kU1;
  CheckRoute(f, kU1, 0);
}

TEST_CASE("routing: every request type is routed by the user it was routed by before") {
  // About no user: answered by the node (or shard) asked.
  CheckRoute(HelloRequest{}, 0, 0);
  CheckRoute(HelloRequestV1{}, 0, 0);
  CheckRoute(PingRequest{}, 0, 0);
  CheckRoute(InfoRequest{}, 0, 0);
  CheckRoute(SnapshotRequest{}, 0, 0);
  CheckRoute(SubscribeRequest{SubscribeFrom::kLsn, 5, 0, "x"}, 0, 0);
  CheckRoute(FetchSnapshotRequest{}, 0, 0);
  CheckRoute(AckRequest{"x", 5}, 0, 0);
  CheckRoute(CursorsRequest{}, 0, 0);
  CheckRoute(DeleteCursorRequest{"x"}, 0, 0);
  CheckRoute(ReplicateRequest{5, 1, 2, "x"}, 0, 0);
  CheckRoute(ReplicaAckRequest{"x", 5, 5}, 0, 0);
  CheckRoute(PromoteRequest{true}, 0, 0);
  CheckRoute(ReplicationRequest{}, 0, 0);

  // The graph.
  CheckRoute(FollowRequest{kU1, kU2, std::nullopt}, kU1, 0);
  CheckRoute(UnfollowRequest{kU1, kU2}, kU1, 0);
  CheckRoute(RelationRequest{kU1, kU2}, kU1, 0);
  CheckRoute(RelationsRequest{kU1, {kU2, kU3}}, kU1, 0);
  CheckPage<FollowingRequest>();
  CheckPage<FansRequest>();
  CheckPage<FriendsRequest>();
  CheckRoute(CountsRequest{kU1}, kU1, 0);
  CheckRoute(KnownFollowersRequest{kU1, kU2, 3}, kU1, kU2);
  CheckRoute(RemoveUserRequest{kU1}, kU1, 0);

  // The feed.
  CheckRoute(PublishRequest{kU1, kU2, 0, std::nullopt}, kU1, 0);
  CheckRoute(DeletePostRequest{kU1, kU2}, kU1, 0);
  CheckFeed<TimelineRequest>();
  CheckFeed<UserPostsRequest>();
  CheckPair<MuteRequest>();
  CheckPair<UnmuteRequest>();
  CheckPair<HideRequest>();
  CheckPair<UnhideRequest>();
  CheckRoute(MutesRequest{kU1}, kU1, 0);
  CheckRoute(HidesRequest{kU1}, kU1, 0);

  // Blocks, private accounts, requests.
  CheckRoute(BlockRequest{kU1, kU2}, kU1, 0);
  CheckPair<UnblockRequest>();
  CheckPage<BlocksRequest>();
  CheckRoute(SetPrivateRequest{kU1, true}, kU1, 0);
  CheckRoute(IsPrivateRequest{kU1}, kU1, 0);
  CheckPage<RequestsRequest>();
  CheckPair<ApproveRequest>();
  CheckPair<RejectRequest>();
  CheckPair<WithdrawRequest>();
}

}  // namespace
}  // namespace relgraph::net
