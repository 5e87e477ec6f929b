// Replication: what this node is in replication, shared by the command table, the replica's
// follower (replica_follower.h), the role's control (role_control.h), a group's agent
// (group_agent.h) and relgraphd. docs/replication.md is the user's guide.
//
// On a primary it tracks the replicas attached by REPLICATE (their REPLICA_ACKs) and, with
// sync_replicas = N, makes a write's reply wait until N of them have its LSN durably: the
// server's durability thread calls WaitReplicated after the local WaitDurable, so replies are
// still released in order, and one wait serves every write up to that LSN. A primary with
// fewer than N replicas keeps waiting (as PostgreSQL's synchronous standbys do): writes are
// applied and logged locally but not acknowledged until replicas catch up; Stop() ends the
// wait with an error (shutdown: those replies are never sent), and so does stepping down
// (SetReplicaOf on a primary: the outcome of those writes is unknown to their clients).
//
// In a replication group with automatic failover, the node is also fenced: once EnableFence
// is called, a reply is released only while the group's lease is this node's
// (SetLeaseValidUntil, which the agent moves forward at each renewal) or, when the lease
// cannot be renewed, while every member the lease counts has confirmed its link within the
// failsafe window (Confirm: a member does not take the lease while it hears this node). Only
// those members' acknowledgements count toward sync_replicas (SetCountedMembers).
//
// On a replica it holds the primary's address (named by read_only errors), the follower's
// link state for REPLICATION and INFO, and what the follower learned of its group: the
// primary's sync_replicas and the other replicas' addresses (PROMOTE asks them whether one of
// them is further ahead).
//
// sync_replicas belongs to the replication group, not to one process: a primary's setting is
// copied by its replicas (the follower reads it from the primary's REPLICATION) and kept in
// each node's data directory (group_settings.h), so a promoted replica and a restarted node
// keep the group's durability promise. A node's own --sync-replicas is a floor
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
#include <optional>
#include <string>
#include <vector>

#include "engine/durable/epoch_history.h"
#include "net/protocol/messages.h"
#include "storage/status.h"

namespace relgraph {

// How REPLICA_OF and PROMOTE change this node's role: role_control.h without a group,
// group_agent.h in a group with automatic failover (which refuses them without force).
class RoleChanger {
 public:
  virtual ~RoleChanger() = default;
  // Follow `primary` ("host:port") from now on; a primary steps down.
  virtual Status ReplicaOf(const std::string& primary, bool resync) = 0;
  // Become a primary in a new epoch. force: skip the check that no other replica is ahead.
  virtual Result<Epoch> Promote(bool force) = 0;
};

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
  // Makes this node a replica of `primary` ("host:port"; empty while a group elects one).
  // On a primary, replies still waiting fail (kUnavailable: their outcome is unknown).
  void SetReplicaOf(std::string primary);
  void BecomePrimary();
  bool is_replica() const { return replica_.load(std::memory_order_acquire); }
  // The primary to name to a write refused here (empty: none known now).
  std::string primary() const;
  // A switchover: writes are refused as on a replica (naming `to`), while replies already
  // waiting are released as usual. ResumeWrites ends it (a switchover that failed).
  void PauseWrites(std::string to);
  // During a pause, nothing logged after `lsn` is acknowledged (WaitReplicated waits until the
  // pause ends or the role changes): records written by no client (a shard's inbox, a move)
  // would otherwise be confirmed past what the switchover's target was seen to hold.
  void HoldAcknowledgementsAfter(uint64_t lsn);
  void ResumeWrites();
  // Whether a write must be refused now: a replica, or a primary handing over.
  bool refuses_writes() const {
    return replica_.load(std::memory_order_acquire) || paused_.load(std::memory_order_acquire);
  }
  // Who carries out REPLICA_OF and PROMOTE (nullptr: they are refused). Set before serving.
  void SetRoleChanger(RoleChanger* changer) { changer_ = changer; }
  RoleChanger* role_changer() const { return changer_; }
  // The follower installs how to tell whether another member is further ahead than this node;
  // PROMOTE (without force) calls CheckPromotion first, and refuses on its error.
  void SetPromotionCheck(std::function<Status()> check);
  Status CheckPromotion() const;

