#include "engine/durable/recovery.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "engine/durable/access_replay.h"
#include "engine/durable/feed_snapshot.h"
#include "engine/durable/graph_builder.h"
#include "engine/durable/graph_image_loader.h"
#include "engine/durable/record_handler.h"
#include "engine/durable/wal_records.h"
#include "storage/env/file_names.h"
#include "storage/snapshot/snapshot_file.h"
#include "storage/wal/wal_reader.h"

namespace relgraph {
namespace {

// Loads the newest valid snapshot into *state (left alone when none is valid).
Status LoadNewestSnapshot(Env* env, const std::string& dir, const GraphOptions& options,
                          const FeedOptions& feed_options, RecoveredState* state,
                          RecoveryInfo* info) {
  auto lsns = ListNumberedFiles(env, dir, FileType::kSnapshot);
  if (!lsns.ok()) return lsns.status();
  for (auto it = lsns->rbegin(); it != lsns->rend(); ++it) {
    const std::string path = JoinPath(dir, SnapshotName(*it));
    // Built into scratch state: a snapshot that fails halfway leaves nothing behind.
    SnapshotInfo read;
    auto loaded = LoadSnapshotState(env, path, options, feed_options, &read);
    std::string why;
    if (loaded.status().code() == Code::kResourceExhausted ||
        loaded.status().code() == Code::kUnsupported) {
      // A sound snapshot this configuration cannot hold (max_users) or keeps its times at
      // another resolution: an older one or the WAL would only fail later, so say so now.
      return Status(loaded.status().code(), path + ": " + loaded.status().message());
    }
    if (!loaded.ok()) {
      why = loaded.status().message();
    } else if (read.lsn != *it) {
      why = "its header says LSN " + std::to_string(read.lsn);
    }
    if (!why.empty()) {
      info->skipped_snapshots.push_back(path + ": " + why);  // the caller logs them
      continue;
    }
    *state = std::move(*loaded);
    info->snapshot_lsn = *it;
    info->snapshot_file = path;
    info->snapshot_edges = read.edges;
    info->snapshot_version = read.version;
    return Status::OK();
  }
  return Status::OK();
}

// Replay's handler: records decoded as they are read, applied in batches so that
// Graph::ApplyBatch can overlap the cache misses of consecutive records. Feed records go to a
// second batch applied right after the graph's (the two states are independent; a
// remove_user goes to both, and each keeps its own order): Flush dispatches them again with
// applying_feed_ set, and the feed methods apply instead of queueing. Access records change
// edges too, and posts back-fills and clears keep their place among the feed's records: the
// batches are flushed before them. Inboxes are rebuilt after recovery, so no feed hook runs.
class ReplayHandler final : public RecordHandler {
 public:
  static constexpr size_t kBatch = 4096;
  ReplayHandler(RecoveredState& state, Graph::ReplayMode mode)
      : g_(*state.graph), feed_(*state.feed), state_(state), mode_(mode), access_(g_, nullptr) {
    batch_.reserve(kBatch);
  }
  uint64_t lsn = 0;  // the record being dispatched

  bool full() const { return batch_.size() + feed_batch_.size() >= kBatch; }
  Status Flush() {
    Status s = g_.ApplyBatch(batch_, mode_);
    if (!s.ok()) return AtLsn(batch_lsn_[static_cast<size_t>(s.detail())], s);
    batch_.clear();
    batch_lsn_.clear();
    applying_feed_ = true;
    for (const auto& [op, at] : feed_batch_) {
      if (Status fs = DispatchRecord(op, *this); !fs.ok()) {
        applying_feed_ = false;
        return AtLsn(at, fs);
      }
    }
    applying_feed_ = false;
    feed_batch_.clear();
    return Status::OK();
  }

