#include "engine/recovery.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "engine/graph_builder.h"
#include "engine/wal_records.h"
#include "storage/file_names.h"
#include "storage/snapshot_file.h"
#include "storage/wal_reader.h"

namespace relgraph {
namespace {

// Loads the newest valid snapshot into *graph (left alone when none is valid).
Status LoadNewestSnapshot(Env* env, const std::string& dir, const GraphOptions& options,
                          std::unique_ptr<Graph>* graph, RecoveryInfo* info) {
  auto lsns = ListNumberedFiles(env, dir, FileType::kSnapshot);
  if (!lsns.ok()) return lsns.status();
  for (auto it = lsns->rbegin(); it != lsns->rend(); ++it) {
    const std::string path = JoinPath(dir, SnapshotName(*it));
    // Built into scratch state: a snapshot that fails halfway leaves nothing behind.
    SnapshotInfo read;
    auto loaded = LoadSnapshotGraph(env, path, options, &read);
    std::string why;
    if (!loaded.ok()) {
      why = loaded.status().message();
    } else if (read.lsn != *it) {
      why = "its header says LSN " + std::to_string(read.lsn);
    }
    if (!why.empty()) {
      info->skipped_snapshots.push_back(path + ": " + why);
      std::fprintf(stderr, "relgraph: skipping snapshot %s: %s\n", path.c_str(), why.c_str());
      continue;
    }
    *graph = std::move(*loaded);
    info->snapshot_lsn = *it;
    info->snapshot_file = path;
    info->snapshot_edges = read.edges;
    return Status::OK();
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<Graph>> LoadSnapshotGraph(Env* env, const std::string& path,
                                                 const GraphOptions& options, SnapshotInfo* info) {
  GraphBuilder builder(options);
  auto read = ReadSnapshot(
      env, path,
      [&](uint64_t follower, std::span<const SnapshotEdge> edges) {
        return builder.AddFollowing(follower, edges);
      },
      [&](const SnapshotInfo& counts) { builder.Reserve(counts.edges); });
  if (!read.ok()) return read.status();
  *info = *read;
  return builder.Finish();
}

Result<std::unique_ptr<Graph>> RecoverGraph(Env* env, const std::string& dir,
                                            const GraphOptions& options, bool repair_torn_tail,
                                            RecoveryInfo* info) {
  const auto start = std::chrono::steady_clock::now();
  *info = RecoveryInfo{};
  auto graph = std::make_unique<Graph>(options);
  RELGRAPH_RETURN_IF_ERROR(LoadNewestSnapshot(env, dir, options, &graph, info));
  const uint64_t snapshot_lsn = info->snapshot_lsn;

  WalScanOptions scan;
  scan.truncate_torn_tail = repair_torn_tail;
  scan.from_lsn = snapshot_lsn + 1;
  // Records are decoded as they are read and applied in batches, so that ApplyBatch can
  // overlap the cache misses of consecutive records.
  constexpr size_t kBatch = 4096;
  std::vector<Graph::ReplayOp> batch;
  std::vector<uint64_t> batch_lsn;
  batch.reserve(kBatch);
  auto apply = [&]() -> Status {
    Status s = graph->ApplyBatch(batch);
    if (!s.ok()) {
      return Status(s.code(), "replaying LSN " +
                                  std::to_string(batch_lsn[static_cast<size_t>(s.detail())]) +
                                  ": " + s.message());
    }
    batch.clear();
    batch_lsn.clear();
    return Status::OK();
  };
  auto wal = ScanWal(env, dir, scan, [&](const WalRecordView& r) -> Status {
    auto op = DecodeWalRecord(r.type, r.payload);
    if (!op.ok()) return op.status();
    batch.push_back(*op);
    batch_lsn.push_back(r.lsn);
    return batch.size() == kBatch ? apply() : Status::OK();
  });
  if (!wal.ok()) return wal.status();
  RELGRAPH_RETURN_IF_ERROR(apply());
  if (wal->segments > 0 && wal->first_lsn > snapshot_lsn + 1) {
    return Status::Corruption(
        "the WAL in " + dir + " starts at LSN " + std::to_string(wal->first_lsn) + " but " +
        (info->snapshot_file.empty()
             ? std::string("no snapshot covers the LSNs before it")
             : "the snapshot loaded ends at LSN " + std::to_string(snapshot_lsn)));
  }
  if (wal->segments > 0 && wal->last_lsn < snapshot_lsn) {
    return Status::Corruption("the WAL in " + dir + " ends at LSN " +
                              std::to_string(wal->last_lsn) + ", before the snapshot's LSN " +
                              std::to_string(snapshot_lsn));
  }
  info->replayed_records = wal->records;
  info->last_lsn = std::max(wal->last_lsn, snapshot_lsn);
  info->last_segment_no = wal->last_segment_no;
  info->torn_bytes = wal->torn_bytes;
  info->torn_file = wal->torn_file;
  info->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return graph;
}

}  // namespace relgraph
