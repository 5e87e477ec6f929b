// CommandService's replication handlers (docs/replication.md): a replica's REPLICATE and its
// acks, PROMOTE, the group's status.
#include "net/roles/service/command_service.h"

#include <chrono>
#include <memory>
#include <optional>
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

Result<net::Empty> CommandService::ReplicaAck(const net::ReplicaAckRequest& q, Context& c) {
  std::optional<std::chrono::steady_clock::time_point> sent;
  if (auto* records = dynamic_cast<RecordSubscription*>(c.subscription.get())) {
    sent = records->TakeAnsweredFrameTime();
  }
  replication_->Ack(q.name, q.applied_lsn, q.durable_lsn, sent);
  return net::Empty{};
}

Result<net::PromoteReply> CommandService::Promote(const net::PromoteRequest& q, Context&) {
  if (!replication_->is_replica()) {
    return Status::InvalidArgument("this node is already a primary (epoch " +
                                   std::to_string(db_->epoch().number) + ")");
  }
  RoleChanger* changer = replication_->role_changer();
  if (changer == nullptr) return Status::InvalidArgument("promote: this node cannot change role");
  auto epoch = changer->Promote(q.force);
  if (!epoch.ok()) return epoch.status();
  return net::PromoteReply{epoch->number, epoch->id, epoch->first_lsn};
}

Result<net::Empty> CommandService::ReplicaOf(const net::ReplicaOfRequest& q, Context&) {
  if (q.primary.empty()) return Status::InvalidArgument("replica_of: name the primary, HOST:PORT");
  RoleChanger* changer = replication_->role_changer();
  if (changer == nullptr) {
    return Status::InvalidArgument("replica_of: this node cannot change role");
  }
  RELGRAPH_RETURN_IF_ERROR(changer->ReplicaOf(q.primary, q.resync));
  return net::Empty{};
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

Result<net::PositionReply> CommandService::Position(const net::PositionRequest&, Context&) {
  net::PositionReply r;
  r.role =
      replication_->is_replica() ? net::ReplicationRole::kReplica : net::ReplicationRole::kPrimary;
  r.epoch = db_->epoch().number;
  r.applied_lsn = db_->last_lsn();
  r.durable_lsn = db_->durable_lsn();
  return r;
}

}  // namespace relgraph
