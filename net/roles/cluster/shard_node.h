// ShardNode: a relgraphd as one shard of a cluster on NATS JetStream (docs/cluster.md).
//
// Why this design: every shard holds the edges that touch its users, both sides of each, so
// every read about one user is answered by one shard, exactly as a single node would. A
// change is decided on one shard (a follow on the follower's: cap, rate limit) and logged
// there; the shard of the other user it touches must apply it too. That is an outbox: the
// outbox thread reads the shard's own WAL from a named cursor (which holds the WAL until the
// changes are sent), groups each batch by target shard, publishes one JetStream message per
// target on that shard's subject, and moves the cursor only once JetStream acknowledged them
// all. The inbox thread pulls the shard's own subject through a durable consumer and applies
// each message with Db::ApplyRemote, which logs each change with its origin's LSN and skips
// what it applied before; it acknowledges a message to JetStream only once its records are
// fsynced. A crash anywhere thus resends or redelivers, and nothing is applied twice. Messages
// are applied in stream order even when the consumer delivers out of it (a delivery lost with
// a NATS node): a gap in its numbering is filled from the stream first (inbox_order.h).
//
// A shard that cannot reach NATS at start still starts: it serves its users by the last map
// it saw (saved in its data directory, net/roles/cluster/map_file.h) and keeps trying to join,
// with backoff; until then its outbox and inbox do not run (the outbox's cursor holds the
// WAL, as when NATS drops). A shard that never saw a map refuses every command until it
// joins: it cannot tell which users are its own.
//
// The map thread watches the shard map (a JetStream key-value entry) and swaps it in; Admit
// answers from the newest map it has seen. The move thread plays this shard's part in a
// bucket move the map names (docs/cluster.md, "Moving buckets online"): as the new owner it
// holds the inbox, then brings the state in from the move's subject and marks the move done;
// as the old owner it publishes the state there, and drops it once the move line is gone.
//
// A shard may be served by a replication group (docs/cluster.md, "Shard replicas"): every
// member watches the map and answers reads about the shard's users, and the outbox, inbox and
// mover run on the group's primary alone, started and stopped as its role changes
// (SetPrimary). They hand on only what the group holds (commit_wait): a record another shard
// applied, a message acknowledged to JetStream or a move marked done survives a failover, so
// the new primary resumes the outbox from its replicated cursor and the inbox from the
// consumer's ack floor with nothing lost or applied twice.
//
// Thread-safety: Admit and AddInfo may be called from any thread; Start and Stop from one;
// SetPrimary from any.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "engine/db.h"
#include "net/cluster/nats_link.h"
#include "net/cluster/placement.h"
#include "net/roles/cluster/pull_consumer.h"
#include "net/roles/service/cluster_gate.h"
#include "storage/env/env.h"

namespace relgraph {

struct ShardNodeOptions {
  std::string nats_url;  // nats://host:port
  uint32_t shard_id = 0;
  net::ClusterNames names;
  std::string outbox_cursor = "cluster-outbox";  // the named cursor of the outbox
  uint32_t batch_records = 4096;                 // WAL records read per outbox batch
  std::chrono::milliseconds retry{500};          // after a NATS failure
  // Joining the cluster while NATS is down is tried again after `retry`, doubling up to this.
  std::chrono::milliseconds join_retry_max{5000};
  // The data directory the last map seen is saved in (map_file.h); empty: none is saved.
  std::string data_dir;
  Env* env = nullptr;  // nullptr: the POSIX filesystem
  // A post of an author with more fans than this goes to every shard, without listing the
  // fans' shards (relgraphd passes the feed's celebrity_fans).
  uint32_t broadcast_fans = 10'000;
  // Log lines (failures, retries); nullptr: stderr.
  std::function<void(const std::string&)> log;
  // The replication group serving this shard (docs/cluster.md, "Shard replicas"); it must be
  // the one the map names for this shard. Empty: the shard is one node, and its outbox, inbox
  // and mover run once it joins; in a group they run only while SetPrimary(true) holds.
  std::string group;
  // Waits until everything up to an LSN is held as a write's reply promises: fsynced here
  // (always done first), and on the group's synchronous replicas while this node holds the
  // lease (Replication::WaitReplicated). nullptr: fsynced here is enough. The outbox sends,
  // the inbox acknowledges and a move hands over or marks done only what this returned OK for.
  std::function<Status(uint64_t lsn)> commit_wait;
};

class ShardNode final : public ClusterGate {
 public:
  // `db` is not owned and must outlive the node.
  ShardNode(Db* db, ShardNodeOptions options);
  ~ShardNode() override;  // Stop()

