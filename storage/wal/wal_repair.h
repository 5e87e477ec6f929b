// RepairWal: the operator's way out of WAL damage (relgraph-admin repair). It keeps a backup
// of every file it changes, truncates the WAL at the last good record and removes the segments
// after it, and reports what was dropped. A torn tail is simply cut (after the same backup).
//
// Thread-safety: the caller must hold the data directory (no Db open on it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "storage/env/env.h"

namespace relgraph {

struct WalRepairReport {
  bool changed = false;
  std::string backup_dir;      // where the original files were copied
  uint64_t kept_last_lsn = 0;  // the WAL now ends at this LSN
  uint64_t dropped_bytes = 0;
  std::vector<std::string> removed_segments;
  std::string truncated_segment;  // cut at `truncated_at`
  uint64_t truncated_at = 0;
  std::string damage;  // what was wrong, as the reader reported it
};

Result<WalRepairReport> RepairWal(Env* env, const std::string& dir, const std::string& backup_dir);

}  // namespace relgraph
