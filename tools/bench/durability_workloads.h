// Durability workloads of relgraph-bench: follows through the WAL in each mode,
// group commit with many writers, snapshot write (offline and online, with the longest writer
// pause), recovery from a snapshot and from the WAL alone, the change stream read back from
// the WAL, and import; and two rows of the machine and the memory under them (first_touch,
// id_growth). Each workload works in
// its own directory under `root`, which the caller removes.
#pragma once

#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "tools/bench/workload_generator.h"
#include "tools/bench/workloads.h"

namespace relgraph {
class Db;
}

namespace relgraph::bench {

struct DurabilityFlags {
  std::string root;  // scratch directory
  uint64_t wal_ops = 1'000'000;
  uint32_t writers = 256;  // wal_always_concurrent
  std::string dataset;     // when set, import reads this file instead of a generated one
  uint64_t id_offset = 0;
};

// `relgraph-bench --open-only=DIR`: opens DIR as a Db with the bench's options, prints
// "<snapshot edges> <seconds of Db::Open>" and exits. The recovery_snapshot_restart row runs
// the bench this way, so the open happens in a process that holds nothing else.
int OpenOnlyMain(const std::string& dir);

class DurabilityWorkloads {
 public:
  // `graph` is the loaded benchmark graph (snapshot workloads write it); may be null when no
  // snapshot workload runs.
  DurabilityWorkloads(const GeneratedGraph& data, const Graph* graph, DurabilityFlags flags);

  static const std::vector<std::string>& Names();
  static bool NeedsGraph(const std::string& name);
  std::vector<WorkloadResult> Run(const std::string& name);  // some workloads report two rows

 private:
  WorkloadResult Follows(
      const std::string& name);  // wal_off / wal_none / wal_everysec / wal_always
  WorkloadResult AlwaysConcurrent();
  std::vector<WorkloadResult>
  Snapshots();  // snapshot_write_offline, recovery_snapshot, snapshot_write_online
  WorkloadResult RecoveryWal();
  std::vector<WorkloadResult> StreamRead();  // stream_read, stream_read_skipping
  WorkloadResult ReplicaApply();
  WorkloadResult Import();
  WorkloadResult FirstTouch();
  WorkloadResult IdGrowth();
  std::string Dir(const std::string& name) const;
  // The rows that read a WAL back (recovery_wal, stream_read, replica_apply) first write it:
  // WalReadOps() follows (--wal-ops, at least 2M so the rate is a long run's, at most the
  // generated graph's).
  uint64_t WalReadOps() const;
  // Gives `db` the first n generated follows, one FollowAt each (the wal_* rows time it).
  void WriteFirstFollows(Db& db, uint64_t n) const;

  const GeneratedGraph& data_;
  const Graph* graph_;
  DurabilityFlags flags_;
};

}  // namespace relgraph::bench
