// Replication: what this node is in replication, shared by the command table, the replica's
// follower (tools/replica/) and relgraphd. docs/replication.md is the user's guide.
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
// link state for REPLICATION and INFO, and the hook PROMOTE uses to stop the follower.
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

  // ---- role ----
  // Makes this node a replica of `primary` ("host:port"); before serving.
  void SetReplicaOf(std::string primary);
  bool is_replica() const { return replica_.load(std::memory_order_acquire); }
  std::string primary() const;
  // The follower installs how to stop it; Promote calls it (it must return once the follower
  // applies nothing more), then the node is a primary.
  void SetFollowerStopper(std::function<void()> stop);
  void StopFollowingAndBecomePrimary();

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
  uint32_t sync_replicas() const { return sync_replicas_; }
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

  const uint32_t sync_replicas_;
  std::atomic<bool> replica_{false};
  mutable std::mutex mu_;
  std::condition_variable acked_;
  std::string primary_;                    // guarded by mu_
  std::function<void()> stop_follower_;    // guarded by mu_
  Link link_;                              // guarded by mu_
  std::map<uint64_t, Attached> attached_;  // guarded by mu_
  uint64_t next_handle_ = 1;               // guarded by mu_
  bool stopped_ = false;                   // guarded by mu_
};

}  // namespace relgraph
