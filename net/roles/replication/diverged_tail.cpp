#include "net/roles/replication/diverged_tail.h"

#include "storage/env/env.h"
#include "storage/env/file_names.h"

namespace relgraph {

Result<SavedTail> SaveDivergedTail(Db* db, uint64_t from_lsn) {
  SavedTail saved;
  const uint64_t newest = db->last_lsn();
  if (from_lsn == 0 || from_lsn > newest) return saved;
  // Under fsync=always a reader sees durable records only, and these may never have been
  // synced (their replies never went out): sync them first.
  RELGRAPH_RETURN_IF_ERROR(db->SyncThrough(newest));
  auto reader = db->OpenChanges(from_lsn);
  if (!reader.ok()) return reader.status();
  Env* env = Env::Posix();
  const std::string dir = JoinPath(db->dir(), "diverged");
  RELGRAPH_RETURN_IF_ERROR(env->CreateDir(dir));
  saved.from_lsn = from_lsn;
  saved.to_lsn = newest;
  saved.path = JoinPath(
      dir, "diverged-" + std::to_string(from_lsn) + "-" + std::to_string(newest) + ".records");
  auto file = env->OpenWritable(saved.path, /*truncate=*/true);
  if (!file.ok()) return file.status();
  std::string out = "relgraph-diverged-records 1\n";
  uint64_t lsn = from_lsn;
  while (lsn <= newest) {
    auto n = (*reader)->ReadRecords(4096, [&](const WalRecordView& r) -> Status {
      for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(r.lsn >> (8 * i)));
      out.push_back(static_cast<char>(r.type));
      out.push_back(static_cast<char>(r.payload.size() & 0xff));
      out.push_back(static_cast<char>(r.payload.size() >> 8));
      out.append(r.payload);
      lsn = r.lsn + 1;
      ++saved.records;
      return Status::OK();
    });
    if (!n.ok()) return n.status();
    if (*n == 0 && (*reader)->next_lsn() <= newest) {
      return Status::IOError("saving the diverged records: the WAL gave nothing at LSN " +
                             std::to_string((*reader)->next_lsn()));
    }
    if (*n == 0) break;
    RELGRAPH_RETURN_IF_ERROR((*file)->Append(out));
    out.clear();
  }
  RELGRAPH_RETURN_IF_ERROR((*file)->Append(out));
  RELGRAPH_RETURN_IF_ERROR((*file)->Sync());
  RELGRAPH_RETURN_IF_ERROR((*file)->Close());
  RELGRAPH_RETURN_IF_ERROR(env->SyncDir(dir));
  return saved;
}

}  // namespace relgraph
