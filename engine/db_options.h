// DbOptions: what a Db (engine/db.h) is opened with: the graph's and the feed's options,
// durability, the WAL's segments and retries, what snapshots and named cursors keep, and the
// hooks tests and the server use. Plain data.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include "engine/feed/feed.h"
#include "engine/graph/graph.h"
#include "storage/env/env.h"
#include "storage/wal/wal_writer.h"

namespace relgraph {

struct DbOptions {
  GraphOptions graph;
  DurabilityMode durability = DurabilityMode::kEverySec;
  Env* env = nullptr;  // nullptr: the POSIX filesystem
  uint64_t wal_segment_bytes = uint64_t{64} << 20;
  uint32_t keep_snapshots = 2;  // >= 1; WAL is kept back to the oldest kept snapshot
  // true: snapshots never delete WAL segments, so the WAL holds every record since LSN 1 (an
  // archive of the whole history; tests that replay it). The directory then grows without
  // bound: use it where the history is wanted, not on a long-running server.
  bool keep_all_wal = false;
  // Named cursors (AckCursor) keep WAL segments that snapshots no longer need, so that their
  // consumers can resume: at most stream_retention_bytes of such segments, and only for
  // cursors acked within the last stream_retention_age_s. A cursor beyond either limit
  // loses its WAL at the next snapshot and is reported expired.
  uint64_t stream_retention_bytes = uint64_t{1} << 30;
  uint32_t stream_retention_age_s = 7 * 24 * 3600;
  // Users copied per shared-lock hold while snapshotting (a slice of lists also stops at 256k
  // entries).
  uint32_t snapshot_slice_users = 4096;
  FeedOptions feed;
  // true: mutations given a commit_lsn set it in every durability mode, not only `always`, so
  // the caller can wait for something else per LSN (synchronous replicas).
  bool report_commit_lsn = false;
  // Told when the WAL stalls (writes refused), resumes, or is closed stalled
  // (WalWriterOptions::on_event): the server logs it. Called with the WAL's mutex held; must
  // not call the Db.
  std::function<void(const WalEvent&)> on_wal_event;
  // The WAL's retry backoff after a failed write or fsync (WalWriterOptions).
  std::chrono::milliseconds wal_retry_min{10};
  std::chrono::milliseconds wal_retry_max{1000};
  // false: fan-out runs only in DrainFanout() (deterministic tests).
  bool background_fanout = true;
  // Once woken by a publish, the fan-out thread waits this long before running, so a burst of
  // publishes costs one wake-up (a syscall and two context switches) instead of one each. It
  // adds at most this much to the fan-out delay. 0: run at once.
  uint32_t fanout_gather_us = 1000;
  // The id index grows in steps (engine/graph/id_map.h). true: a background thread moves its
  // users between writes, a short hold of the exclusive lock at a time (4 * kGrowthStep
  // users, at most step_hold_us; then step_gap_us free), so the old table goes within
  // seconds of the first new user that outgrew it (~12 s at 155M users), and each new user
  // moves only 64 unless GraphOptions::id_growth_step says otherwise. false: only new users
  // move them, id_growth_step each (kGrowthStep unless set).
  bool background_id_growth = true;
  // RemoveUser and going public run in steps (docs/design.md, "Operations in steps"): at most
  // step_units fans removed or requests approved per hold of the exclusive lock, and no more
  // once a hold has lasted step_hold_us (checked every 128 units).
  uint32_t step_units = 2048;
  uint32_t step_hold_us = 2000;
  // After each step the lock is left free this long, so that the writers and readers it woke
  // take it: std::shared_mutex is not fair, and the stepping thread, already running, would
  // otherwise take it back before they were scheduled (measured: writers waited 0.1-0.9 s
  // behind steps of 2 ms). 0: take it back at once.
  uint32_t step_gap_us = 200;
  // Tests and benchmarks: called between two steps of RemoveUser or SetPrivate, and between two
  // slices of ExportUsers, with no lock held (but an operation in steps: it must not start one).
  std::function<void()> between_steps;
};

}  // namespace relgraph
