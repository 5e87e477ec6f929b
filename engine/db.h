// Db: the engine's entry point: the follow graph and the feed, made durable by the write-ahead
// log and snapshots, with recovery on Open.
//
// Why this design: a mutation decides its outcome, applies it and appends its WAL record under
// one exclusive lock, so WAL order is apply order; it then waits for durability (Commit)
// outside the lock, so concurrent writers in `always` mode share one fsync (group commit).
// Reads take the lock shared. Only calls that changed the graph are logged, with their decided
// outcome (time included), so replay decides nothing again. While the WAL cannot be written
// (a full disk, an I/O error: WalWriter stalls and retries), every new mutation is refused
// with kUnavailable before it changes anything, and reads go on; a mutation already applied
// and appended when the failure hit keeps its place: under `always` it waits until a retry
// has made its record durable (or Close refuses it, and its record is cut off the WAL), so
// the memory, the WAL and the replies agree. Writes resume by themselves once a retry works.
//
// Open locks DATADIR/LOCK: a second Db (or process) on the same directory gets kUnavailable.
// Recovery on Open: remove unfinished snapshot temp files; load the newest snapshot that passes
// every check (a damaged one is reported and the previous one tried); replay the WAL after its
// LSN (truncating a torn tail of the newest segment); continue in a new segment. Damage
// anywhere else stops Open with the reader's error (file, offset, repair command).
//
// Snapshots (docs/snapshot-format.md) are taken online: a point-in-time image of the graph
// (Graph::BeginImage, copy-on-write per user) copied in slices, each under the lock held
// shared, so writers wait for one slice at most and readers never.
//
// The id index grows in steps (engine/graph/id_map.h): a write that leaves it growing wakes a
// background thread that moves the rest, a hold of the exclusive lock at a time, as an
// operation in steps does (DbOptions::background_id_growth).
//
// The feed (engine/feed/feed.h) lives beside the graph under its own mutex, taken after the graph's
// lock: timeline reads hold the graph shared and the feed exclusively, so they never block
// graph reads. A background thread runs the feed's fan-out in bounded batches, each under the
// graph lock shared and the feed mutex; DrainFanout() runs it to the end in the caller.
//
// Thread-safety: all methods are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "engine/background_worker.h"
#include "engine/cluster/user_place.h"
#include "engine/db_options.h"
#include "engine/durable/cursor_table.h"
#include "engine/durable/epoch_history.h"
#include "engine/durable/recovery.h"
#include "engine/durable/wal_records.h"
#include "engine/feed/feed.h"
#include "engine/graph/graph.h"
#include "engine/locked_db.h"
#include "engine/stream/change_reader.h"
#include "storage/env/env.h"
#include "storage/snapshot/snapshot_file.h"
#include "storage/wal/wal_writer.h"

namespace relgraph {

class Db {
 public:
  // Opens (creating it if needed) the data directory `dir` and recovers its state. With an
  // empty `dir` the Db is purely in memory (no WAL). REQUIRES: ValidateGraphOptions(options.graph).
  static Result<std::unique_ptr<Db>> Open(const std::string& dir, const DbOptions& options);
  ~Db();  // Close(), ignoring its status
  // Flushes and fsyncs the WAL and closes it. Later mutations fail. Idempotent (a second
  // call returns the first one's status). While the WAL cannot be written, see
  // WalWriter::Close: under `always` it is OK when every acknowledged write is durable.
  Status Close();

