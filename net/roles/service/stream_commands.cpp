// CommandService's change-stream handlers (docs/change-stream.md): SUBSCRIBE, the snapshot
// transfer, named cursors.
#include "net/roles/service/command_service.h"

#include <memory>
#include <string>

#include "net/roles/replication/snapshot_transfer.h"
#include "net/roles/service/event_subscription.h"

namespace relgraph {

Result<net::SubscribeReply> CommandService::Subscribe(const net::SubscribeRequest& q, Context& c) {
  const ChangeKindMask kinds = q.kinds == 0 ? kAllChangeKinds : q.kinds;
  RELGRAPH_RETURN_IF_ERROR(ValidateChangeKindMask(kinds));
  uint64_t from = 0;
  switch (q.from) {
    case net::SubscribeFrom::kLsn:
      if (q.lsn == 0) return Status::InvalidArgument("subscribe from LSN 0: LSNs start at 1");
      from = q.lsn;
      break;
    case net::SubscribeFrom::kNow:
      if (q.lsn != 0) {
        return Status::InvalidArgument("subscribe from now takes LSN 0, got " +
                                       std::to_string(q.lsn));
      }
      from = Db::kChangesFromNow;
      break;
    case net::SubscribeFrom::kCursor: {
      if (q.lsn != 0) {
        return Status::InvalidArgument("subscribe from a cursor takes LSN 0, got " +
                                       std::to_string(q.lsn));
      }
      auto resume = db_->CursorResumeLsn(q.name);
      if (!resume.ok()) return resume.status();
      from = *resume;
      break;
    }
    default:
      return Status::InvalidArgument("subscribe: unknown start " +
                                     std::to_string(static_cast<int>(q.from)) +
                                     " (0 from an LSN, 1 from now, 2 from a named cursor)");
  }
  if (!q.name.empty() && q.from != net::SubscribeFrom::kCursor) {
    return Status::InvalidArgument("a cursor name goes with from 2 (from the named cursor)");
  }
  auto reader = db_->OpenChanges(from, kinds);
  if (!reader.ok()) return reader.status();
  net::SubscribeReply reply{(*reader)->next_lsn(), db_->last_lsn()};
  c.subscription = std::make_unique<EventSubscription>(std::move(*reader));
  return reply;
}

Result<net::FetchSnapshotReply> CommandService::FetchSnapshot(const net::FetchSnapshotRequest&,
                                                              Context& c) {
  auto snapshot = db_->OpenNewestSnapshot();
  if (!snapshot.ok()) return snapshot.status();
  net::FetchSnapshotReply reply{snapshot->lsn, snapshot->file_bytes};
  c.subscription = std::make_unique<SnapshotTransfer>(std::move(*snapshot));
  return reply;
}

Result<net::Empty> CommandService::Ack(const net::AckRequest& q, Context& c) {
  RELGRAPH_RETURN_IF_ERROR(db_->AckCursor(q.name, q.lsn, &c.ticket));
  return net::Empty{};
}

Result<net::CursorsReply> CommandService::Cursors(const net::CursorsRequest&, Context&) {
  net::CursorsReply reply;
  for (const Db::CursorInfo& k : db_->Cursors()) {
    reply.cursors.push_back({k.name, k.acked_lsn, k.acked_ms, k.expired});
  }
  return reply;
}

Result<net::Empty> CommandService::DeleteCursor(const net::DeleteCursorRequest& q, Context& c) {
  RELGRAPH_RETURN_IF_ERROR(db_->RemoveCursor(q.name, &c.ticket));
  return net::Empty{};
}

}  // namespace relgraph
