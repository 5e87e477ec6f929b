// Db's snapshots (engine/db.h): writing one online, retention, the newest one for a new
// replica or consumer, and a replica's reset to its primary's.
//
// Why slices: a point-in-time image of the graph (Graph::BeginImage, copy-on-write per user)
// is copied in slices, each under the lock held shared, so writers wait for one slice at most
// and readers never (docs/snapshot-format.md).
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "engine/db.h"
#include "engine/durable/feed_snapshot.h"
#include "engine/durable/graph_image_loader.h"
#include "engine/durable/graph_snapshot.h"
#include "storage/env/file_names.h"
#include "storage/wal/wal_reader.h"

namespace relgraph {

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
  const auto began = std::chrono::steady_clock::now();
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
    last_snapshot_us_ = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                  std::chrono::steady_clock::now() - began)
                                                  .count());
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

std::optional<SnapshotInfo> Db::last_snapshot() const {
  std::lock_guard lock(last_snapshot_mu_);
  return last_snapshot_;
}

Db::StorageStats Db::storage_stats() const {
  StorageStats s;
  {
    std::lock_guard lock(last_snapshot_mu_);
    s.last_snapshot_us = last_snapshot_us_;
  }
  if (!wal_) return s;
  s.wal = wal_->stats();
  auto segments = ListWalSegments(env_, dir_);
  if (segments.ok()) s.wal_segments = segments->size();
  return s;
}

Status Db::ResetToSnapshot(const std::string& path) {
  if (!wal_) return Status::InvalidArgument("an in-memory Db has no snapshot to reset to");
  RecoveredState state;
  SnapshotInfo info;
  if (!path.empty()) {
    auto loaded = LoadSnapshotState(env_, path, options_.graph, options_.feed, &info);
    if (!loaded.ok()) return loaded.status();
    state = std::move(*loaded);
    state.feed->RecomputeCelebrities(*state.graph);
  } else {
    state.graph = std::make_unique<Graph>(options_.graph);
    state.feed = std::make_unique<Feed>(options_.feed, options_.graph.clock);
  }
  std::lock_guard one_at_a_time(snapshot_mu_);
  std::unique_lock lock(mu_);
  std::lock_guard feed_lock(feed_mu_);
  if (closed_) return Status(Code::kUnavailable, "the database is closed");
  RELGRAPH_RETURN_IF_ERROR(wal_->Close());
  // Kept, closed: calls that read the WAL's positions without the lock (last_lsn, VisibleLsn)
  // may still hold it. One per reset, a few hundred bytes each.
  retired_wals_.push_back(std::move(wal_));
  // Without a WAL, Db would act as an in-memory one: until the new WAL is open, it is closed.
  closed_ = true;
  auto segments = ListWalSegments(env_, dir_);
  if (!segments.ok()) return segments.status();
  const uint64_t next_segment = segments->empty() ? 1 : segments->back() + 1;
  // From here a failure leaves the Db closed (writes fail with kUnavailable) until a restart,
  // which recovers whatever this left on disk.
  for (uint64_t no : *segments) {
    RELGRAPH_RETURN_IF_ERROR(env_->RemoveFile(JoinPath(dir_, WalSegmentName(no))));
  }
  auto snapshots = ListNumberedFiles(env_, dir_, FileType::kSnapshot);
  if (!snapshots.ok()) return snapshots.status();
  for (uint64_t lsn : *snapshots) {
    RELGRAPH_RETURN_IF_ERROR(env_->RemoveFile(JoinPath(dir_, SnapshotName(lsn))));
  }
  if (!path.empty()) {
    RELGRAPH_RETURN_IF_ERROR(env_->Rename(path, JoinPath(dir_, SnapshotName(info.lsn))));
  }
  RELGRAPH_RETURN_IF_ERROR(env_->SyncDir(dir_));
  graph_ = std::move(state.graph);
  feed_ = std::move(state.feed);
  cursors_ = std::move(state.cursors);
  epochs_ = std::move(state.epochs);
  inbound_ = std::move(state.inbound);
  RELGRAPH_RETURN_IF_ERROR(OpenWal(next_segment, info.lsn + 1));
  closed_ = false;
  oldest_wal_lsn_.store(info.lsn + 1, std::memory_order_release);
  return Status::OK();
}

}  // namespace relgraph