  // Graph's mutations, logged and made durable as the durability mode promises before they
  // return. Same errors as Graph, plus kUnavailable when the WAL has failed or is closed.
  // With `commit_lsn` set, a mutation under `always` does not wait for its fsync: it returns
  // at once and *commit_lsn is the LSN to pass to WaitDurable before the outcome may be
  // acknowledged (0: nothing to wait for, which is always the case in the other modes).
  Result<FollowOutcome> Follow(UserId a, UserId b, uint64_t* commit_lsn = nullptr);
  Result<FollowOutcome> FollowAt(UserId a, UserId b, TimestampMs ts,
                                 uint64_t* commit_lsn = nullptr);
  Result<bool> Unfollow(UserId a, UserId b, uint64_t* commit_lsn = nullptr);
  // One write of a pipelined run (WriteBatch).
  struct BatchWrite {
    enum class Kind : uint8_t { kFollow, kUnfollow };
    Kind kind = Kind::kFollow;
    UserId a = 0;                   // follower
    UserId b = 0;                   // followee
    std::optional<TimestampMs> ts;  // kFollow: the caller's time (as FollowAt); else the engine's
  };
  struct BatchWriteResult {
    Status status;
    FollowOutcome follow;  // kFollow, when status is OK
    bool removed = false;  // kUnfollow, when status is OK
  };
  // Runs `writes` in order as one unit: one exclusive lock, the graph's cache misses overlapped
  // as Graph::Import overlaps them, one WAL append of every record they make. results[i] is
  // exactly what Follow, FollowAt or Unfollow would have returned for writes[i] run alone in
  // that order. A WAL failure fails every write that had a record to log (the graph has them,
  // as after a failed single write). commit_lsn as for those: the batch's last record.
  // REQUIRES: results.size() == writes.size().
  void WriteBatch(std::span<const BatchWrite> writes, std::span<BatchWriteResult> results,
                  uint64_t* commit_lsn = nullptr);
  // Removes `a` (Graph::RemoveUser), logged as one record, then clears its fans and the
  // requests it holds in steps of step_units, each under the exclusive lock: other writers
  // wait for a step at a time. Meanwhile `a` has no following, blocks or sent requests and is
  // public, and Follow, Unfollow, Block, SetPrivate, Approve and Publish naming it fail with
  // kUnavailable (docs/access.md, "Removing a user"). Returns when every step is done.
  Result<uint64_t> RemoveUser(UserId a, uint64_t* commit_lsn = nullptr);
  // Blocks, private accounts and follow requests (Graph's, docs/access.md), logged like the
  // rest; edges they create or remove reach the feed as follows and unfollows do (a block
  // takes each side's posts out of the other's timeline). A Follow of a private account
  // returns Has(relation, kRequested) and logs a request, not a follow.
  Result<BlockOutcome> Block(UserId a, UserId b, uint64_t* commit_lsn = nullptr);
  Result<bool> Unblock(UserId a, UserId b, uint64_t* commit_lsn = nullptr);
  // Going public is logged as one record and is public at once; the requests pending then are
  // approved in steps of step_units, oldest first, each under the exclusive lock
  // (docs/access.md, "Going public"). Returns when every step is done. One operation in steps
  // runs at a time: a second RemoveUser or SetPrivate waits for it (not holding the lock).
  Result<SetPrivateOutcome> SetPrivate(UserId a, bool on, uint64_t* commit_lsn = nullptr);
  Result<FollowOutcome> Approve(UserId target, UserId requester, uint64_t* commit_lsn = nullptr);
  Result<bool> Reject(UserId target, UserId requester, uint64_t* commit_lsn = nullptr);
  Result<bool> Withdraw(UserId requester, UserId target, uint64_t* commit_lsn = nullptr);
  // Blocks until the WAL is fsynced through `lsn` (one fsync serves every waiter); kUnavailable
  // once the WAL has failed.
  Status WaitDurable(uint64_t lsn);

  // Feed's mutations (engine/feed/feed.h), logged like the graph's.
  Result<PublishOutcome> Publish(UserId author, PostId post, uint32_t kind,
                                 std::optional<TimestampMs> ts, uint64_t* commit_lsn = nullptr);
  Status DeletePost(UserId author, PostId post, uint64_t* commit_lsn = nullptr);
  Result<bool> Mute(UserId user, UserId other, bool on, uint64_t* commit_lsn = nullptr);
  Result<bool> Hide(UserId author, UserId from, bool on, uint64_t* commit_lsn = nullptr);
  // Feed reads.
  Result<FeedPage> Timeline(UserId user, const FeedPageRequest& request);
  Result<FeedPage> UserPosts(UserId author, const FeedPageRequest& request) const;
  Result<std::vector<UserId>> Mutes(UserId user) const;
  Result<std::vector<UserId>> Hides(UserId author) const;
  // Runs queued fan-out in the calling thread until the queue is empty.
  void DrainFanout();
  // Runs one bounded batch of it (FeedOptions::fanout_batch) in the calling thread; true
  // while work remains. Tests interleave it with other calls.
  bool RunFanoutBatch();
  // Starts moving the feed's rings and inboxes into fresh, packed pools now (the fan-out
  // starts it itself when a pool is fragmented, Feed::BeginPoolCompaction); the move runs
  // with the fan-out, a bounded step at a time.
  void CompactFeedPools();
  FeedStats feed_stats() const;
  // Graph and feed invariants (Graph::CheckInvariants, Feed::CheckInvariants), under the locks.
  Status CheckInvariants() const;
  // Fan-out delays (ms) of tasks finished since the last call.
  std::vector<double> TakeFanoutDelays();
  // Runs fn(const Graph&, const Feed&) under both locks (digests, checks).
  template <typename Fn>
  auto ReadFeed(Fn&& fn) const {
    std::shared_lock lock(mu_);
    std::lock_guard feed_lock(feed_mu_);
    return fn(*graph_, *feed_);
  }

