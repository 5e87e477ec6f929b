// CommandService's feed handlers (docs/feed.md): posts, timelines, mutes and hides.
#include "net/roles/service/command_service.h"

#include <utility>

#include "net/roles/service/engine_wire.h"

namespace relgraph {
namespace {

FeedPageRequest ToFeedRequest(const net::FeedQuery& q) {
  FeedPageRequest r;
  r.limit = q.limit;
  if (q.after) r.after = PostKey{q.after->ts, q.after->post};
  r.kinds = q.kinds;
  return r;
}

net::FeedReply ToWire(const FeedPage& page) {
  net::FeedReply r;
  r.entries.reserve(page.entries.size());
  for (const FeedEntry& e : page.entries) r.entries.push_back({e.post, e.author, e.ts, e.kind});
  if (page.next) r.next = net::PostCursor{page.next->ts, page.next->post};
  return r;
}

}  // namespace

Result<net::PublishReply> CommandService::Publish(const net::PublishRequest& q, Context& c) {
  auto r = db_->Publish(q.author, q.post, q.kind, q.ts, &c.ticket);
  if (!r.ok()) return r.status();
  return net::PublishReply{r->ts, r->retained, r->evicted};
}

Result<net::Empty> CommandService::DeletePost(const net::DeletePostRequest& q, Context& c) {
  RELGRAPH_RETURN_IF_ERROR(db_->DeletePost(q.author, q.post, &c.ticket));
  return net::Empty{};
}

Result<net::FeedReply> CommandService::Timeline(const net::TimelineRequest& q, Context&) {
  auto r = db_->Timeline(q.user, ToFeedRequest(q));
  if (!r.ok()) return r.status();
  return ToWire(*r);
}

Result<net::FeedReply> CommandService::UserPosts(const net::UserPostsRequest& q, Context&) {
  auto r = db_->UserPosts(q.user, ToFeedRequest(q));
  if (!r.ok()) return r.status();
  return ToWire(*r);
}

Result<net::ChangedReply> CommandService::Mute(const net::MuteRequest& q, Context& c) {
  return ToChanged(db_->Mute(q.user, q.other, true, &c.ticket));
}

Result<net::ChangedReply> CommandService::Unmute(const net::UnmuteRequest& q, Context& c) {
  return ToChanged(db_->Mute(q.user, q.other, false, &c.ticket));
}

Result<net::ChangedReply> CommandService::Hide(const net::HideRequest& q, Context& c) {
  return ToChanged(db_->Hide(q.user, q.other, true, &c.ticket));
}

Result<net::ChangedReply> CommandService::Unhide(const net::UnhideRequest& q, Context& c) {
  return ToChanged(db_->Hide(q.user, q.other, false, &c.ticket));
}

Result<net::UserListReply> CommandService::Mutes(const net::MutesRequest& q, Context&) {
  auto r = db_->Mutes(q.user);
  if (!r.ok()) return r.status();
  return net::UserListReply{std::move(*r)};
}

Result<net::UserListReply> CommandService::Hides(const net::HidesRequest& q, Context&) {
  auto r = db_->Hides(q.user);
  if (!r.ok()) return r.status();
  return net::UserListReply{std::move(*r)};
}

}  // namespace relgraph
