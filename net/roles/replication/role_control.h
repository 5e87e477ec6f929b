// RoleControl: changes this node's role at run time, without a restart: follow a primary
// (REPLICA_OF, or a group's lease naming another node), or become a primary in a new epoch
// (PROMOTE, or a group's election). It owns the replica's follower; every role change goes
// through it, one at a time, so the follower is always stopped before the node takes writes
// and the node refuses writes before a follower starts.
//
// Thread-safety: thread-safe; role changes are serialized.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "engine/db.h"
#include "net/roles/replication/replica_follower.h"
#include "net/roles/replication/replication.h"

namespace relgraph {

class RoleControl final : public RoleChanger {
 public:
  // `follower` is the template of every follower started: token, this node's name (its
  // address), timeouts, log, divergence policy; its `primary` address and `resync` are set
  // per call. Neither pointer is owned; both outlive this.
  RoleControl(Db* db, Replication* replication, FollowerOptions follower);
  ~RoleControl() override;  // Stop()

  // REPLICA_OF and PROMOTE (RoleChanger): Follow, and Promote with the check that no other
  // replica this node knows of is ahead (skipped with force).
  Status ReplicaOf(const std::string& primary, bool resync) override;
  Result<Epoch> Promote(bool force) override;

  // Follows `primary` ("host:port") from now on: a follower already running stops first; a
  // primary becomes a replica first (its waiting replies fail). An empty `primary` stops
  // following and waits, read-only (a group member while no primary is known).
  Status Follow(const std::string& primary, bool resync);
  // Stops following and starts an epoch numbered at least `at_least`; the node takes writes
  // once it is logged.
  Result<Epoch> BecomePrimary(uint64_t at_least);
  // A node whose history is already the primary's (a group's primary restarted while it still
  // held the lease): stops following and takes writes, in its current epoch.
  void ResumeAsPrimary();
  std::string following() const;  // the primary followed now; empty when none
  // Told of each role change, in order, with whether this node now takes writes (a shard's
  // outbox, inbox and mover run on its group's primary alone): after a node became primary;
  // for a replica, once writes are refused and before its follower starts, so nothing the
  // observer stops writes beside the follower. Called on the thread changing the role; it may
  // block (role changes wait for it). Set before the first role change.
  void SetRoleObserver(std::function<void(bool primary)> observer);
  void Stop();  // stops the follower (shutdown); idempotent

 private:
  void StopFollowerLocked();
  void Tell(bool primary);  // the observer, under change_mu_

  Db* const db_;
  Replication* const replication_;
  const FollowerOptions template_;
  std::mutex change_mu_;  // one role change (and its observer) at a time; before mu_
  std::function<void(bool)> observer_;
  mutable std::mutex mu_;
  std::unique_ptr<ReplicaFollower> follower_;  // guarded by mu_
  std::string following_;                      // guarded by mu_
};

}  // namespace relgraph
