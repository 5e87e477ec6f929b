#include "engine/db.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <utility>

#include "storage/file_names.h"
#include "storage/wal_reader.h"

namespace relgraph {

Db::Db(std::string dir, const DbOptions& options)
    : dir_(std::move(dir)),
      options_(options),
      env_(options.env != nullptr ? options.env : Env::Posix()),
      graph_(std::make_unique<Graph>(options.graph)) {}

Db::~Db() { Close().IgnoreError(); }

Result<std::unique_ptr<Db>> Db::Open(const std::string& dir, const DbOptions& options) {
  RELGRAPH_RETURN_IF_ERROR(ValidateGraphOptions(options.graph));
  std::unique_ptr<Db> db(new Db(dir, options));
  if (!dir.empty()) RELGRAPH_RETURN_IF_ERROR(db->Recover());
  return db;
}

Status Db::Recover() {
  const auto start = std::chrono::steady_clock::now();
  RELGRAPH_RETURN_IF_ERROR(env_->CreateDir(dir_));
  auto names = env_->ListDir(dir_);
  if (!names.ok()) return names.status();
  for (const std::string& name : *names) {
    FileType type;
    uint64_t n;
    if (ParseFileName(name, &type, &n) && type == FileType::kSnapshotTemp) {
      RELGRAPH_RETURN_IF_ERROR(env_->RemoveFile(JoinPath(dir_, name)));  // an unfinished snapshot
    }
  }

  WalScanOptions scan;
  scan.truncate_torn_tail = true;
  auto result = ScanWal(env_, dir_, scan, [&](const WalRecordView& r) {
    return ApplyWalRecord(*graph_, r.type, r.payload);
  });
  if (!result.ok()) return result.status();
  if (result->segments > 0 && result->first_lsn != 1) {
    return Status::Corruption("the WAL in " + dir_ + " starts at LSN " +
                              std::to_string(result->first_lsn) +
                              " and no snapshot covers the LSNs before it");
  }
  recovery_.replayed_records = result->records;
  recovery_.last_lsn = result->last_lsn;
  recovery_.torn_bytes = result->torn_bytes;
  recovery_.torn_file = result->torn_file;
  if (result->torn_bytes > 0) {
    std::fprintf(stderr, "relgraph: recovery cut a torn tail of %llu bytes off %s (the writer died mid-append)\n",
                 static_cast<unsigned long long>(result->torn_bytes), result->torn_file.c_str());
  }

  WalWriterOptions wo;
  wo.mode = options_.durability;
  wo.segment_bytes = options_.wal_segment_bytes;
  auto wal = WalWriter::Open(env_, dir_, wo, result->last_segment_no + 1, result->last_lsn + 1);
  if (!wal.ok()) return wal.status();
  wal_ = std::move(*wal);
  recovery_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return Status::OK();
}

Status Db::Close() {
  std::unique_lock lock(mu_);
  if (!wal_) return Status::OK();
  return wal_->Close();
}

uint64_t Db::last_lsn() const { return wal_ ? wal_->last_lsn() : 0; }

Result<uint64_t> Db::Log(WalRecordType type, const std::string& payload) {
  if (!wal_) return uint64_t{0};
  return wal_->Append(static_cast<uint8_t>(type), payload);
}

Status Db::Commit(uint64_t lsn) { return lsn == 0 ? Status::OK() : wal_->Commit(lsn); }

// Every mutation: refuse early once the WAL has failed, so memory never runs ahead of a WAL
// that can no longer catch up; decide + apply + append under the lock; commit outside it.
// `record` maps the outcome to the WAL record to write, or nullopt when nothing changed.
template <typename T, typename Apply, typename Record>
Result<T> Db::Mutate(Apply&& apply, Record&& record) {
  uint64_t lsn = 0;
  Result<T> r = Status(Code::kInternal, "unset");
  {
    std::unique_lock lock(mu_);
    if (wal_) {
      if (Status h = wal_->health(); !h.ok()) {
        return Status(Code::kUnavailable, "writes refused after a WAL failure: " + h.message());
      }
    }
    r = apply(*graph_);
    if (!r.ok()) return r;
    const std::optional<std::pair<WalRecordType, std::string>> rec = record(*r);
    if (!rec) return r;
    auto l = Log(rec->first, rec->second);
    if (!l.ok()) return l.status();
    lsn = *l;
  }
  RELGRAPH_RETURN_IF_ERROR(Commit(lsn));
  return r;
}

namespace {

using MaybeRecord = std::optional<std::pair<WalRecordType, std::string>>;

// A follow is logged only when it created the edge, with the time it was given.
auto FollowRecord(UserId a, UserId b) {
  return [a, b](const FollowOutcome& o) -> MaybeRecord {
    if (!o.created) return std::nullopt;
    return {{WalRecordType::kFollow, EncodeFollowRecord(a, b, o.followed_at)}};
  };
}

}  // namespace

Result<FollowOutcome> Db::Follow(UserId a, UserId b) {
  return Mutate<FollowOutcome>([&](Graph& g) { return g.Follow(a, b); }, FollowRecord(a, b));
}

Result<FollowOutcome> Db::FollowAt(UserId a, UserId b, TimestampMs ts) {
  return Mutate<FollowOutcome>([&](Graph& g) { return g.FollowAt(a, b, ts); }, FollowRecord(a, b));
}

Result<bool> Db::Unfollow(UserId a, UserId b) {
  return Mutate<bool>([&](Graph& g) { return g.Unfollow(a, b); },
                      [&](bool removed) -> MaybeRecord {
                        if (!removed) return std::nullopt;
                        return {{WalRecordType::kUnfollow, EncodeUnfollowRecord(a, b)}};
                      });
}

Result<uint64_t> Db::RemoveUser(UserId a) {
  return Mutate<uint64_t>([&](Graph& g) { return g.RemoveUser(a); },
                          [&](uint64_t) -> MaybeRecord {
                            return {{WalRecordType::kRemoveUser, EncodeRemoveUserRecord(a)}};
                          });
}

}  // namespace relgraph
