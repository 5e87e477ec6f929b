// ReplicaFollower: keeps a replica's Db a copy of its primary's (docs/replication.md).
//
// Why this design: one thread and one connection, the blocking client, and the engine's own
// pieces: the primary's snapshot (FETCH_SNAPSHOT) when the WAL cannot bridge the gap, then its
// raw WAL records (REPLICATE), applied in the order and with the LSNs the primary gave them
// (Db::ApplyReplicated) and acknowledged after each frame (REPLICA_ACK: applied and durable
// LSNs, which --sync-replicas on the primary waits for). A dropped link reconnects with
// backoff and resumes after the newest applied LSN; a primary whose WAL no longer holds that
// LSN (lsn_expired) makes the follower start over from its snapshot; a primary that never had
// this node's newest records (diverged, after a failover) stops it, saying so, until it is
// told to resynchronize (relgraphd --resync), which discards them; in a group with automatic
// failover it saves those records aside (diverged_tail.h) and resynchronizes by itself. A record
// the replica cannot apply (its state differs from the primary's) stops it as well ("failed"). At
// each connect and every 2 s it also reads the primary's REPLICATION, to copy the group's
// sync_replicas and to know the other replicas, whom PROMOTE asks whether one of them is further
// ahead.
//
// Thread-safety: Start and Stop from one thread; the follower reports through Replication.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "engine/db.h"
#include "net/client/client.h"
#include "net/roles/replication/replication.h"

namespace relgraph {

struct FollowerOptions {
  net::ClientOptions primary;  // host, port, token
  std::string name;            // how the primary lists this replica (its address)
  // Start over from the primary's snapshot before following (discarding diverged records).
  bool resync = false;
  // On divergence: false, stop and wait for an operator; true, save the records the primary
  // never had aside (diverged_tail.h), then resynchronize.
  bool resync_when_diverged = false;
  std::chrono::milliseconds min_backoff{100};
  std::chrono::milliseconds max_backoff{2000};
  // A link that brings no frame for this long (the primary sends a heartbeat every 0.5 s) is
  // dropped and made again.
  std::chrono::milliseconds silence_timeout{3000};
  // Told each change of the link's state, with its message ("streaming", "snapshot: ...").
  std::function<void(const std::string&)> log;
};

class ReplicaFollower {
 public:
  // Neither is owned; both outlive the follower.
  ReplicaFollower(Db* db, Replication* replication, FollowerOptions options);
  ~ReplicaFollower();  // Stop()
  void Start();
  // Returns once the thread is gone (nothing more is applied). Idempotent.
  void Stop();

 private:
  void Loop();
  // One connection's life: optional resync, REPLICATE, apply until the link or the stream
  // ends. Returns why it ended.
  Status FollowOnce();
  Status Resync(net::Client& client);
  // Saves this node's records from `from_lsn` (the diverged error's detail) aside.
  Status SaveDiverged(const Status& diverged);
  // Reads the primary's REPLICATION: the group's sync_replicas and the other replicas.
  Status LearnGroup(net::Client& primary);
  void PollGroup();  // LearnGroup on a short-lived connection of its own
  // PROMOTE's check (any thread): an error when another member this node knows of is a newer
  // primary or holds a newer LSN than this node.
  Status CheckNoPeerAhead() const;
  void Report(const std::string& state, const std::string& message);
  bool Sleep(std::chrono::milliseconds d);  // false when stopping

  Db* const db_;
  Replication* const replication_;
  const FollowerOptions options_;
  bool resync_;               // the follower thread's
  bool halted_ = false;       // likewise: diverged, or a record failed to apply
  uint64_t primary_lsn_ = 0;  // likewise
  std::chrono::steady_clock::time_point last_frame_{};  // likewise
  std::string last_logged_;                             // likewise
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace relgraph
