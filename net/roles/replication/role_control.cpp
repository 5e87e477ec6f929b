#include "net/roles/replication/role_control.h"

namespace relgraph {

RoleControl::RoleControl(Db* db, Replication* replication, FollowerOptions follower)
    : db_(db), replication_(replication), template_(std::move(follower)) {}

RoleControl::~RoleControl() {
  Stop();
}

void RoleControl::StopFollowerLocked() {
  if (follower_) {
    follower_->Stop();  // returns once nothing more is applied
    follower_.reset();
    replication_->SetPromotionCheck(nullptr);  // it asked through the follower
  }
  following_.clear();
}

void RoleControl::Stop() {
  std::lock_guard lock(mu_);
  StopFollowerLocked();
}

std::string RoleControl::following() const {
  std::lock_guard lock(mu_);
  return following_;
}

Status RoleControl::ReplicaOf(const std::string& primary, bool resync) {
  return Follow(primary, resync);
}

Status RoleControl::Follow(const std::string& primary, bool resync) {
  FollowerOptions o = template_;
  if (!primary.empty()) {
    RELGRAPH_RETURN_IF_ERROR(net::ParseHostPort(primary, &o.primary.host, &o.primary.port));
    if (primary == template_.name) {
      return Status::InvalidArgument("replica_of " + primary + ": that is this node");
    }
  }
  o.resync = resync;
  std::lock_guard change(change_mu_);
  {
    std::lock_guard lock(mu_);
    replication_->SetReplicaOf(primary);  // writes refused, waiting replies fail
  }
  // A shard's outbox, inbox and mover stop before a follower applies anything here: what
  // they logged meanwhile is a tail the new primary lacks, which the follower discards.
  Tell(false);
  std::lock_guard lock(mu_);
  StopFollowerLocked();
  if (primary.empty()) return Status::OK();
  follower_ = std::make_unique<ReplicaFollower>(db_, replication_, o);
  follower_->Start();
  following_ = primary;
  if (template_.log) {
    template_.log("following " + primary + (resync ? " (resynchronizing from its snapshot)" : ""));
  }
  return Status::OK();
}

void RoleControl::SetRoleObserver(std::function<void(bool primary)> observer) {
  std::lock_guard change(change_mu_);
  observer_ = std::move(observer);
}

void RoleControl::Tell(bool primary) {
  if (observer_) observer_(primary);
}

Result<Epoch> RoleControl::Promote(bool force) {
  if (!force) RELGRAPH_RETURN_IF_ERROR(replication_->CheckPromotion());
  return BecomePrimary(0);
}

Result<Epoch> RoleControl::BecomePrimary(uint64_t at_least) {
  std::lock_guard change(change_mu_);
  Result<Epoch> epoch = Status(Code::kUnavailable, "not started");
  {
    std::lock_guard lock(mu_);
    StopFollowerLocked();
    epoch = db_->StartEpoch(at_least);  // fsynced before the node takes a write
    if (!epoch.ok()) return epoch.status();
    replication_->BecomePrimary();
    if (template_.log) {
      template_.log("primary in epoch " + std::to_string(epoch->number) + " from LSN " +
                    std::to_string(epoch->first_lsn));
    }
  }
  Tell(true);
  return epoch;
}

void RoleControl::ResumeAsPrimary() {
  std::lock_guard change(change_mu_);
  {
    std::lock_guard lock(mu_);
    StopFollowerLocked();
    replication_->BecomePrimary();
    if (template_.log) {
      template_.log("primary again in epoch " + std::to_string(db_->epoch().number));
    }
  }
  Tell(true);
}

}  // namespace relgraph
