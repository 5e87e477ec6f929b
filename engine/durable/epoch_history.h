// EpochHistory: the replication history of a data directory, the way PostgreSQL keeps
// timelines and Redis replication ids. Every promotion of a replica to primary starts a new
// epoch with an epoch record (WAL type 11: number, random id, time) at the first LSN of the
// epoch; the history is the list of those starts. Epoch 1 (id 0) starts at LSN 1 implicitly.
// docs/replication.md, "Epochs and divergence".
//
// Why: after a failover, the old primary may hold records the new one never received. Both
// then have an LSN N, with different records. Comparing histories finds it: a node whose last
// record is in epoch E at LSN L may follow a primary only if the primary has the same epoch E
// (same number and id) and did not start its next epoch at or before L.
//
// Why here: like the named cursors, the history is replayed by recovery and written by
// snapshots (feed-block tag 5), so it lives with them in engine/durable.
//
// Thread-safety: not thread-safe; Db guards it with its lock.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/types.h"
#include "storage/status.h"

namespace relgraph {

struct Epoch {
  uint64_t number = 1;
  uint64_t id = 0;         // random (0 only for epoch 1): tells two promotions to one number apart
  uint64_t first_lsn = 1;  // the epoch record's LSN (1 for epoch 1)
  TimestampMs started_ms = 0;
  friend bool operator==(const Epoch&, const Epoch&) = default;
};

class EpochHistory {
 public:
  EpochHistory() : epochs_{Epoch{}} {}

  // An epoch record at `lsn`. Epochs must go up: kCorruption for a number not above the
  // current one or an LSN not above its start.
  // Whether an epoch record (number, at lsn) may follow this history: kCorruption if not.
  Status CanApply(uint64_t number, uint64_t lsn) const;
  Status Apply(uint64_t number, uint64_t id, uint64_t lsn, TimestampMs ts);
  // Loads a snapshot's history (oldest first); kCorruption when it is not increasing.
  Status Load(const std::vector<Epoch>& epochs);

  const Epoch& current() const { return epochs_.back(); }
  const std::vector<Epoch>& epochs() const { return epochs_; }  // oldest first, never empty

  // May a node whose last record is `last_lsn` in epoch `number`/`id` follow this history
  // (receive records from last_lsn + 1)? OK when this history holds that epoch and did not
  // start a later one at or before last_lsn; else kDiverged saying which records differ, its
  // detail() the first LSN the node must discard to follow (0 when this history cannot say:
  // it never had the node's epoch).
  Status CheckFollower(uint64_t number, uint64_t id, uint64_t last_lsn) const;

 private:
  std::vector<Epoch> epochs_;  // oldest first
};

}  // namespace relgraph