  // Joins the cluster: connects to NATS, reads the shard map (kNotFound when there is none,
  // kInvalidArgument when it has no shard of this id), creates the cluster's streams when
  // absent, and starts the map, outbox, inbox and move threads, which retry NATS failures by
  // themselves. When NATS does not answer (kUnavailable), it still returns OK: the shard
  // serves by the map saved in the data directory (or, with none, refuses every command,
  // kUnavailable) and a join thread tries again with backoff until it joins (joined()). So
  // too when NATS holds a map older than the one saved in the data directory by
  // (generation, version) and different (a lost JetStream store given a fresh `cluster
  // init`): the shard waits for the map to be restored (`cluster import-map`).
  Status Start();
  // Stops the threads (the outbox of a shard of one node moves its cursor first). Idempotent.
  void Stop() override;
  // A group member's role (RoleControl's observer): true starts the outbox, inbox and move
  // threads (at once when joined, else when it joins), false stops them and returns once they
  // have stopped. Ignored for a shard of one node. Thread-safe; calls are serialized.
  void SetPrimary(bool primary);

  Status Admit(net::Opcode opcode, uint64_t user, uint64_t viewer) const override;
  void AddInfo(std::vector<net::InfoField>* fields) const override;
  Result<std::string> MapText() const override;

  struct Stats {
    uint64_t map_version = 0;     // of the map held (0: none)
    uint64_t map_generation = 0;  // of the map held (net/cluster/placement.h; 0: none)
    uint64_t map_digest = 0;      // ShardMapDigest of the map held (0: none)
    uint64_t forwarded_lsn = 0;   // every change up to here is in JetStream
    uint64_t messages_sent = 0;
    uint64_t records_sent = 0;
    uint64_t messages_applied = 0;
    uint64_t records_applied = 0;
    uint64_t records_skipped = 0;        // redelivered, applied before
    uint64_t messages_rejected = 0;      // undecodable or refused by ApplyRemote (acknowledged)
    uint64_t messages_filled = 0;        // read from the stream to fill a gap in the deliveries
    uint64_t post_conflicts = 0;         // remote posts skipped: another author here has the id
    uint64_t inbound_delay_ms = 0;       // publish to apply, of the last message applied
    uint64_t outbox_map_version = 0;     // the map the outbox routes by, from its next batch on
    uint64_t outbox_map_generation = 0;  // and its generation
    uint64_t moves_exported = 0;         // bucket moves whose state this shard published
    uint64_t moves_imported = 0;         // bucket moves whose state this shard brought in
    uint64_t foreign_dropped = 0;        // records dropped as no user of this shard needs them
  };
  Stats stats() const;
  // The newest map seen; nullptr before any (never joined, none saved).
  std::shared_ptr<const net::ShardMap> map() const;
  // Whether the shard has joined the cluster (its threads run); INFO cluster_joined.
  bool joined() const { return joined_.load(); }
  // Whether the outbox, inbox and mover run on this node (joined, and a group's primary or a
  // shard of one node); INFO cluster_active.
  bool active() const { return workers_running_.load(); }

