// Db's log as others read it (engine/db.h): the change stream, named cursors, the replication
// history (epochs), the positions of other shards' changes applied here, and the WAL itself:
// appends, commits and positions.
#include <algorithm>
#include <random>

#include "engine/db.h"
#include "engine/db_mutate.h"
#include "storage/env/file_names.h"
#include "storage/wal/wal_reader.h"
#include "storage/wal/wal_tail.h"

namespace relgraph {

using namespace db_mutate;  // the records mutations log

// ---- change stream ----------------------------------------------------------------------------

uint64_t Db::VisibleLsn(uint64_t want) {
  if (!wal_) return 0;
  if (options_.durability == DurabilityMode::kAlways) return wal_->durable_lsn();
  uint64_t written = wal_->written_lsn();
  if (want > written && want <= wal_->last_lsn()) {
    // A reader waits for a record still in the writer's buffer: write it out now rather than
    // at the next background flush, but at most once a millisecond however many readers ask.
    const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    int64_t last = last_stream_flush_ns_.load(std::memory_order_relaxed);
    if (now - last >= 1'000'000 &&
        last_stream_flush_ns_.compare_exchange_strong(last, now, std::memory_order_relaxed)) {
      if (wal_->Flush(/*sync=*/false).ok()) written = wal_->written_lsn();
    }
  }
  return written;
}

Result<std::unique_ptr<ChangeReader>> Db::OpenChanges(uint64_t from_lsn, ChangeKindMask kinds,
                                                      uint64_t* oldest_lsn) {
  if (!wal_) {
    return Status::InvalidArgument(
        "an in-memory Db has no change stream (open it with a data directory)");
  }
  RELGRAPH_RETURN_IF_ERROR(ValidateChangeKindMask(kinds));
  const uint64_t next = wal_->last_lsn() + 1;
  if (from_lsn == kChangesFromNow) from_lsn = next;
  if (from_lsn > next) {
    return Status::InvalidArgument("LSN " + std::to_string(from_lsn) +
                                   " is past the next one to be logged (" + std::to_string(next) +
                                   ")");
  }
  // WalTail starts only where every record before it is in the file.
  if (wal_->written_lsn() + 1 < from_lsn) RELGRAPH_RETURN_IF_ERROR(wal_->Flush(/*sync=*/false));
  return ChangeReader::Open(
      env_, dir_, from_lsn, kinds, [this](uint64_t want) { return VisibleLsn(want); }, oldest_lsn);
}

// ---- named cursors ----------------------------------------------------------------------------

Status Db::RefreshOldestWalLsn() {
  auto segments = ListWalSegments(env_, dir_);
  if (!segments.ok()) return segments.status();
  uint64_t oldest = wal_->last_lsn() + 1;
  for (uint64_t no : *segments) {
    auto header = ReadWalSegmentHeader(env_, dir_, no);
    if (!header.ok()) continue;
    oldest = header->first_lsn;
    break;
  }
  oldest_wal_lsn_.store(oldest, std::memory_order_release);
  return Status::OK();
}

uint64_t Db::OldestWalLsn() const {
  return oldest_wal_lsn_.load(std::memory_order_acquire);
}

Status Db::AckCursor(std::string_view name, uint64_t lsn, uint64_t* commit_lsn) {
  if (!wal_) return Status::InvalidArgument("an in-memory Db has no change stream");
  RELGRAPH_RETURN_IF_ERROR(CursorTable::ValidateName(name));
  if (const uint64_t oldest = OldestWalLsn(); lsn + 1 < oldest) return LsnExpired(lsn + 1, oldest);
  const TimestampMs now = NowMs();
  auto r = Mutate<bool>(
      [&](Graph&) -> Result<bool> {
        if (lsn > wal_->last_lsn()) {
          return Status::InvalidArgument("ACK of LSN " + std::to_string(lsn) +
                                         " is past the newest logged (" +
                                         std::to_string(wal_->last_lsn()) + ")");
        }
        if (cursors_.Find(name) == nullptr && cursors_.size() >= kMaxCursors) {
          return Status(Code::kLimitExceeded, "there are already " + std::to_string(kMaxCursors) +
                                                  " cursors; delete one first");
        }
        cursors_.Set(name, lsn, now);
        return true;
      },
      [&](bool) -> MaybeRecord {
        // Type 10's LSN 0 means a removal: an ACK of 0 has a type of its own.
        if (lsn == 0) return {{WalRecordType::kCursorStart, EncodeCursorStartRecord(name, now)}};
        return {{WalRecordType::kCursor, EncodeCursorRecord(name, lsn, now)}};
      },
      commit_lsn);
  return r.status();
}

Status Db::RemoveCursor(std::string_view name, uint64_t* commit_lsn) {
  if (!wal_) return Status::InvalidArgument("an in-memory Db has no change stream");
  RELGRAPH_RETURN_IF_ERROR(CursorTable::ValidateName(name));
  const TimestampMs now = NowMs();
  auto r = Mutate<bool>(
      [&](Graph&) -> Result<bool> {
        if (cursors_.Find(name) == nullptr) {
          return Status::NotFound("no cursor named '" + std::string(name) + "'");
        }
        cursors_.Remove(name);
        return true;
      },
      [&](bool) -> MaybeRecord {
        return {{WalRecordType::kCursor, EncodeCursorRecord(name, 0, now)}};
      },
      commit_lsn);
  return r.status();
}

std::vector<Db::CursorInfo> Db::Cursors() {
  std::vector<CursorInfo> out;
  {
    std::shared_lock lock(mu_);
    cursors_.ForEach([&](const std::string& name, const CursorState& c) {
      out.push_back({name, c.acked_lsn, c.acked_ms, false});
    });
  }
  const uint64_t oldest = OldestWalLsn();
  for (CursorInfo& c : out) c.expired = c.acked_lsn + 1 < oldest;
  return out;
}

Result<uint64_t> Db::CursorResumeLsn(std::string_view name) {
  RELGRAPH_RETURN_IF_ERROR(CursorTable::ValidateName(name));
  uint64_t acked;
  {
    std::shared_lock lock(mu_);
    const CursorState* c = cursors_.Find(name);
    if (c == nullptr) return Status::NotFound("no cursor named '" + std::string(name) + "'");
    acked = c->acked_lsn;
  }
  if (const uint64_t oldest = OldestWalLsn(); acked + 1 < oldest)
    return LsnExpired(acked + 1, oldest);
  return acked + 1;
}

Result<Epoch> Db::StartEpoch(uint64_t at_least) {
  if (!wal_) return Status::InvalidArgument("an in-memory Db has no replication history");
  std::random_device random;
  const uint64_t id = ((uint64_t{random()} << 32) ^ random()) | 1;  // nonzero: epoch 1 has 0
  const TimestampMs now = NowMs();
  Epoch next;
  {
    std::unique_lock lock(mu_);
    RELGRAPH_RETURN_IF_ERROR(WritableLocked("writes refused"));
    next = Epoch{std::max(epochs_.current().number + 1, at_least), id, wal_->last_lsn() + 1, now};
    RELGRAPH_RETURN_IF_ERROR(epochs_.CanApply(next.number, next.first_lsn));  // before logging
    auto l = Log(WalRecordType::kEpoch, EncodeEpochRecord(next.number, next.id, now).view());
    if (!l.ok()) return l.status();
    RELGRAPH_RETURN_IF_ERROR(epochs_.Apply(next.number, next.id, *l, now));
  }
  RELGRAPH_RETURN_IF_ERROR(wal_->Flush(/*sync=*/true));
  return next;
}

Epoch Db::epoch() const {
  std::shared_lock lock(mu_);
  return epochs_.current();
}

std::vector<Epoch> Db::epochs() const {
  std::shared_lock lock(mu_);
  return epochs_.epochs();
}

Status Db::CheckFollower(uint64_t number, uint64_t id, uint64_t last_lsn) const {
  std::shared_lock lock(mu_);
  RELGRAPH_RETURN_IF_ERROR(epochs_.CheckFollower(number, id, last_lsn));
  const uint64_t newest = wal_ ? wal_->last_lsn() : 0;
  if (last_lsn > newest) {
    return Status(Code::kDiverged, "the replica holds LSNs up to " + std::to_string(last_lsn) +
                                       ", past this primary's newest (" + std::to_string(newest) +
                                       "): it has records this primary never had",
                  static_cast<int64_t>(newest + 1));
  }
  return Status::OK();
}

// ---- other shards' changes applied here -------------------------------------------------------

uint64_t Db::InboundPosition(uint32_t origin) const {
  std::shared_lock lock(mu_);
  return inbound_.Of(origin);
}

std::map<uint32_t, uint64_t> Db::InboundPositionsNow() const {
  std::shared_lock lock(mu_);
  return inbound_.all();
}

Status Db::SyncThrough(uint64_t lsn) {
  if (lsn == 0 || !wal_) return Status::OK();
  if (options_.durability == DurabilityMode::kAlways) return Commit(lsn);  // group commit
  if (wal_->durable_lsn() >= lsn) return Status::OK();
  return wal_->Flush(/*sync=*/true);
}

// ---- the WAL: appends, commits, positions -----------------------------------------------------------------------

uint64_t Db::last_lsn() const {
  return wal_ ? wal_->last_lsn() : 0;
}

uint64_t Db::durable_lsn() const {
  return wal_ ? wal_->durable_lsn() : 0;
}

Status Db::WalHealth() const {
  return wal_ ? wal_->health() : Status::OK();
}

Result<uint64_t> Db::Log(WalRecordType type, std::string_view payload) {
  if (!wal_) return uint64_t{0};
  return wal_->Append(static_cast<uint8_t>(type), payload);
}

Status Db::Commit(uint64_t lsn) {
  return lsn == 0 ? Status::OK() : wal_->Commit(lsn);
}

Status Db::CommitOrHandOver(uint64_t lsn, uint64_t* commit_lsn) {
  if (commit_lsn != nullptr &&
      (options_.durability == DurabilityMode::kAlways || options_.report_commit_lsn)) {
    *commit_lsn = lsn;  // the caller waits (WaitDurable) before acknowledging
    return Status::OK();
  }
  return Commit(lsn);
}

Status Db::WaitDurable(uint64_t lsn) {
  return Commit(lsn);
}

}  // namespace relgraph
