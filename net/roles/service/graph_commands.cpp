// CommandService's graph handlers: follows, relations, pages of users, counts, known
// followers, user removal; each is the Db call and its reply.
#include "net/roles/service/command_service.h"

#include "engine/graph/graph.h"
#include "net/roles/service/engine_wire.h"

namespace relgraph {

Result<net::FollowReply> CommandService::Follow(const net::FollowRequest& q, Context& c) {
  auto r = q.ts ? db_->FollowAt(q.follower, q.followee, *q.ts, &c.ticket)
                : db_->Follow(q.follower, q.followee, &c.ticket);
  if (!r.ok()) return r.status();
  return ToWire(*r);
}

Result<net::UnfollowReply> CommandService::Unfollow(const net::UnfollowRequest& q, Context& c) {
  auto r = db_->Unfollow(q.follower, q.followee, &c.ticket);
  if (!r.ok()) return r.status();
  return net::UnfollowReply{*r};
}

Result<net::RelationReply> CommandService::Relation(const net::RelationRequest& q, Context&) {
  auto r = db_->Read([&](const Graph& g) { return g.GetRelation(q.a, q.b); });
  if (!r.ok()) return r.status();
  return net::RelationReply{ToWire(*r)};
}

Result<net::RelationsReply> CommandService::Relations(const net::RelationsRequest& q, Context&) {
  auto r = db_->Read([&](const Graph& g) { return g.GetRelations(q.a, q.others); });
  if (!r.ok()) return r.status();
  net::RelationsReply reply;
  reply.relations.reserve(r->size());
  for (relgraph::Relation rel : *r) reply.relations.push_back(ToWire(rel));
  return reply;
}

Result<net::PageReply> CommandService::Following(const net::FollowingRequest& q, Context&) {
  auto r = db_->Read([&](const Graph& g) { return g.Following(q.user, ToPageRequest(q)); });
  if (!r.ok()) return r.status();
  return ToWire(*r);
}

Result<net::PageReply> CommandService::Fans(const net::FansRequest& q, Context&) {
  auto r = db_->Read([&](const Graph& g) { return g.Fans(q.user, ToPageRequest(q)); });
  if (!r.ok()) return r.status();
  return ToWire(*r);
}

Result<net::PageReply> CommandService::Friends(const net::FriendsRequest& q, Context&) {
  auto r = db_->Read([&](const Graph& g) { return g.Friends(q.user, ToPageRequest(q)); });
  if (!r.ok()) return r.status();
  return ToWire(*r);
}

Result<net::CountsReply> CommandService::Counts(const net::CountsRequest& q, Context&) {
  auto r = db_->Read([&](const Graph& g) { return g.GetCounts(q.user); });
  if (!r.ok()) return r.status();
  return net::CountsReply{r->following, r->fans, r->friends};
}

Result<net::KnownFollowersReply> CommandService::KnownFollowers(const net::KnownFollowersRequest& q,
                                                                Context&) {
  auto r =
      db_->Read([&](const Graph& g) { return g.GetKnownFollowers(q.viewer, q.target, q.limit); });
  if (!r.ok()) return r.status();
  return net::KnownFollowersReply{r->total, r->users};
}

Result<net::RemoveUserReply> CommandService::RemoveUser(const net::RemoveUserRequest& q,
                                                        Context& c) {
  auto r = db_->RemoveUser(q.user, &c.ticket);
  if (!r.ok()) return r.status();
  return net::RemoveUserReply{*r};
}

}  // namespace relgraph
