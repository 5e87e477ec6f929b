#include "engine/db.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <utility>

#include "engine/durable/feed_snapshot.h"
#include "engine/durable/graph_image_loader.h"
#include "engine/durable/graph_snapshot.h"
#include "engine/graph/clock.h"
#include "storage/env/file_names.h"
#include "storage/wal/wal_reader.h"
#include "storage/wal/wal_tail.h"

namespace relgraph {

Db::Db(std::string dir, const DbOptions& options)
    : dir_(std::move(dir)),
      options_(options),
      env_(options.env != nullptr ? options.env : Env::Posix()),
      graph_(std::make_unique<Graph>(options.graph)),
      feed_(std::make_unique<Feed>(options.feed, options.graph.clock)) {}

Db::~Db() {
  Close().IgnoreError();
}

Result<std::unique_ptr<Db>> Db::Open(const std::string& dir, const DbOptions& options) {
  RELGRAPH_RETURN_IF_ERROR(ValidateGraphOptions(options.graph));
  RELGRAPH_RETURN_IF_ERROR(ValidateFeedOptions(options.feed));
  std::unique_ptr<Db> db(new Db(dir, options));
  if (!dir.empty()) RELGRAPH_RETURN_IF_ERROR(db->Recover());
  if (options.background_fanout) db->StartFanout();
  return db;
}

// ---- background fan-out -----------------------------------------------------------------------

void Db::StartFanout() {
  fanout_thread_ = std::thread([this] { FanoutLoop(); });
}

void Db::StopFanout() {
  {
    std::lock_guard lock(fanout_wake_mu_);
    fanout_stop_ = true;
  }
  fanout_wake_.notify_all();
  if (fanout_thread_.joinable()) fanout_thread_.join();
}

void Db::WakeFanout() {
  if (fanout_signal_.exchange(true)) return;  // signalled already, and not yet drained
  // Taking the mutex orders the flag before the waiter's predicate check: no lost wake-up.
  { std::lock_guard lock(fanout_wake_mu_); }
  fanout_wake_.notify_one();
}

bool Db::RunFanoutBatch() {
  std::vector<double> delays;
  bool more;
  {
    std::shared_lock lock(mu_);
    std::lock_guard feed_lock(feed_mu_);
    feed_->RunFanout(*graph_);
    more = feed_->fanout_pending();
    delays = feed_->TakeFanoutDelays();
  }
  if (!delays.empty()) {
    std::lock_guard lock(delays_mu_);
    // Keep a bounded window of recent delays for reports.
    if (fanout_delays_.size() > (1u << 20)) fanout_delays_.clear();
    fanout_delays_.insert(fanout_delays_.end(), delays.begin(), delays.end());
  }
  return more;
}

void Db::FanoutLoop() {
  std::unique_lock lock(fanout_wake_mu_);
  for (;;) {
    fanout_wake_.wait(lock, [&] { return fanout_stop_ || fanout_signal_.load(); });
    if (fanout_stop_) return;
    if (options_.fanout_gather_us > 0) {  // let the rest of a burst queue up
      fanout_wake_.wait_for(lock, std::chrono::microseconds(options_.fanout_gather_us),
                            [&] { return fanout_stop_; });
      if (fanout_stop_) return;
    }
    fanout_signal_ = false;
    lock.unlock();
    while (RunFanoutBatch()) {
    }
    lock.lock();
  }
}

void Db::CompactFeedPools() {
  {
    std::shared_lock lock(mu_);
    std::lock_guard feed_lock(feed_mu_);
    feed_->BeginPoolCompaction();
  }
  if (options_.background_fanout) WakeFanout();
}

void Db::DrainFanout() {
  while (RunFanoutBatch()) {
  }
}

std::vector<double> Db::TakeFanoutDelays() {
  std::lock_guard lock(delays_mu_);
  std::vector<double> out;
  out.swap(fanout_delays_);
  return out;
}

Status Db::Recover() {
  RELGRAPH_RETURN_IF_ERROR(env_->CreateDir(dir_));
  auto lock = env_->LockFile(JoinPath(dir_, "LOCK"));
  if (!lock.ok()) return lock.status();
  lock_ = std::move(*lock);
  auto temps = ListNumberedFiles(env_, dir_, FileType::kSnapshotTemp);
  if (!temps.ok()) return temps.status();
  for (uint64_t n : *temps) {
    RELGRAPH_RETURN_IF_ERROR(env_->RemoveFile(JoinPath(dir_, SnapshotTempName(n))));  // unfinished
  }
  auto state = RecoverState(env_, dir_, options_.graph, options_.feed, /*repair_torn_tail=*/true,
                            &recovery_);
  if (!state.ok()) return state.status();
  graph_ = std::move(state->graph);
  feed_ = std::move(state->feed);
  cursors_ = std::move(state->cursors);
  epochs_ = std::move(state->epochs);
  inbound_ = std::move(state->inbound);
  if (recovery_.torn_bytes > 0) {
    std::fprintf(
        stderr,
        "relgraph: recovery cut a torn tail of %llu bytes off %s (the writer died mid-append)\n",
        static_cast<unsigned long long>(recovery_.torn_bytes), recovery_.torn_file.c_str());
  }
  RELGRAPH_RETURN_IF_ERROR(OpenWal(recovery_.last_segment_no + 1, recovery_.last_lsn + 1));
  return RefreshOldestWalLsn();
}

Status Db::OpenWal(uint64_t segment_no, uint64_t next_lsn) {
  WalWriterOptions wo;
  wo.mode = options_.durability;
  wo.segment_bytes = options_.wal_segment_bytes;
  wo.retry_min = options_.wal_retry_min;
  wo.retry_max = options_.wal_retry_max;
  wo.on_event = options_.on_wal_event;
  auto wal = WalWriter::Open(env_, dir_, wo, segment_no, next_lsn);
  if (!wal.ok()) return wal.status();
  wal_ = std::move(*wal);
  return Status::OK();
}

Status Db::WritableLocked(std::string_view refused) const {
  if (closed_) return Status(Code::kUnavailable, "the database is closed");
  if (!wal_) return Status::OK();  // in memory
  if (Status h = wal_->health(); !h.ok()) {
    return Status(Code::kUnavailable,
                  std::string(refused) + ": the WAL cannot be written (retrying): " + h.message());
  }
  return Status::OK();
}

// Slices under the lock held shared: writers wait for one slice at most, readers never. A
// slice of lists also stops at kSliceEntries, because celebrities cluster at low internal
// ids: 4,096 users there held millions of fans, a 22 ms slice.
Status Db::WriteGraphImage(size_t users, SnapshotWriter* writer) {
  constexpr uint64_t kSliceEntries = 1 << 18;
  const size_t slice_users = options_.snapshot_slice_users;
  std::string records;
  for (size_t begin = 0; begin < users; begin += slice_users) {
    records.clear();
    {
      std::shared_lock lock(mu_);
      graph_->AppendImageIds(begin, begin + slice_users, &records);
    }
    RELGRAPH_RETURN_IF_ERROR(AddImageRecords(records, writer));
  }
  for (size_t next = 0; next < users;) {
    records.clear();
    {
      std::shared_lock lock(mu_);
      next = graph_->AppendImageLists(next, next + slice_users, kSliceEntries, &records);
    }
    RELGRAPH_RETURN_IF_ERROR(AddImageRecords(records, writer));
  }
  return Status::OK();
}

// Posts, mutes and hides, a slice of users at a time under both locks.
Status Db::WriteFeedState(const Graph::AccessImage& access, SnapshotWriter* writer) {
  RELGRAPH_RETURN_IF_ERROR(AddAccessToSnapshot(access, writer));
  for (size_t begin = 0;; begin += options_.snapshot_slice_users) {
    std::vector<Feed::UserState> users_state;
    {
      std::shared_lock lock(mu_);
      if (begin >= graph_->user_count()) break;
      std::lock_guard feed_lock(feed_mu_);
      feed_->CopyUsers(*graph_, begin, begin + options_.snapshot_slice_users, &users_state);
    }
    RELGRAPH_RETURN_IF_ERROR(AddFeedUsersToSnapshot(users_state, writer));
  }
  CursorTable cursors;
  EpochHistory epochs;
  InboundPositions inbound;
  {
    std::shared_lock lock(mu_);
    cursors = cursors_;
    epochs = epochs_;
    inbound = inbound_;
  }
  RELGRAPH_RETURN_IF_ERROR(AddCursorsToSnapshot(cursors, writer));
  RELGRAPH_RETURN_IF_ERROR(AddEpochsToSnapshot(epochs, writer));
  return AddInboundToSnapshot(inbound, writer);
}

Result<SnapshotInfo> Db::Snapshot() {
  if (!wal_) return Status::InvalidArgument("an in-memory Db has no snapshots");
  std::lock_guard one_at_a_time(snapshot_mu_);
  uint64_t lsn, edges;
  size_t users;
  Graph::AccessImage access;
  {
    if (closed_) return Status(Code::kUnavailable, "the database is closed");
    // Appends happen under the exclusive lock after their change is applied, so while we hold
    // it every record up to last_lsn() is in memory: the image is the state at exactly lsn.
    // No operation in steps is half done then (its record would be replayed before the image).
    std::lock_guard no_steps(steps_mu_);
    std::unique_lock lock(mu_);
    lsn = wal_->last_lsn();
    graph_->BeginImage();
    graph_->CopyAccess(&access);  // blocks, requests, private marks: at lsn too
    users = graph_->image_users();
    edges = graph_->image_edges();
  }
  // Writers stop saving pre-images once the lists are copied, or when this returns early.
  struct ImageGuard {
    Db* db;
    bool open = true;
    void End() {
      if (!open) return;
      open = false;
      std::unique_lock lock(db->mu_);
      db->graph_->EndImage();
    }
    ~ImageGuard() { End(); }
  } image{this};
  auto writer = SnapshotWriter::Create(env_, dir_, lsn, SystemClock::Default()->NowMs(),
                                       SnapshotLayout::kGraphImage);
  if (!writer.ok()) return writer.status();
  (*writer)->SetImageCounts(users, edges);
  RELGRAPH_RETURN_IF_ERROR(WriteGraphImage(users, writer->get()));
  image.End();
  RELGRAPH_RETURN_IF_ERROR(WriteFeedState(access, writer->get()));
  // The WAL must reach the snapshot's LSN on disk before the snapshot exists, or a crash could
  // leave a snapshot newer than the end of the WAL that recovery continues from.
  RELGRAPH_RETURN_IF_ERROR(wal_->Flush(/*sync=*/true));
  auto info = (*writer)->Finish();
  if (!info.ok()) return info.status();
  // Read the file back and check every block before it can count: retention would delete
  // older snapshots and the WAL they need. One that fails is removed and reported, and the
  // older ones stay. (About 15% of a snapshot's time at 10M edges.)
  const std::string path = (*writer)->final_path();
  auto verified = ReadSnapshot(env_, path);
  if (!verified.ok()) {
    env_->RemoveFile(path).IgnoreError();
    return Status::Corruption("snapshot " + path + " failed its read-back check and was removed" +
                              " (older snapshots are kept): " + verified.status().message());
  }
  RELGRAPH_RETURN_IF_ERROR(ApplyRetention());
  {
    std::lock_guard lock(last_snapshot_mu_);
    last_snapshot_ = *info;
  }
  return info;
}

Status Db::ApplyRetention() {
  auto listed = ListNumberedFiles(env_, dir_, FileType::kSnapshot);
  if (!listed.ok()) return listed.status();
  std::vector<uint64_t> snapshots(listed->rbegin(), listed->rend());  // newest first
  const size_t keep = std::max<uint32_t>(1, options_.keep_snapshots);
  for (size_t i = keep; i < snapshots.size(); ++i) {
    RELGRAPH_RETURN_IF_ERROR(env_->RemoveFile(JoinPath(dir_, SnapshotName(snapshots[i]))));
  }
  if (snapshots.empty() || options_.keep_all_wal) return env_->SyncDir(dir_);
  const uint64_t oldest_kept = snapshots[std::min(keep, snapshots.size()) - 1];
  // A segment may go when the next one starts at or below oldest_kept + 1: all its records
  // are then covered by every snapshot we keep. The newest segment is always kept. Of those
  // that may go, named cursors keep the newest ones that hold records at or after their
  // resume LSN, within stream_retention_bytes; cursors not acked for stream_retention_age_s
  // hold nothing. What goes is always a prefix: segments are deleted oldest first.
  auto segments = ListWalSegments(env_, dir_);
  if (!segments.ok()) return segments.status();
  struct Candidate {
    uint64_t no, bytes, next_first_lsn;
  };
  std::vector<Candidate> covered;  // oldest first
  for (size_t i = 0; i + 1 < segments->size(); ++i) {
    auto next = ReadWalSegmentHeader(env_, dir_, (*segments)[i + 1]);
    if (!next.ok()) return next.status();
    if (next->first_lsn > oldest_kept + 1) break;
    auto bytes = env_->FileSize(JoinPath(dir_, WalSegmentName((*segments)[i])));
    covered.push_back({(*segments)[i], bytes.ok() ? *bytes : 0, next->first_lsn});
  }
  uint64_t cursor_floor = 0;  // the oldest resume LSN a live cursor needs (0: none)
  {
    const TimestampMs since =
        NowMs() - static_cast<TimestampMs>(options_.stream_retention_age_s) * 1000;
    std::shared_lock lock(mu_);
    cursor_floor = cursors_.OldestResumeLsnSince(since);
  }
  size_t cut = covered.size();  // segments [0, cut) are deleted
  uint64_t held = 0;
  while (cut > 0 && cursor_floor != 0) {
    const Candidate& c = covered[cut - 1];
    const bool needed = c.next_first_lsn > cursor_floor;  // holds LSNs >= the floor
    if (!needed || held + c.bytes > options_.stream_retention_bytes) break;
    held += c.bytes;
    --cut;
  }
  for (size_t i = 0; i < cut; ++i) {
    RELGRAPH_RETURN_IF_ERROR(env_->RemoveFile(JoinPath(dir_, WalSegmentName(covered[i].no))));
  }
  if (cut > 0) RELGRAPH_RETURN_IF_ERROR(RefreshOldestWalLsn());
  return env_->SyncDir(dir_);
}

Status Db::Close() {
  StopFanout();
  std::lock_guard no_snapshot_running(snapshot_mu_);
  std::unique_lock lock(mu_);
  closed_ = true;
  if (!wal_) return Status::OK();
  return wal_->Close();
}

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

Result<Db::SnapshotFile> Db::OpenNewestSnapshot() {
  if (!wal_) return Status::InvalidArgument("an in-memory Db has no snapshots");
  auto lsns = ListNumberedFiles(env_, dir_, FileType::kSnapshot);
  if (!lsns.ok()) return lsns.status();
  if (lsns->empty()) {
    return Status::NotFound("no snapshot in " + dir_ + " yet (take one with SNAPSHOT)");
  }
  SnapshotFile s;
  s.lsn = lsns->back();
  auto file = env_->OpenRandomAccess(JoinPath(dir_, SnapshotName(s.lsn)));
  if (!file.ok()) return file.status();
  s.file = std::move(*file);
  s.file_bytes = s.file->Size();
  return s;
}

uint64_t Db::last_lsn() const {
  return wal_ ? wal_->last_lsn() : 0;
}

uint64_t Db::durable_lsn() const {
  return wal_ ? wal_->durable_lsn() : 0;
}

Status Db::WalHealth() const {
  return wal_ ? wal_->health() : Status::OK();
}

TimestampMs Db::NowMs() const {
  Clock* clock = options_.graph.clock != nullptr ? options_.graph.clock : SystemClock::Default();
  return clock->NowMs();
}

Result<uint64_t> Db::Log(WalRecordType type, std::string_view payload) {
  if (!wal_) return uint64_t{0};
  return wal_->Append(static_cast<uint8_t>(type), payload);
}

Status Db::Commit(uint64_t lsn) {
  return lsn == 0 ? Status::OK() : wal_->Commit(lsn);
}

// Every mutation: refuse early once the WAL has failed, so memory never runs ahead of a WAL
// that can no longer catch up; decide + apply + append under the lock; commit outside it.
// `record` maps the outcome to the WAL record to write, or nullopt when nothing changed.
template <typename T, typename Apply, typename Record>
Result<T> Db::Mutate(Apply&& apply, Record&& record, uint64_t* commit_lsn) {
  if (commit_lsn != nullptr) *commit_lsn = 0;
  uint64_t lsn = 0;
  Result<T> r = Status(Code::kInternal, "unset");
  {
    std::unique_lock lock(mu_);
    std::lock_guard feed_lock(feed_mu_);
    RELGRAPH_RETURN_IF_ERROR(WritableLocked("writes refused"));
    r = apply(*graph_);
    if (!r.ok()) return r;
    const std::optional<std::pair<WalRecordType, WalPayload>> rec = record(*r);
    if (!rec) return r;
    auto l = Log(rec->first, rec->second.view());
    if (!l.ok()) return l.status();
    lsn = *l;
  }
  RELGRAPH_RETURN_IF_ERROR(CommitOrHandOver(lsn, commit_lsn));
  return r;
}

Status Db::CommitOrHandOver(uint64_t lsn, uint64_t* commit_lsn) {
  if (commit_lsn != nullptr &&
      (options_.durability == DurabilityMode::kAlways || options_.report_commit_lsn)) {
    *commit_lsn = lsn;  // the caller waits (WaitDurable) before acknowledging
    return Status::OK();
  }
  return Commit(lsn);
}

namespace {

using MaybeRecord = std::optional<std::pair<WalRecordType, WalPayload>>;

// A follow is logged only when it created the edge (or the request), with the time it was
// given, whether it made the two friends, and the cluster's flags (Db::NotifyFollowLocked).
auto FollowRecord(UserId a, UserId b, const uint8_t& cluster_flags) {
  return [a, b, &cluster_flags](const FollowOutcome& o) -> MaybeRecord {
    if (!o.created) return std::nullopt;
    if (Has(o.relation, Relation::kRequested)) {
      return {{WalRecordType::kRequest, EncodePairRecord(a, b, o.followed_at)}};
    }
    const uint8_t flags =
        (Has(o.relation, Relation::kMutual) ? kFollowBecameFriends : uint8_t{0}) | cluster_flags;
    return {{WalRecordType::kFollow, EncodeFollowRecord(a, b, o.followed_at, flags)}};
  };
}

// An unfollow, with the feed told when it removed the edge.
Result<bool> UnfollowAndNotify(Graph& g, Feed& feed, UserId a, UserId b) {
  auto r = g.Unfollow(a, b);
  if (r.ok() && *r) feed.OnUnfollow(g, g.FindUser(a), g.FindUser(b));
  return r;
}

// An unfollow is logged only when it removed the edge, with the engine's time.
auto UnfollowRecord(UserId a, UserId b, TimestampMs now) {
  return [a, b, now](bool removed) -> MaybeRecord {
    if (!removed) return std::nullopt;
    return {{WalRecordType::kUnfollow, EncodePairRecord(a, b, now)}};
  };
}

// A mute/unmute, hide/unhide, unblock, reject or withdraw is logged only when it changed
// something.
auto PairRecord(WalRecordType type, uint64_t a, uint64_t b, TimestampMs now) {
  return [=](bool changed) -> MaybeRecord {
    if (!changed) return std::nullopt;
    return {{type, EncodePairRecord(a, b, now)}};
  };
}

}  // namespace

Result<FollowOutcome> Db::Follow(UserId a, UserId b, uint64_t* commit_lsn) {
  uint8_t cluster_flags = 0;
  return Mutate<FollowOutcome>(
      [&](Graph& g) { return NotifyFollowLocked(a, b, g.Follow(a, b), &cluster_flags); },
      FollowRecord(a, b, cluster_flags), commit_lsn);
}

Result<FollowOutcome> Db::FollowAt(UserId a, UserId b, TimestampMs ts, uint64_t* commit_lsn) {
  uint8_t cluster_flags = 0;
  return Mutate<FollowOutcome>(
      [&](Graph& g) { return NotifyFollowLocked(a, b, g.FollowAt(a, b, ts), &cluster_flags); },
      FollowRecord(a, b, cluster_flags), commit_lsn);
}

Result<bool> Db::Unfollow(UserId a, UserId b, uint64_t* commit_lsn) {
  return Mutate<bool>([&](Graph& g) { return UnfollowAndNotify(g, *feed_, a, b); },
                      UnfollowRecord(a, b, NowMs()), commit_lsn);
}

void Db::WriteBatch(std::span<const BatchWrite> writes, std::span<BatchWriteResult> results,
                    uint64_t* commit_lsn) {
  if (commit_lsn != nullptr) *commit_lsn = 0;
  std::vector<std::pair<WalRecordType, WalPayload>> made;  // the records, in order
  std::vector<size_t> logged;                              // whose write made each
  made.reserve(writes.size());
  logged.reserve(writes.size());
  uint64_t lsn = 0;
  {
    std::unique_lock lock(mu_);
    std::lock_guard feed_lock(feed_mu_);
    if (Status s = WritableLocked("writes refused"); !s.ok()) {
      for (BatchWriteResult& r : results) r.status = s;
      return;
    }
    Graph& g = *graph_;
    const TimestampMs now = NowMs();
    Graph::WriteAhead ahead(g);
    for (size_t i = 0; i < writes.size(); ++i) {
      ahead.Advance(i, writes.size(), [&](size_t j) {
        return std::pair{writes[j].a, writes[j].b};
      });
      const BatchWrite& w = writes[i];
      BatchWriteResult& out = results[i];
      MaybeRecord record;
      if (w.kind == BatchWrite::Kind::kFollow) {
        uint8_t cluster_flags = 0;
        auto r = NotifyFollowLocked(
            w.a, w.b,
            w.ts ? g.FollowAt(w.a, w.b, *w.ts, ahead.Known(i)) : g.Follow(w.a, w.b, ahead.Known(i)),
            &cluster_flags);
        out.status = r.status();
        if (!r.ok()) continue;
        out.follow = *r;
        record = FollowRecord(w.a, w.b, cluster_flags)(*r);
      } else {
        auto r = UnfollowAndNotify(g, *feed_, w.a, w.b);
        out.status = r.status();
        if (!r.ok()) continue;
        out.removed = *r;
        record = UnfollowRecord(w.a, w.b, now)(*r);
      }
      if (record) {
        made.push_back(*record);
        logged.push_back(i);
      }
    }
    if (wal_ && !made.empty()) {
      std::vector<WalWriter::Record> records;
      records.reserve(made.size());
      for (const auto& [type, payload] : made) {
        records.push_back({static_cast<uint8_t>(type), payload.view()});
      }
      auto appended = wal_->AppendBatch(records);
      if (!appended.ok()) {
        for (size_t i : logged) results[i].status = appended.status();
        return;
      }
      lsn = *appended;
    }
  }
  if (Status s = CommitOrHandOver(lsn, commit_lsn); !s.ok()) {
    for (size_t i : logged) results[i].status = s;
  }
}

// The record is logged with the first step; recovery and replicas replay it whole
// (Graph::RemoveUser), before the writes logged after it, which the steps' settling rules make
// meet the finished state (engine/graph/graph_steps.cpp).
Result<uint64_t> Db::RemoveUser(UserId a, uint64_t* commit_lsn) {
  std::lock_guard one_in_steps(steps_mu_);
  auto r = Mutate<uint64_t>(
      [&](Graph& g) -> Result<uint64_t> {
        if (a == 0) return g.BeginRemoveUser(a);  // its error, before the feed hears of it
        const std::vector<InternalId> followees = feed_->BeforeRemoveUser(g, a);
        auto begun = g.BeginRemoveUser(a);
        feed_->AfterRemoveUser(g, followees);
        return begun;
      },
      [&](uint64_t) -> MaybeRecord {
        return {{WalRecordType::kRemoveUser, EncodeRemoveUserRecord(a, NowMs())}};
      },
      commit_lsn);
  if (!r.ok()) return r;
  return *r + RunStepsToEnd().edges_removed;
}

Graph::StepsDone Db::RunStepsToEnd() {
  Graph::StepsDone total;
  bool more;
  {
    std::shared_lock lock(mu_);
    more = graph_->unfinished();
  }
  // A step ends at step_units units or once it has held the lock step_hold_us, checked every
  // 128 units: a loaded machine (a unit costs several times more when other processes share
  // the caches) must not stretch the writers' wait.
  constexpr uint32_t kCheckEvery = 128;
  const auto hold = std::chrono::microseconds(options_.step_hold_us);
  while (more) {
    if (options_.between_steps) options_.between_steps();
    std::unique_lock lock(mu_);
    std::lock_guard feed_lock(feed_mu_);
    const auto start = std::chrono::steady_clock::now();
    for (uint32_t done = 0; more && done < options_.step_units; done += kCheckEvery) {
      const Graph::StepsDone d =
          graph_->RunSteps(std::min(kCheckEvery, options_.step_units - done));
      total.edges_removed += d.edges_removed;
      total.approved += d.approved;
      more = d.more;
      if (std::chrono::steady_clock::now() - start >= hold) break;
    }
  }
  return total;
}

Graph::EdgeHook Db::FeedHook(Graph& g) {
  return [&g, feed = feed_.get()](InternalId a, InternalId b, bool created) {
    created ? feed->OnFollow(g, a, b) : feed->OnUnfollow(g, a, b);
  };
}

Result<BlockOutcome> Db::Block(UserId a, UserId b, uint64_t* commit_lsn) {
  return Mutate<BlockOutcome>(
      [&](Graph& g) { return g.Block(a, b, FeedHook(g)); },
      [&](const BlockOutcome& o) -> MaybeRecord {
        if (!o.created) return std::nullopt;
        return {{WalRecordType::kBlock, EncodeBlockRecord(a, b, o.ts, BlockRecordFlags(o))}};
      },
      commit_lsn);
}

Result<bool> Db::Unblock(UserId a, UserId b, uint64_t* commit_lsn) {
  return Mutate<bool>([&](Graph& g) { return g.Unblock(a, b); },
                      PairRecord(WalRecordType::kUnblock, a, b, NowMs()), commit_lsn);
}

Result<SetPrivateOutcome> Db::SetPrivate(UserId a, bool on, uint64_t* commit_lsn) {
  std::lock_guard one_in_steps(steps_mu_);
  auto r = Mutate<SetPrivateOutcome>(
      [&](Graph& g) { return g.SetPrivateInSteps(a, on, FeedHook(g)); },
      [&](const SetPrivateOutcome& o) -> MaybeRecord {
        if (!o.changed) return std::nullopt;
        return {{WalRecordType::kSetPrivate, EncodeSetPrivateRecord(a, o.ts, on)}};
      },
      commit_lsn);
  if (r.ok() && r->changed && !on) r->approved = RunStepsToEnd().approved;
  return r;
}

Result<FollowOutcome> Db::Approve(UserId target, UserId requester, uint64_t* commit_lsn) {
  return Mutate<FollowOutcome>(
      [&](Graph& g) { return g.Approve(target, requester, FeedHook(g)); },
      [&](const FollowOutcome& o) -> MaybeRecord {
        const uint8_t flags = Has(o.relation, Relation::kMutual) ? kFollowBecameFriends : 0;
        return {
            {WalRecordType::kApprove, EncodeBlockRecord(target, requester, o.followed_at, flags)}};
      },
      commit_lsn);
}

Result<bool> Db::Reject(UserId target, UserId requester, uint64_t* commit_lsn) {
  return Mutate<bool>([&](Graph& g) { return g.Reject(target, requester); },
                      PairRecord(WalRecordType::kReject, target, requester, NowMs()), commit_lsn);
}

Result<bool> Db::Withdraw(UserId requester, UserId target, uint64_t* commit_lsn) {
  return Mutate<bool>([&](Graph& g) { return g.Withdraw(requester, target); },
                      PairRecord(WalRecordType::kWithdraw, requester, target, NowMs()), commit_lsn);
}

Status Db::WaitDurable(uint64_t lsn) {
  return Commit(lsn);
}

// ---- feed -------------------------------------------------------------------------------------

Result<PublishOutcome> Db::Publish(UserId author, PostId post, uint32_t kind,
                                   std::optional<TimestampMs> ts, uint64_t* commit_lsn) {
  auto r = Mutate<PublishOutcome>(
      [&](Graph& g) -> Result<PublishOutcome> {
        if (g.IsBeingRemoved(author)) {
          return Status(Code::kUnavailable, "user " + std::to_string(author) + " is being removed");
        }
        return feed_->Publish(g, author, post, kind, ts);
      },
      [&](const PublishOutcome& o) -> MaybeRecord {
        if (!o.retained) return std::nullopt;
        return {{WalRecordType::kPublish,
                 EncodePublishRecord(author, post, o.ts, static_cast<uint8_t>(kind), o.evicted)}};
      },
      commit_lsn);
  if (r.ok() && r->retained) WakeFanout();
  return r;
}

Status Db::DeletePost(UserId author, PostId post, uint64_t* commit_lsn) {
  auto r = Mutate<bool>(
      [&](Graph& g) -> Result<bool> {
        RELGRAPH_RETURN_IF_ERROR(feed_->DeletePost(g, author, post));
        return true;
      },
      [&](bool) -> MaybeRecord {
        return {{WalRecordType::kDeletePost, EncodePairRecord(author, post, NowMs())}};
      },
      commit_lsn);
  if (!r.ok()) return r.status();
  WakeFanout();
  return Status::OK();
}

Result<bool> Db::Mute(UserId user, UserId other, bool on, uint64_t* commit_lsn) {
  return Mutate<bool>(
      [&](Graph& g) { return feed_->Mute(g, user, other, on); },
      PairRecord(on ? WalRecordType::kMute : WalRecordType::kUnmute, user, other, NowMs()),
      commit_lsn);
}

Result<bool> Db::Hide(UserId author, UserId from, bool on, uint64_t* commit_lsn) {
  return Mutate<bool>(
      [&](Graph& g) { return feed_->Hide(g, author, from, on); },
      PairRecord(on ? WalRecordType::kHide : WalRecordType::kUnhide, author, from, NowMs()),
      commit_lsn);
}

Result<FeedPage> Db::Timeline(UserId user, const FeedPageRequest& request) {
  std::shared_lock lock(mu_);
  std::lock_guard feed_lock(feed_mu_);
  return feed_->Timeline(*graph_, user, request);
}

Result<FeedPage> Db::UserPosts(UserId author, const FeedPageRequest& request) const {
  return ReadFeed([&](const Graph& g, const Feed& f) { return f.UserPosts(g, author, request); });
}

Result<std::vector<UserId>> Db::Mutes(UserId user) const {
  return ReadFeed([&](const Graph& g, const Feed& f) { return f.MutesOf(g, user); });
}

Result<std::vector<UserId>> Db::Hides(UserId author) const {
  return ReadFeed([&](const Graph& g, const Feed& f) { return f.HidesOf(g, author); });
}

Status Db::CheckInvariants() const {
  return ReadFeed([](const Graph& g, const Feed& f) -> Status {
    RELGRAPH_RETURN_IF_ERROR(g.CheckInvariants());
    return f.CheckInvariants(g);
  });
}

FeedStats Db::feed_stats() const {
  std::lock_guard feed_lock(feed_mu_);
  return feed_->Stats();
}

std::optional<SnapshotInfo> Db::last_snapshot() const {
  std::lock_guard lock(last_snapshot_mu_);
  return last_snapshot_;
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

}  // namespace relgraph