  // ---- a group's lease (group_agent.h) ----
  // From now on replies wait for the fence as well: the lease valid, or the failsafe.
  // `failsafe_window`: how long a member's confirmation lasts (its link timeout less margin).
  void EnableFence(std::chrono::milliseconds failsafe_window);
  bool fenced() const { return fenced_.load(std::memory_order_acquire); }
  void SetLeaseValidUntil(std::chrono::steady_clock::time_point until);
  // The lease's members: only their acknowledgements count toward sync_replicas, and the
  // failsafe needs each one's confirmation.
  void SetCountedMembers(std::vector<std::string> members);
  // Whether a reply may be released now, and why not (for status and logs).
  bool MayAcknowledge(std::chrono::steady_clock::time_point now) const;
  // The newest LSN whose replies were released (0: none, or not fenced and no sync replicas).
  uint64_t acked_lsn() const { return acked_lsn_.load(std::memory_order_acquire); }

  // ---- a replica's link (the follower reports; REPLICATION and INFO read) ----
  struct Link {
    std::string state = "connecting";  // connecting, snapshot, streaming, diverged, failed
    std::string message;
    uint64_t primary_lsn = 0;  // the primary's newest LSN it has heard of
    uint64_t lag_ms = 0;
    // When the last frame came from the primary (a group member takes a lapsed lease only
    // when it has not heard its primary for the lease's TTL).
    std::chrono::steady_clock::time_point last_frame{};
  };
  void SetLink(const Link& link);
  Link link() const;

  // ---- a primary's replicas ----
  // A REPLICATE stream started (its handle) or ended.
  uint64_t Attach(const std::string& name);
  void Detach(uint64_t handle);
  // `frame_sent`: when this node made the frame the ack answers (the failsafe's Confirm).
  void Ack(const std::string& name, uint64_t applied_lsn, uint64_t durable_lsn,
           std::optional<std::chrono::steady_clock::time_point> frame_sent = std::nullopt);
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
  uint64_t ReplicatedLocked(uint64_t lsn) const;  // how many counted members hold lsn durably
  bool MayAcknowledgeLocked(std::chrono::steady_clock::time_point now) const;
  void NoteAcked(uint64_t lsn);

  std::atomic<uint32_t> sync_replicas_;
  uint32_t floor_ = 0;                             // guarded by mu_
  std::function<void(uint32_t)> on_group_change_;  // guarded by mu_
  std::vector<std::string> peers_;                 // guarded by mu_
  std::atomic<bool> replica_{false};
  std::atomic<bool> paused_{false};
  std::atomic<uint64_t> hold_after_{UINT64_MAX};  // with paused_: HoldAcknowledgementsAfter
  std::string pause_target_;                      // guarded by mu_
  mutable std::mutex mu_;
  std::condition_variable acked_;
  std::string primary_;             // guarded by mu_
  RoleChanger* changer_ = nullptr;  // set before serving
  std::atomic<bool> fenced_{false};
  std::atomic<int64_t> lease_until_ns_{0};  // steady clock; written under mu_
  std::atomic<uint64_t> acked_lsn_{0};
  std::chrono::milliseconds failsafe_window_{0};  // guarded by mu_
  bool counted_set_ = false;                      // guarded by mu_: members_ limits counting
  std::vector<std::string> counted_;              // guarded by mu_
  std::map<std::string, std::chrono::steady_clock::time_point> confirmed_;  // guarded by mu_
  uint64_t role_changes_ = 0;                // guarded by mu_: waits end on a change
  std::function<Status()> promotion_check_;  // guarded by mu_
  Link link_;                                // guarded by mu_
  std::map<uint64_t, Attached> attached_;    // guarded by mu_
  uint64_t next_handle_ = 1;                 // guarded by mu_
  bool stopped_ = false;                     // guarded by mu_
};

}  // namespace relgraph
