#include "storage/wal/wal_repair.h"

#include "storage/env/file_names.h"
#include "storage/wal/wal_format.h"
#include "storage/wal/wal_reader.h"

namespace relgraph {
namespace {

Status CopyFile(Env* env, const std::string& from, const std::string& to) {
  auto data = env->ReadFile(from);
  if (!data.ok()) return data.status();
  auto f = env->OpenWritable(to, /*truncate=*/true);
  if (!f.ok()) return f.status();
  RELGRAPH_RETURN_IF_ERROR((*f)->Append(*data));
  RELGRAPH_RETURN_IF_ERROR((*f)->Sync());
  return (*f)->Close();
}

}  // namespace

Result<WalRepairReport> RepairWal(Env* env, const std::string& dir, const std::string& backup_dir) {
  WalRepairReport report;
  WalDamage damage;
  WalScanOptions scan;
  scan.damage = &damage;
  auto result = ScanWal(env, dir, scan, [](const WalRecordView&) { return Status::OK(); });
  if (!result.ok() && result.status().code() != Code::kCorruption) return result.status();

  std::string cut_file;
  uint64_t cut_at = 0;
  uint64_t cut_segment = 0;
  if (result.ok()) {
    report.kept_last_lsn = result->last_lsn;
    if (result->torn_bytes == 0) return report;  // nothing to repair
    cut_file = result->torn_file;
    auto size = env->FileSize(cut_file);
    if (!size.ok()) return size.status();
    cut_at = *size - result->torn_bytes;
    FileType type;
    ParseFileName(cut_file.substr(cut_file.rfind('/') + 1), &type, &cut_segment);
    report.damage = "torn tail of " + std::to_string(result->torn_bytes) + " bytes";
  } else {
    cut_file = damage.file;
    cut_at = damage.offset;
    cut_segment = damage.segment_no;
    report.kept_last_lsn = damage.lsn == 0 ? 0 : damage.lsn - 1;
    report.damage = result.status().message();
  }

  auto segments = ListWalSegments(env, dir);
  if (!segments.ok()) return segments.status();
  RELGRAPH_RETURN_IF_ERROR(env->CreateDir(backup_dir));
  for (uint64_t no : *segments) {
    if (no < cut_segment) continue;
    const std::string path = JoinPath(dir, WalSegmentName(no));
    RELGRAPH_RETURN_IF_ERROR(CopyFile(env, path, JoinPath(backup_dir, WalSegmentName(no))));
  }
  RELGRAPH_RETURN_IF_ERROR(env->SyncDir(backup_dir));
  report.backup_dir = backup_dir;
  // Cut the damaged segment (a damaged header leaves nothing worth keeping), drop later ones.
  for (uint64_t no : *segments) {
    if (no < cut_segment) continue;
    const std::string path = JoinPath(dir, WalSegmentName(no));
    auto size = env->FileSize(path);
    if (!size.ok()) return size.status();
    if (no == cut_segment && cut_at >= kWalHeaderBytes) {
      RELGRAPH_RETURN_IF_ERROR(env->Truncate(path, cut_at));
      report.truncated_segment = path;
      report.truncated_at = cut_at;
      report.dropped_bytes += *size - cut_at;
    } else {
      RELGRAPH_RETURN_IF_ERROR(env->RemoveFile(path));
      report.removed_segments.push_back(path);
      report.dropped_bytes += *size;
    }
  }
  RELGRAPH_RETURN_IF_ERROR(env->SyncDir(dir));
  report.changed = true;
  return report;
}

}  // namespace relgraph