  // Runs fn(const Graph&) under the shared lock: every query goes through here.
  template <typename Fn>
  auto Read(Fn&& fn) const {
    std::shared_lock lock(mu_);
    return fn(*graph_);
  }

  // Writes a snapshot of the current state online, then applies retention: keeps the newest
  // keep_snapshots snapshots and deletes WAL segments the oldest kept one covers (none with
  // keep_all_wal). One snapshot runs at a time (a second caller waits). kInvalidArgument for
  // an in-memory Db.
  Result<SnapshotInfo> Snapshot();

  // The change stream (docs/change-stream.md): a reader of every change from `from_lsn`
  // (kChangesFromNow: the first change made after this call) of the kinds in `kinds`. Changes
  // become visible to readers once fsynced under `always`, once written to the file under
  // `everysec` and `none`. REQUIRES: the reader does not outlive this Db. Errors:
  // kInvalidArgument (an in-memory Db, a bad mask, an LSN past the next one); kLsnExpired
  // when the WAL no longer holds from_lsn (*oldest_lsn, when given, gets the oldest it holds).
  static constexpr uint64_t kChangesFromNow = 0;
  Result<std::unique_ptr<ChangeReader>> OpenChanges(uint64_t from_lsn,
                                                    ChangeKindMask kinds = kAllChangeKinds,
                                                    uint64_t* oldest_lsn = nullptr);
  // ---- named cursors (docs/change-stream.md, "Named cursors") ----
  // Records that consumer `name` has handled every change up to `lsn` (its next read starts at
  // lsn + 1), durably under the durability mode like any write (commit_lsn as for mutations).
  // A new name creates the cursor (at most kMaxCursors: kLimitExceeded); lsn 0 creates or
  // holds it before LSN 1, so a consumer pins the WAL before its first event. Errors:
  // kInvalidArgument (in memory; a bad name; lsn past the newest LSN logged), kLsnExpired when
  // lsn + 1 is no longer in the WAL (detail: the oldest LSN kept), kUnavailable after a WAL
  // failure.
  Status AckCursor(std::string_view name, uint64_t lsn, uint64_t* commit_lsn = nullptr);
  // Forgets a cursor (it no longer holds WAL). kNotFound when there is none of that name.
  Status RemoveCursor(std::string_view name, uint64_t* commit_lsn = nullptr);
  struct CursorInfo {
    std::string name;
    uint64_t acked_lsn = 0;
    TimestampMs acked_ms = 0;
    bool expired = false;  // the WAL no longer holds acked_lsn + 1: it cannot resume
  };
  std::vector<CursorInfo> Cursors();  // name order
  // The LSN a cursor resumes from (acked + 1). kNotFound for an unknown name; kLsnExpired
  // (detail: the oldest LSN kept) when the WAL no longer holds it.
  Result<uint64_t> CursorResumeLsn(std::string_view name);
  // The oldest LSN the WAL holds (the next one when it holds none); 0 in memory. Kept in
  // memory: found at Open and again whenever retention deletes segments (nothing else does
  // while the Db is open), so asking costs no I/O.
  uint64_t OldestWalLsn() const;

  // The newest snapshot file, open for reading (retention may delete it meanwhile: an open
  // file stays readable), so that a new consumer or replica can load it and then read the
  // change stream from lsn + 1. Errors: kInvalidArgument (in memory), kNotFound (none yet).
  struct SnapshotFile {
    uint64_t lsn = 0;
    uint64_t file_bytes = 0;
    std::unique_ptr<RandomAccessFile> file;
  };
  Result<SnapshotFile> OpenNewestSnapshot();
  // The newest LSN the change stream may deliver now (0 in memory). Writes the WAL buffer
  // out, at most once a millisecond, when `want` is logged but not yet visible.
  uint64_t VisibleLsn(uint64_t want = 0);

