// InboundPositions: for a cluster shard (docs/cluster.md), how far it has applied the changes
// each other shard decided and sent it: the newest of that shard's LSNs it applied.
//
// Why here: a remote change and the position it moves are one WAL record (type 19, remote),
// so they are durable together and a change redelivered by JetStream after a crash is
// recognised and skipped. Like the named cursors, the table is replayed by recovery and
// written by snapshots (feed-block tag 9), so it lives with them in engine/durable.
//
// Thread-safety: not thread-safe; Db guards it with its lock.
#pragma once

#include <cstdint>
#include <map>

namespace relgraph {

class InboundPositions {
 public:
  // The newest LSN of `origin` applied here; 0 when none.
  uint64_t Of(uint32_t origin) const {
    auto it = positions_.find(origin);
    return it == positions_.end() ? 0 : it->second;
  }
  // Records that `origin`'s change at `lsn` is applied. Positions only go up: an older LSN
  // (a fuzzy snapshot's table replayed over) changes nothing.
  void Apply(uint32_t origin, uint64_t lsn) {
    uint64_t& p = positions_[origin];
    if (lsn > p) p = lsn;
  }
  const std::map<uint32_t, uint64_t>& all() const { return positions_; }
  size_t size() const { return positions_.size(); }

 private:
  std::map<uint32_t, uint64_t> positions_;
};

}  // namespace relgraph
