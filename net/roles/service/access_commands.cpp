// CommandService's handlers for blocks, private accounts and follow requests (docs/access.md):
// each is the Db call and its reply, as the other handlers are.
#include "engine/durable/wal_records.h"
#include "engine/graph/graph.h"
#include "net/roles/service/command_service.h"
#include "net/roles/service/engine_wire.h"

namespace relgraph {

namespace {

// A page of blocks or requests with the list's total, read under one lock.
template <typename PageFn>
Result<net::CountedPageReply> CountedPage(const Db& db, uint64_t user, PageFn&& page_of,
                                          uint32_t Counts::*total) {
  return db.Read([&](const Graph& g) -> Result<net::CountedPageReply> {
    auto page = page_of(g);
    if (!page.ok()) return page.status();
    auto counts = g.GetCounts(user);
    if (!counts.ok()) return counts.status();
    net::PageReply wire = ToWire(*page);
    return net::CountedPageReply{(*counts).*total, std::move(wire.entries), wire.next};
  });
}

}  // namespace

Result<net::BlockReply> CommandService::Block(const net::BlockRequest& q, Context& c) {
  auto r = db_->Block(q.user, q.blocked, &c.ticket);
  if (!r.ok()) return r.status();
  return net::BlockReply{r->created, r->ts, BlockRecordFlags(*r)};  // the same bits
}

Result<net::ChangedReply> CommandService::Unblock(const net::UnblockRequest& q, Context& c) {
  return ToChanged(db_->Unblock(q.user, q.other, &c.ticket));
}

Result<net::CountedPageReply> CommandService::Blocks(const net::BlocksRequest& q, Context&) {
  return CountedPage(
      *db_, q.user, [&](const Graph& g) { return g.Blocks(q.user, ToPageRequest(q)); },
      &Counts::blocks);
}

Result<net::SetPrivateReply> CommandService::SetPrivate(const net::SetPrivateRequest& q,
                                                        Context& c) {
  auto r = db_->SetPrivate(q.user, q.is_private, &c.ticket);
  if (!r.ok()) return r.status();
  return net::SetPrivateReply{r->changed, r->approved, r->ts};
}

Result<net::IsPrivateReply> CommandService::IsPrivate(const net::IsPrivateRequest& q, Context&) {
  auto r = db_->Read([&](const Graph& g) { return g.IsPrivate(q.user); });
  if (!r.ok()) return r.status();
  return net::IsPrivateReply{*r};
}

Result<net::CountedPageReply> CommandService::Requests(const net::RequestsRequest& q, Context&) {
  return CountedPage(
      *db_, q.user, [&](const Graph& g) { return g.Requests(q.user, ToPageRequest(q)); },
      &Counts::requests);
}

Result<net::FollowReply> CommandService::Approve(const net::ApproveRequest& q, Context& c) {
  auto r = db_->Approve(q.user, q.other, &c.ticket);
  if (!r.ok()) return r.status();
  return ToWire(*r);
}

Result<net::ChangedReply> CommandService::Reject(const net::RejectRequest& q, Context& c) {
  return ToChanged(db_->Reject(q.user, q.other, &c.ticket));
}

Result<net::ChangedReply> CommandService::Withdraw(const net::WithdrawRequest& q, Context& c) {
  return ToChanged(db_->Withdraw(q.user, q.other, &c.ticket));
}

}  // namespace relgraph