  // ---- replication (docs/replication.md; engine/replication/replica_applier.h) ----
  using ReplicatedRecord = LoggedRecord;  // a record as the primary logged it
  // Applies a primary's records, in order, through the live paths (the feed's fan-out, inbox
  // updates and celebrity checks run as on the primary), and appends each to this Db's WAL
  // with its LSN, so the replica's WAL and change stream match the primary's. Every record's
  // outcome was decided by the primary; one this state cannot take (a follow of an edge that
  // exists, a publish whose outcome differs) means the two states differ: kCorruption naming
  // the LSN, and replication must stop. kInvalidArgument when records[0].lsn is not
  // last_lsn() + 1 or LSNs are not consecutive. Records before a failing one stay applied.
  // commit_lsn as for mutations.
  Status ApplyReplicated(std::span<const ReplicatedRecord> records, uint64_t* commit_lsn = nullptr);
  // Replaces the whole state with the snapshot file `path` (outside the data directory; it is
  // moved in), or with the empty state when `path` is empty, discarding every WAL segment and
  // snapshot: a replica that fell behind its primary's WAL, or was told to resynchronize after
  // diverging, starts over from the primary's snapshot. The WAL goes on at the snapshot's
  // LSN + 1. Open change readers of this Db end (their WAL is gone). Errors: the snapshot's
  // checks (nothing is changed then), kInvalidArgument in memory.
  Status ResetToSnapshot(const std::string& path);
  // Starts a new epoch (a promotion): logs an epoch record with the next number (or
  // `at_least`, when larger: a group's lease may know of a newer epoch than this node's) and a
  // random id, fsynced before it returns. kInvalidArgument in memory.
  Result<Epoch> StartEpoch(uint64_t at_least = 0);
  Epoch epoch() const;                // the current epoch
  std::vector<Epoch> epochs() const;  // the history, oldest first
  // May a node whose last record is `last_lsn` in epoch (number, id) follow this Db? OK, or
  // kDiverged naming the records it holds that this Db never had (EpochHistory::CheckFollower,
  // and an LSN past this Db's newest).
  Status CheckFollower(uint64_t number, uint64_t id, uint64_t last_lsn) const;