  Status Follow(const WalOp& op) override {
    PushGraph(op);
    return op.clears_posts() ? ClearPosts(op) : Status::OK();  // a remote author's first fan
  }
  Status Unfollow(const WalOp& op) override {
    PushGraph(op);
    return Status::OK();
  }
  Status RemoveUser(const WalOp& op) override {
    if (applying_feed_) {
      feed_.BeforeRemoveUser(g_, op.a);
      return Status::OK();
    }
    PushGraph(op);
    return PushFeed(op);
  }
  Status Publish(const WalOp& op) override {
    if (!applying_feed_) return PushFeed(op);
    return feed_.ApplyPublish(g_, op.a, op.b, op.ts, op.kind, op.evicted);
  }
  Status DeletePost(const WalOp& op) override {
    return applying_feed_ ? feed_.ApplyDeletePost(g_, op.a, op.b) : PushFeed(op);
  }
  Status Mute(const WalOp& op) override {
    return applying_feed_ ? feed_.ApplyMute(g_, op.a, op.b, true) : PushFeed(op);
  }
  Status Unmute(const WalOp& op) override {
    return applying_feed_ ? feed_.ApplyMute(g_, op.a, op.b, false) : PushFeed(op);
  }
  Status Hide(const WalOp& op) override {
    return applying_feed_ ? feed_.ApplyHide(g_, op.a, op.b, true) : PushFeed(op);
  }
  Status Unhide(const WalOp& op) override {
    return applying_feed_ ? feed_.ApplyHide(g_, op.a, op.b, false) : PushFeed(op);
  }
  Status Block(const WalOp& op) override { return Access(&AccessReplay::Block, op); }
  Status Unblock(const WalOp& op) override { return Access(&AccessReplay::Unblock, op); }
  Status SetPrivate(const WalOp& op) override { return Access(&AccessReplay::SetPrivate, op); }
  Status Request(const WalOp& op) override { return Access(&AccessReplay::Request, op); }
  Status Approve(const WalOp& op) override { return Access(&AccessReplay::Approve, op); }
  Status Reject(const WalOp& op) override { return Access(&AccessReplay::Reject, op); }
  Status Withdraw(const WalOp& op) override { return Access(&AccessReplay::Withdraw, op); }
  Status Cursor(const WalOp& op) override { return ApplyCursor(op); }
  Status CursorStart(const WalOp& op) override { return ApplyCursor(op); }
  Status Epoch(const WalOp& op) override {
    Status s = state_.epochs.Apply(op.a, op.b, lsn, op.ts);
    return s.ok() ? s : AtLsn(lsn, s);
  }
  Status Posts(const WalOp& op) override {  // a back-fill of a remote author's posts
    RELGRAPH_RETURN_IF_ERROR(Flush());      // its entries point into the payload, read now
    auto r = feed_.ReplacePosts(g_, op.a, op.PostsOf(), /*live=*/false);
    return r.ok() ? Status::OK() : AtLsn(lsn, r.status());
  }
  Status PostsWanted(const WalOp& op) override {
    return op.clears_posts() ? ClearPosts(op) : Status::OK();  // another shard's: nothing here
  }

 private:
  static Status AtLsn(uint64_t at, const Status& s) {
    return Status(s.code(), "replaying LSN " + std::to_string(at) + ": " + s.message());
  }
  Status ApplyCursor(const WalOp& op) {  // independent state
    state_.cursors.Apply(op);
    return Status::OK();
  }
  void PushGraph(const WalOp& op) {
    batch_.push_back(op.graph_op());
    batch_lsn_.push_back(lsn);
  }
  Status PushFeed(const WalOp& op) {
    feed_batch_.emplace_back(op, lsn);
    return Status::OK();
  }
  // An access record, applied in order: the batches before it first.
  Status Access(Status (AccessReplay::*apply)(const WalOp&), const WalOp& op) {
    RELGRAPH_RETURN_IF_ERROR(Flush());
    Status s = (access_.*apply)(op);
    return s.ok() ? s : AtLsn(lsn, s);
  }
  Status ClearPosts(const WalOp& op) {
    RELGRAPH_RETURN_IF_ERROR(Flush());
    auto r = feed_.ReplacePosts(g_, op.cleared_author(), {}, /*live=*/false);
    return r.ok() ? Status::OK() : AtLsn(lsn, r.status());
  }

