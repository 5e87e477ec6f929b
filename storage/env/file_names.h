// Names of the files in a data directory, and their parser. Numbers are 20 zero-padded
// decimal digits, so lexical order is numeric order:
//   wal-<segment number>.log        WAL segment (docs/wal-format.md)
//   snapshot-<lsn>.rgs              snapshot of the state at that LSN (docs/snapshot-format.md)
//   snapshot-<lsn>.rgs.tmp          a snapshot being written; never read, removed at open
// Anything else in the directory is ignored and never deleted.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/env/env.h"

namespace relgraph {

enum class FileType { kWalSegment, kSnapshot, kSnapshotTemp };

std::string WalSegmentName(uint64_t segment_no);
std::string SnapshotName(uint64_t lsn);
std::string SnapshotTempName(uint64_t lsn);

// true when `name` is one of ours; sets *type and *number.
bool ParseFileName(std::string_view name, FileType* type, uint64_t* number);

// The numbers of the files of `type` in `dir`, ascending.
Result<std::vector<uint64_t>> ListNumberedFiles(Env* env, const std::string& dir, FileType type);

}  // namespace relgraph