  // ---- cluster shards (docs/cluster.md; engine/cluster/) ----
  struct RemoteApplied {
    uint64_t applied = 0;  // records applied and logged
    uint64_t skipped = 0;  // at or below the origin's position: applied before (redelivered)
    // Remote posts not kept because another author here holds their id (Feed::
    // EnsurePublished): post ids must be unique across a cluster.
    uint64_t post_conflicts = 0;
  };
  // Tells the Db where each user lives (nullptr: every user here, a single node). A follow of
  // a user not decided here, made when no other fan here is settled, is logged with
  // kFollowFirstRemoteFan (engine/cluster/shard_decisions.h, FirstRemoteFanFlags). `place` is
  // called under the Db's exclusive lock and must not call the Db.
  void SetPlacement(PlacementFn place);
  // Reads for a shard's outbox: a user's retained posts, oldest first; and up to `max` of its
  // fans (any order), with its fan count.
  std::vector<FeedEntry> RetainedPosts(UserId author) const;
  struct FanSample {
    uint64_t fan_count = 0;
    std::vector<UserId> fans;  // all of them when fan_count <= max
  };
  FanSample FansUpTo(UserId user, size_t max) const;
  // Bucket moves (docs/cluster.md, "Moving a bucket"; engine/cluster/bucket_move.h). One
  // record of a moving user's state: a movable type (IsMovable) and its payload.
  struct MovedState {
    WalRecordType type;
    std::string payload;
  };
  // The state of the users `moving` selects, for another shard to bring in (MoveIn), in the
  // order MoveIn applies it: their private marks, blocks either way, follows either way with
  // their times, requests either way, their retained posts and mutes, and hides they made or
  // are subject to. Changes nothing. Lists in slices of 4,096 entries under the shared lock,
  // so writers wait for one slice at a time; the moving users must be handed over
  // (UserPlace::kHandedOver). Waits for an operation in steps to end.
  Result<std::vector<MovedState>> ExportUsers(const std::function<bool(UserId)>& moving) const;
  // Drops what no user `kept` selects needs here, each drop logged as a moved record for
  // shard `to`: every relation between two users it does not select, their mutes, and the
  // posts of an author it does not select that no kept user follows. Returns the number of
  // records dropped. Drops in batches of 1,024 records under the exclusive lock. kUnavailable
  // after a WAL failure (the batches before it stay dropped).
  Result<uint64_t> DropForeign(uint32_t to, const std::function<bool(UserId)>& kept);
  // Takes the users `moving` selects from shard `from`: applies `state` (ExportUsers') by ensure
  // forms, each record logged as a moved record (WAL type 22). A follow, block, request or
  // hide decided by a user of this shard that is not moving is skipped: this shard's own is
  // newer. Then, for each user of another shard that a moving user follows and no user
  // staying here does, the copies of its posts start over (posts_wanted, answered by a
  // back-fill). kInvalidArgument for a record that does not decode or is not movable
  // (nothing after it is applied); kUnavailable after a WAL failure.
  Status MoveIn(uint32_t from, std::span<const MovedState> state,
                const std::function<bool(UserId)>& moving);
  // Applies changes shard `origin` decided, given as its WAL records (LSNs increasing), each
  // by its ensure form through the live paths, logged as one remote record (WAL type 19) with
  // its origin and LSN (engine/cluster/remote_applier.h). Records at or below
  // InboundPosition(origin) are skipped. Errors: kInvalidArgument for LSNs out of order, a
  // record type shards do not exchange or a payload that does not decode; kUnavailable after a
  // WAL failure. Records before a failing one stay applied. With `commit_lsn`, returns at once
  // in every mode with the LSN to pass to WaitDurable (0: nothing logged).
  Result<RemoteApplied> ApplyRemote(uint32_t origin, std::span<const ReplicatedRecord> records,
                                    uint64_t* commit_lsn = nullptr);
  // The newest LSN of `origin` applied here (0: none), and the whole table.
  uint64_t InboundPosition(uint32_t origin) const;
  std::map<uint32_t, uint64_t> InboundPositionsNow() const;
  // Writes and fsyncs the WAL through `lsn` in every durability mode (WaitDurable waits only
  // under `always`): a shard makes remote changes durable so before JetStream forgets them.
  Status SyncThrough(uint64_t lsn);

  // ---- the seam of the rooms that apply records (engine/replication/, engine/cluster/) ----
  // Which durability a RunExclusive call hands to its caller's *commit_lsn: under `always`
  // only (else it commits itself), or in every mode.
  enum class HandOver : uint8_t { kUnderAlways, kEveryMode };
  // Runs fn(LockedDb&) under the exclusive lock and the feed mutex once writes are allowed
  // (else kUnavailable "<refused> after a WAL failure: ..."), wakes the fan-out after it if fn
  // queued any, and commits the last record fn logged: hands its LSN to *commit_lsn as
  // `hand_over` says when commit_lsn is given, else waits for it here. Returns fn's status,
  // else the commit's. Records fn logged before failing stay logged and are committed.
  Status RunExclusive(std::string_view refused, const std::function<Status(LockedDb&)>& fn,
                      uint64_t* commit_lsn = nullptr, HandOver hand_over = HandOver::kUnderAlways);
  // Holds off operations in steps (RemoveUser, going public) while the returned lock lives, so
  // a reader across several ReadFeed calls sees none half done. REQUIRES: no lock of this Db held.
  std::unique_lock<std::mutex> PauseSteps() const;
  // DbOptions::between_steps, if set (tests and benchmarks pace sliced reads with it).
  void BetweenSteps() const;
  TimestampMs Now() const { return NowMs(); }  // the engine clock's time