  Graph& g_;
  Feed& feed_;
  RecoveredState& state_;
  const Graph::ReplayMode mode_;
  AccessReplay access_;
  bool applying_feed_ = false;
  std::vector<Graph::ReplayOp> batch_;
  std::vector<uint64_t> batch_lsn_;
  std::vector<std::pair<WalOp, uint64_t>> feed_batch_;
};

}  // namespace

Result<RecoveredState> LoadSnapshotState(Env* env, const std::string& path,
                                         const GraphOptions& options,
                                         const FeedOptions& feed_options, SnapshotInfo* info) {
  // Version 3 holds a graph image; older versions edge lists, which GraphBuilder turns into a
  // graph (docs/snapshot-format.md). The header's version picks one before any block arrives.
  std::optional<GraphImageLoader> image;
  std::optional<GraphBuilder> builder;
  RecoveredState state;
  state.feed = std::make_unique<Feed>(feed_options, options.clock);
  // Feed blocks follow every graph block: the graph is complete when the first one arrives.
  auto finish_graph = [&]() -> Status {
    if (state.graph) return Status::OK();
    if (builder) {
      auto graph = builder->Finish();
      if (!graph.ok()) return Status(graph.status().code(), path + ": " + graph.status().message());
      state.graph = std::move(*graph);
      return Status::OK();
    }
    auto graph = image->Finish();
    if (!graph.ok()) return Status(graph.status().code(), path + ": " + graph.status().message());
    state.graph = std::move(*graph);
    return Status::OK();
  };
  SnapshotVisitor visitor;
  visitor.counts = [&](const SnapshotInfo& counts) -> Status {
    if (counts.version >= 3) return image.emplace(options).Begin(counts.entries, counts.edges);
    builder.emplace(options).Reserve(counts.edges);
    return Status::OK();
  };
  visitor.edges = [&](uint64_t follower, std::span<const SnapshotEdge> edges) {
    return builder->AddFollowing(follower, edges);
  };
  visitor.image_block = [&](std::string_view block) -> Status {
    Status s = image->AddBlock(block);
    return s.ok() ? s : Status(s.code(), path + ": " + s.message());
  };
  visitor.feed_block = [&](std::string_view block) -> Status {
    RELGRAPH_RETURN_IF_ERROR(finish_graph());
    return ApplyFeedBlock(block, *state.graph, *state.feed, state.cursors, state.epochs,
                          state.inbound);
  };
  auto read = ReadSnapshot(env, path, visitor);
  if (!read.ok()) return read.status();
  RELGRAPH_RETURN_IF_ERROR(finish_graph());
  *info = *read;
  return state;
}

Result<std::unique_ptr<Graph>> LoadSnapshotGraph(Env* env, const std::string& path,
                                                 const GraphOptions& options, SnapshotInfo* info) {
  auto state = LoadSnapshotState(env, path, options, FeedOptions{}, info);
  if (!state.ok()) return state.status();
  return std::move(state->graph);
}

Result<std::unique_ptr<Graph>> RecoverGraph(Env* env, const std::string& dir,
                                            const GraphOptions& options, bool repair_torn_tail,
                                            RecoveryInfo* info) {
  auto state = RecoverState(env, dir, options, FeedOptions{}, repair_torn_tail, info);
  if (!state.ok()) return state.status();
  return std::move(state->graph);
}

Result<RecoveredState> RecoverState(Env* env, const std::string& dir, const GraphOptions& options,
                                    const FeedOptions& feed_options, bool repair_torn_tail,
                                    RecoveryInfo* info) {
  const auto start = std::chrono::steady_clock::now();
  *info = RecoveryInfo{};
  RecoveredState state;
  state.graph = std::make_unique<Graph>(options);
  state.feed = std::make_unique<Feed>(feed_options, options.clock);
  state.feed->BeginBulkLoad();
  RELGRAPH_RETURN_IF_ERROR(LoadNewestSnapshot(env, dir, options, feed_options, &state, info));
  Graph* const graph = state.graph.get();
  Feed* const feed = state.feed.get();
  const uint64_t snapshot_lsn = info->snapshot_lsn;
  // From nothing or from a point-in-time image, the graph is exactly the state each record
  // was logged against; an older (fuzzy) snapshot needs replay's idempotent checks.
  const Graph::ReplayMode mode = info->snapshot_file.empty() || info->snapshot_version >= 3
                                     ? Graph::ReplayMode::kExact
                                     : Graph::ReplayMode::kEnsure;

  WalScanOptions scan;
  scan.truncate_torn_tail = repair_torn_tail;
  scan.from_lsn = snapshot_lsn + 1;
  ReplayHandler replay(state, mode);
  // Fault in the list memory that replay will fill, on a second core. A follow record takes
  // about 45 bytes of WAL; the estimate only sizes a prefetch that is given back if unused.
  if (auto segments = ListWalSegments(env, dir); segments.ok()) {
    uint64_t wal_bytes = 0;
    for (uint64_t no : *segments) {
      auto size = env->FileSize(JoinPath(dir, WalSegmentName(no)));
      if (size.ok()) wal_bytes += *size;
    }
    if (wal_bytes > (uint64_t{16} << 20)) graph->PrefaultEdges(wal_bytes / 45);
  }
  auto wal = ScanWal(env, dir, scan, [&](const WalRecordView& r) -> Status {
    auto op = DecodeWalRecord(r.type, r.payload);
    if (!op.ok()) return op.status();
    // Another shard's change: its inner op replays like a local one, by its ensure form
    // (graph_op() says so), and the position it reached goes up.
    if (op->is_remote()) state.inbound.Apply(op->origin, op->origin_lsn);
    replay.lsn = r.lsn;
    RELGRAPH_RETURN_IF_ERROR(DispatchRecord(*op, replay));
    return replay.full() ? replay.Flush() : Status::OK();
  });
  if (!wal.ok()) return wal.status();
  RELGRAPH_RETURN_IF_ERROR(replay.Flush());
  graph->EndPrefaultEdges();
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
  feed->EndBulkLoad();
  feed->RecomputeCelebrities(*graph);
  info->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return state;
}

}  // namespace relgraph
