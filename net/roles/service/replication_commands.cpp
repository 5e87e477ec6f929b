// CommandService's replication handlers (docs/replication.md): a replica's REPLICATE and its
// acks, PROMOTE, the group's status.
#include "net/roles/service/command_service.h"

#include <memory>
#include <string>

#include "net/roles/replication/record_subscription.h"

namespace relgraph {

Result<net::ReplicateReply> CommandService::Replicate(const net::ReplicateRequest& q, Context& c) {
  if (q.from_lsn == 0) return Status::InvalidArgument("replicate from LSN 0: LSNs start at 1");
  if (q.name.empty()) return Status::InvalidArgument("replicate: the replica must name itself");
  RELGRAPH_RETURN_IF_ERROR(db_->CheckFollower(q.epoch, q.epoch_id, q.from_lsn - 1));
  auto reader = db_->OpenChanges(q.from_lsn);
  if (!reader.ok()) return reader.status();
  const Epoch epoch = db_->epoch();
  net::ReplicateReply reply{epoch.number, epoch.id, db_->last_lsn()};
  c.subscription =
      std::make_unique<RecordSubscription>(db_, std::move(*reader), replication_, q.name);
  return reply;
}

Result<net::Empty> CommandService::ReplicaAck(const net::ReplicaAckRequest& q, Context&) {
  replication_->Ack(q.name, q.applied_lsn, q.durable_lsn);
  return net::Empty{};
}

Result<net::PromoteReply> CommandService::Promote(const net::PromoteRequest& q, Context&) {
  if (!replication_->is_replica()) {
    return Status::InvalidArgument("this node is already a primary (epoch " +
                                   std::to_string(db_->epoch().number) + ")");
  }
  if (!q.force) RELGRAPH_RETURN_IF_ERROR(replication_->CheckPromotion());
  replication_->StopFollowingAndBecomePrimary();
  auto epoch = db_->StartEpoch();
  if (!epoch.ok()) return epoch.status();
  return net::PromoteReply{epoch->number, epoch->id, epoch->first_lsn};
}

Result<net::ReplicationReply> CommandService::ReplicationStatus(const net::ReplicationRequest&,
                                                                Context&) {
  net::ReplicationReply r;
  const Epoch epoch = db_->epoch();
  r.epoch = epoch.number;
  r.epoch_id = epoch.id;
  r.applied_lsn = db_->last_lsn();
  r.sync_replicas = replication_->sync_replicas();
  r.replicas = replication_->Replicas();
  if (replication_->is_replica()) {
    const Replication::Link link = replication_->link();
    r.role = net::ReplicationRole::kReplica;
    r.primary = replication_->primary();
    r.state = link.state;
    r.message = link.message;
    r.primary_lsn = link.primary_lsn;
    r.lag_ms = link.lag_ms;
  } else {
    r.state = "primary";
    r.primary_lsn = r.applied_lsn;
  }
  return r;
}

}  // namespace relgraph