  uint64_t last_lsn() const;     // the newest LSN logged (0 in memory)
  uint64_t durable_lsn() const;  // the newest LSN fsynced (0 in memory)
  // OK, or why writes are refused now: the WAL cannot be written (WalWriter::health(), which
  // IsNoSpace classifies). OK in memory.
  Status WalHealth() const;
  // The snapshot this process wrote last, if any.
  std::optional<SnapshotInfo> last_snapshot() const;
  // What the WAL and snapshots did, for /metrics (docs/http.md). Lists the data directory
  // (the WAL's segments): for a scrape, not for a hot path. Zeros in memory.
  struct StorageStats {
    WalStats wal;                      // since the WAL was opened (WalWriter::stats)
    uint64_t wal_segments = 0;         // segment files the WAL holds now
    uint64_t last_snapshot_us = 0;     // how long the last snapshot written here took (0: none)
  };
  StorageStats storage_stats() const;
  DurabilityMode durability() const { return options_.durability; }
  const RecoveryInfo& recovery() const { return recovery_; }
  const std::string& dir() const { return dir_; }

 private:
  Db(std::string dir, const DbOptions& options);
  Status Recover();
  Status ApplyRetention();
  Status RefreshOldestWalLsn();  // REQUIRES: wal_
  // Opens wal_ at a new segment whose first record will be next_lsn.
  Status OpenWal(uint64_t segment_no, uint64_t next_lsn);
  // OK when a write may go on: the Db is open and its WAL has not failed (else kUnavailable,
  // "<refused> after a WAL failure: ..."). REQUIRES: mu_ held.
  Status WritableLocked(std::string_view refused) const;
  // Snapshot's two halves: the graph image as of BeginImage, then the feed's blocks: the
  // graph's access state (copied with the image), then the feed's users.
  Status WriteGraphImage(size_t users, SnapshotWriter* writer);
  Status WriteFeedState(const Graph::AccessImage& access, SnapshotWriter* writer);
  // The feed's view of each edge a block, an approval or going public changes (live and
  // replicated alike). REQUIRES, when it runs: mu_ held exclusively and feed_mu_.
  Graph::EdgeHook FeedHook(Graph& g);
  // The seam over this Db's state. REQUIRES: mu_ held exclusively and feed_mu_.
  LockedDb Locked();
  // Tells the feed about an edge a live follow just created (a request creates none), and in a
  // cluster sets the follow record's flags in *cluster_flags (FirstRemoteFanFlags).
  // REQUIRES: mu_ held exclusively and feed_mu_.
  Result<FollowOutcome> NotifyFollowLocked(UserId a, UserId b, Result<FollowOutcome> r,
                                           uint8_t* cluster_flags);
  // Appends under the caller's exclusive lock; returns the LSN to commit (0: nothing logged).
  TimestampMs NowMs() const;  // the engine clock's time, for records that carry one
  Result<uint64_t> Log(WalRecordType type, std::string_view payload);
  Status Commit(uint64_t lsn);
  // After a mutation logged through `lsn` (0: nothing): hands `lsn` to the caller in
  // *commit_lsn when it will wait itself (`always`, or report_commit_lsn), else commits here.
  Status CommitOrHandOver(uint64_t lsn, uint64_t* commit_lsn);
  template <typename T, typename Apply, typename Record>
  Result<T> Mutate(Apply&& apply, Record&& record, uint64_t* commit_lsn);
  // Mutate for a change `decider` makes: refused (DecidesLocked) before `apply` runs when
  // this node no longer decides for that user.
  template <typename T, typename Apply, typename Record>
  Result<T> MutateFor(UserId decider, Apply&& apply, Record&& record, uint64_t* commit_lsn);
  // kMoving when the changes of `user` are no longer decided here (its bucket handed over to
  // another shard: UserPlace::kHandedOver, or another shard's). Every write checks the user who
  // makes it (docs/cluster.md, "Deciding"): the follower, the user removed, the blocker, the
  // user going private or public, the target of an approval or a rejection, the requester of a
  // withdrawal, the author of a post, a delete or a hide, the muter. A shard's gate refuses
  // such commands before they run; this check, under the exclusive lock, closes the window
  // between that gate and the write: a change admitted under the map before a move's flip and
  // applied after the copy phase listed its user would be acknowledged and never exported.
  // REQUIRES: mu_ held.
  Status DecidesLocked(UserId user) const;
  // Runs the graph's unfinished operation to its end, a step per hold of the exclusive lock.
  // REQUIRES: steps_mu_ held, mu_ not.
  Graph::StepsDone RunStepsToEnd();
  void WakeFanout();
  // Wakes the id index's grower when the index is growing. REQUIRES: mu_ held exclusively.
  void WakeIdGrowthLocked();
  // The grower's batch: one hold of the exclusive lock (a few IdMap::kGrowthStep, at most
  // step_hold_us) after step_gap_us without it; true while the index is still growing.
  bool RunIdGrowthHold();