 private:
  // One attempt to join: NATS, the map, the streams; then the threads start. kUnavailable
  // while NATS does not answer; kNotFound, kInvalidArgument as Start.
  Status Join();
  // Joins, trying again with backoff, until joined or stopped.
  void JoinLoop();
  void MapLoop();
  void OutboxLoop();
  void InboxLoop();
  void MoveLoop();
  // Where `user` is for this shard under map `m` (the Db's SetPlacement): here when it owns
  // the user's bucket and no move takes it away; leaving while a move away is in prepare or
  // flip (still decided here); handed over in its copy phase; elsewhere otherwise.
  UserPlace PlaceOf(const net::ShardMap& m, uint64_t user) const;
  // Whether the inbox must wait under `m`: this shard is taking buckets over and has not
  // brought their state in.
  bool MustHoldInbox(const net::ShardMap& m) const;
  // Reads the marks of the move into this shard that `m` holds, if any, from NATS: whether
  // its state was brought in (the inbox need not wait) and whether the move is done here
  // (this shard answers for the moving users), by this process before a restart or by the
  // group member before it.
  Status LearnMoveMarks(net::NatsLink& link, const net::ShardMap& m);
  // The old owner's part of move `mv` (phase copy): publishes the moving users' state on the
  // move's subject, as one attempt.
  Status ExportMove(const net::ShardMap& m, const net::BucketMove& mv);
  // The new owner's part (phase copy): reads the move's subject until one attempt is whole,
  // brings it in (Db::MoveIn) and marks it so (BringMoveStateIn); then waits for the inbox to
  // apply what it held and marks the move done (CatchUpMove). OK also when stopped or when the
  // map moved on meanwhile (the move thread looks again); a NATS or WAL failure otherwise (the
  // move thread tries again, from the step it reached).
  Status ImportMove(const std::shared_ptr<const net::ShardMap>& m, const net::BucketMove& mv);
  Status BringMoveStateIn(const std::shared_ptr<const net::ShardMap>& m, const net::BucketMove& mv);
  Status CatchUpMove(const std::shared_ptr<const net::ShardMap>& m, const net::BucketMove& mv);
  // Binds a pull subscription to the inbound consumer, made first if there is none (then
  // `*created`, delivering the subject from its start); `*ack_floor` is its ack floor. An
  // existing consumer is never deleted or made again. See shard_inbox.cpp for why.
  Result<std::unique_ptr<PullConsumer>> SubscribeInbox(uint64_t* ack_floor, bool* created);
  // Sleeps `d` unless the node stops (or, for a worker, halts); false once it has.
  bool Pause(std::chrono::milliseconds d, bool workers) const;
  // A worker's wait after a failure: Pause(retry) for the outbox, inbox and mover.
  bool Backoff();
  // Whether the outbox, inbox and move threads must end: the node stops, or steps down.
  bool Halted() const { return stop_.load() || workers_stop_.load(); }
  // Starts and stops those threads. REQUIRES: workers_mu_ held; joined (for Start).
  void StartWorkersLocked();
  void StopWorkersLocked();
  // Durable here, then held by the group (options_.commit_wait).
  Status Commit(uint64_t lsn);
  void Log(const std::string& line) const;
  // Takes `map` if newer than the one held (`from_nats`: a map read at joining replaces the
  // saved one whatever its version: NATS holds the truth). Maps from NATS are saved to the
  // data directory.
  void SetMap(net::ShardMap map, bool from_nats = true, bool force = false);
  // The shards other than this one that must apply `op`, which this shard decided.
  std::vector<uint32_t> TargetsOf(const net::ShardMap& m, const WalOp& op) const;
  // For a remote record that is another shard's first fan of a user of ours, sends that
  // shard the user's retained posts as a posts record (docs/cluster.md, "Feeds").
  Status BackFill(const net::ShardMap& m, const WalRecordView& r,
                  const std::function<void(uint32_t, std::string_view)>& send) const;
  // The inbound consumer's pending messages (delivered or not, unacknowledged), from JetStream.
  Result<uint64_t> InboundPending() const;

  Db* const db_;
  const ShardNodeOptions options_;
  std::unique_ptr<net::NatsLink> link_;
  mutable std::mutex map_mu_;
  std::shared_ptr<const net::ShardMap> map_;  // guarded by map_mu_
  std::atomic<bool> stop_{false};
  std::atomic<bool> joined_{false};
  std::thread join_thread_;
  std::mutex save_mu_;                         // serializes saving the map to the data directory
  std::atomic<bool> inbox_subscribed_{false};  // InboundPending is unknown until then
  std::atomic<bool> inbox_hold_{false};        // a move asks the inbox to wait
  std::atomic<bool> inbox_held_{false};        // the inbox waits (nothing half-applied)
  std::atomic<uint64_t> state_in_move_{0};     // the move whose state this shard brought in
  std::atomic<uint64_t> imported_move_{0};     // ... and is done here: the gate lets its users in
  // The inbox applied, durably, every message of this shard's subject up to this stream
  // sequence (CatchUpMove waits on it).
  std::atomic<uint64_t> inbox_durable_through_{0};
  std::condition_variable map_changed_;  // with map_mu_: wakes the move thread
  std::thread map_thread_, outbox_thread_, inbox_thread_, move_thread_;
  std::mutex workers_mu_;                     // starting and stopping the three below
  std::atomic<bool> workers_running_{false};  // written under workers_mu_
  bool primary_wanted_ = false;               // guarded by workers_mu_: SetPrimary's last word
  std::atomic<bool> workers_stop_{false};     // the outbox, inbox and mover end (Halted)
  mutable std::mutex stats_mu_;
  Stats stats_;  // guarded by stats_mu_
};

}  // namespace relgraph
