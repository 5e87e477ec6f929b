// Replication: what this node is in replication, shared by the command table, the replica's
// follower (replica_follower.h) and relgraphd. docs/replication.md is the user's guide.
//
// On a primary it tracks the replicas attached by REPLICATE (their REPLICA_ACKs) and, with
// sync_replicas = N, makes a write's reply wait until N of them have its LSN durably: the
// server's durability thread calls WaitReplicated after the local WaitDurable, so replies are
// still released in order, and one wait serves every write up to that LSN. A primary with
// fewer than N replicas keeps waiting (as PostgreSQL's synchronous standbys do): writes are
// applied and logged locally but not acknowledged until replicas catch up; Stop() ends the
// wait with an error (shutdown: those replies are never sent).
//
// On a replica it holds the primary's address (named by read_only errors), the follower's
// link state for REPLICATION and INFO, the hook PROMOTE uses to stop the follower, and what
// the follower learned of its group: the primary's sync_replicas and the other replicas'
// addresses (PROMOTE asks them whether one of them is further ahead).
//
// sync_replicas belongs to the replication group, not to one process: a primary's setting is
// copied by its replicas (the follower reads it from the primary's REPLICATION) and kept in
// each node's data directory (net/roles/service/group_settings.h), so a promoted replica and a
// restarted node keep the group's durability promise. A node's own --sync-replicas is a floor
// (SetSyncReplicasFloor): the node never acknowledges with fewer.
//
// Thread-safety: thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "net/protocol/messages.h"
#include "storage/status.h"

namespace relgraph {

class Replication {
 public:
  explicit Replication(uint32_t sync_replicas = 0) : sync_replicas_(sync_replicas) {}

  // ---- the group's settings ----
  // The node's own minimum (its --sync-replicas); sync_replicas() is never below it.
  void SetSyncReplicasFloor(uint32_t floor);
  // Called with the new value each time the group's sync_replicas changes (relgraphd saves it
  // in the data directory). Set before serving.
  void SetOnGroupChange(std::function<void(uint32_t)> persist);
  // A replica heard its primary's setting: sync_replicas() becomes max(floor, value).
  void LearnGroupSyncReplicas(uint32_t value);
  // The other members a replica heard of from its primary ("host:port" each), for PROMOTE.
  void SetPeers(std::vector<std::string> peers);
  std::vector<std::string> peers() const;

  // ---- role ----
  // Makes this node a replica of `primary` ("host:port"); before serving.
  void SetReplicaOf(std::string primary);
  bool is_replica() const { return replica_.load(std::memory_order_acquire); }
  std::string primary() const;
  // The follower installs how to stop it; Promote calls it (it must return once the follower
  // applies nothing more), then the node is a primary.
  void SetFollowerStopper(std::function<void()> stop);
  void StopFollowingAndBecomePrimary();
  // The follower installs how to tell whether another member is further ahead than this node;
  // PROMOTE (without force) calls CheckPromotion first, and refuses on its error.
  void SetPromotionCheck(std::function<Status()> check);
  Status CheckPromotion() const;

  // ---- a replica's link (the follower reports; REPLICATION and INFO read) ----
  struct Link {
    std::string state = "connecting";  // connecting, snapshot, streaming, diverged, failed
    std::string message;
    uint64_t primary_lsn = 0;  // the primary's newest LSN it has heard of
    uint64_t lag_ms = 0;
  };
  void SetLink(const Link& link);
  Link link() const;

  // ---- a primary's replicas ----
  // A REPLICATE stream started (its handle) or ended.
  uint64_t Attach(const std::string& name);
  void Detach(uint64_t handle);
  void Ack(const std::string& name, uint64_t applied_lsn, uint64_t durable_lsn);
  std::vector<net::ReplicaEntry> Replicas() const;
  uint32_t sync_replicas() const { return sync_replicas_.load(std::memory_order_acquire); }
  // Blocks until sync_replicas replicas acked `lsn` durably (at once when sync_replicas is 0);
  // kUnavailable after Stop().
  Status WaitReplicated(uint64_t lsn);
  void Stop();

 private:
  struct Attached {
    std::string name;
    uint64_t applied_lsn = 0, durable_lsn = 0;
    std::chrono::steady_clock::time_point acked;
  };
  uint64_t ReplicatedLocked(uint64_t lsn) const;  // how many attached hold lsn durably

  std::atomic<uint32_t> sync_replicas_;
  uint32_t floor_ = 0;                             // guarded by mu_
  std::function<void(uint32_t)> on_group_change_;  // guarded by mu_
  std::vector<std::string> peers_;                 // guarded by mu_
  std::atomic<bool> replica_{false};
  mutable std::mutex mu_;
  std::condition_variable acked_;
  std::string primary_;                      // guarded by mu_
  std::function<void()> stop_follower_;      // guarded by mu_
  std::function<Status()> promotion_check_;  // guarded by mu_
  Link link_;                                // guarded by mu_
  std::map<uint64_t, Attached> attached_;    // guarded by mu_
  uint64_t next_handle_ = 1;                 // guarded by mu_
  bool stopped_ = false;                     // guarded by mu_
};

}  // namespace relgraph