  const std::string dir_;
  const DbOptions options_;
  Env* const env_;
  std::unique_ptr<FileLock> lock_;  // the data directory is ours while we live
  mutable std::shared_mutex mu_;
  std::mutex snapshot_mu_;  // one snapshot at a time
  // One operation in steps at a time (RemoveUser, going public), and none while a snapshot
  // fixes its image or a bucket is exported: they must not see one half done. Before mu_.
  mutable std::mutex steps_mu_;
  mutable std::mutex last_snapshot_mu_;
  uint64_t last_snapshot_us_ = 0;  // guarded by last_snapshot_mu_
  std::optional<SnapshotInfo> last_snapshot_;
  bool closed_ = false;  // guarded by mu_ (written with snapshot_mu_ held too)
  std::unique_ptr<Graph> graph_;
  mutable std::mutex feed_mu_;  // after mu_; guards feed_
  std::unique_ptr<Feed> feed_;
  BackgroundWorker fanout_;     // the background fan-out (options_.background_fanout)
  BackgroundWorker id_growth_;  // the id index's growth (options_.background_id_growth)
  std::mutex delays_mu_;
  std::vector<double> fanout_delays_;  // guarded by delays_mu_
  std::unique_ptr<WalWriter> wal_;
  std::vector<std::unique_ptr<WalWriter>> retired_wals_;  // ResetToSnapshot's; guarded by mu_
  CursorTable cursors_;                                   // guarded by mu_
  EpochHistory epochs_;                                   // guarded by mu_
  InboundPositions inbound_;                              // guarded by mu_
  PlacementFn place_;                                     // guarded by mu_
  std::atomic<uint64_t> oldest_wal_lsn_{0};               // see OldestWalLsn
  std::atomic<int64_t> last_stream_flush_ns_{0};          // VisibleLsn's flush rate limit
  RecoveryInfo recovery_;
};

// Db's calls whose work is done in the rooms that apply records through the seam above
// (RunExclusive, LockedDb): defined in engine/replication/ and engine/cluster/.
Status ApplyReplicatedRecords(Db& db, std::span<const LoggedRecord> records, uint64_t* commit_lsn);
Result<Db::RemoteApplied> ApplyRemoteRecords(Db& db, uint32_t origin,
                                             std::span<const LoggedRecord> records,
                                             uint64_t* commit_lsn);
Result<std::vector<Db::MovedState>> ExportMovingUsers(const Db& db,
                                                      const std::function<bool(UserId)>& moving);
Result<uint64_t> DropForeignState(Db& db, uint32_t to, const std::function<bool(UserId)>& kept);
Status MoveUsersIn(Db& db, uint32_t from, std::span<const Db::MovedState> state,
                   const std::function<bool(UserId)>& moving);
std::vector<FeedEntry> RetainedPostsOf(const Db& db, UserId author);
Db::FanSample FansOf(const Db& db, UserId user, size_t max);

inline Status Db::ApplyReplicated(std::span<const ReplicatedRecord> records, uint64_t* commit_lsn) {
  return ApplyReplicatedRecords(*this, records, commit_lsn);
}
inline Result<Db::RemoteApplied> Db::ApplyRemote(uint32_t origin,
                                                 std::span<const ReplicatedRecord> records,
                                                 uint64_t* commit_lsn) {
  return ApplyRemoteRecords(*this, origin, records, commit_lsn);
}
inline Result<std::vector<Db::MovedState>> Db::ExportUsers(
    const std::function<bool(UserId)>& moving) const {
  return ExportMovingUsers(*this, moving);
}
inline Result<uint64_t> Db::DropForeign(uint32_t to, const std::function<bool(UserId)>& kept) {
  return DropForeignState(*this, to, kept);
}
inline Status Db::MoveIn(uint32_t from, std::span<const MovedState> state,
                         const std::function<bool(UserId)>& moving) {
  return MoveUsersIn(*this, from, state, moving);
}
inline std::vector<FeedEntry> Db::RetainedPosts(UserId author) const {
  return RetainedPostsOf(*this, author);
}
inline Db::FanSample Db::FansUpTo(UserId user, size_t max) const {
  return FansOf(*this, user, max);
}

}  // namespace relgraph
