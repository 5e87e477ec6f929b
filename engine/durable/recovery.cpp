#include "engine/durable/recovery.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include "engine/durable/feed_snapshot.h"
#include "engine/durable/graph_builder.h"
#include "engine/durable/graph_image_loader.h"
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
    if (loaded.status().code() == Code::kResourceExhausted) {
      // A sound snapshot this configuration cannot hold (max_users): an older one or the WAL
      // would only fail later, so say so now.
      return Status(Code::kResourceExhausted, path + ": " + loaded.status().message());
    }
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
    *state = std::move(*loaded);
    info->snapshot_lsn = *it;
    info->snapshot_file = path;
    info->snapshot_edges = read.edges;
    info->snapshot_version = read.version;
    return Status::OK();
  }
  return Status::OK();
}

Status ApplyFeedOp(const WalOp& op, Graph& g, Feed& feed) {
  switch (op.type) {
    case WalRecordType::kRemoveUser:
      feed.BeforeRemoveUser(g, op.a);
      return Status::OK();
    case WalRecordType::kPublish:
      return feed.ApplyPublish(g, op.a, op.b, op.ts, op.kind, op.evicted);
    case WalRecordType::kDeletePost:
      return feed.ApplyDeletePost(g, op.a, op.b);
    case WalRecordType::kMute:
    case WalRecordType::kUnmute:
      return feed.ApplyMute(g, op.a, op.b, op.type == WalRecordType::kMute);
    case WalRecordType::kHide:
    case WalRecordType::kUnhide:
      return feed.ApplyHide(g, op.a, op.b, op.type == WalRecordType::kHide);
    case WalRecordType::kPosts: {  // a back-fill of a remote author's posts
      auto r = feed.ReplacePosts(g, op.a, op.PostsOf(), /*live=*/false);
      return r.ok() ? Status::OK() : r.status();
    }
    case WalRecordType::kFollow:  // clears_posts(): a remote author's first fan here
    case WalRecordType::kPostsWanted: {
      auto r = feed.ReplacePosts(g, op.cleared_author(), {}, /*live=*/false);
      return r.ok() ? Status::OK() : r.status();
    }
    default:
      return Status(Code::kInternal, "not a feed record");
  }
}

}  // namespace

Status ApplyAccessOp(const WalOp& op, Graph& g, const Graph::EdgeHook& on_edge) {
  switch (op.type) {
    case WalRecordType::kBlock:
      return g.ApplyBlock(op.a, op.b, op.ts, on_edge);
    case WalRecordType::kUnblock:
      return g.ApplyUnblock(op.a, op.b);
    case WalRecordType::kSetPrivate:
      return g.ApplySetPrivate(op.a, op.flags != 0, op.ts, on_edge);
    case WalRecordType::kRequest:
      return op.by_ensure_form() ? g.ApplyRemoteRequest(op.a, op.b, op.ts)
                                 : g.ApplyRequest(op.a, op.b, op.ts);
    case WalRecordType::kApprove:
      return op.by_ensure_form()
                 ? g.ApplyRemoteApprove(op.a, op.b, op.ts, (op.flags & kApproveByRequester) != 0,
                                        on_edge)
                 : g.ApplyApprove(op.a, op.b, op.ts, on_edge);
    case WalRecordType::kReject:
      return g.ApplyRemoveRequest(op.a, op.b);
    case WalRecordType::kWithdraw:
      return g.ApplyRemoveRequest(op.b, op.a);
    default:
      return Status(Code::kInternal, "not a block or request record");
  }
}

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
      state.graph = builder->Finish();
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
  // Records are decoded as they are read and applied in batches, so that ApplyBatch can
  // overlap the cache misses of consecutive records.
  constexpr size_t kBatch = 4096;
  // Feed records go to a second batch applied right after the graph's: the two states are
  // independent (a remove_user record goes to both), and each keeps its own order.
  std::vector<Graph::ReplayOp> batch;
  std::vector<uint64_t> batch_lsn;
  std::vector<std::pair<WalOp, uint64_t>> feed_batch;
  batch.reserve(kBatch);
  auto apply = [&]() -> Status {
    Status s = graph->ApplyBatch(batch, mode);
    if (!s.ok()) {
      return Status(s.code(), "replaying LSN " +
                                  std::to_string(batch_lsn[static_cast<size_t>(s.detail())]) +
                                  ": " + s.message());
    }
    batch.clear();
    batch_lsn.clear();
    for (const auto& [op, lsn] : feed_batch) {
      Status fs = ApplyFeedOp(op, *graph, *feed);
      if (!fs.ok()) {
        return Status(fs.code(), "replaying LSN " + std::to_string(lsn) + ": " + fs.message());
      }
    }
    feed_batch.clear();
    return Status::OK();
  };
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
    // Another shard's change: its inner op replays below like a local one, by its ensure
    // form (graph_op() says so), and the position it reached goes up.
    if (op->is_remote()) state.inbound.Apply(op->origin, op->origin_lsn);
    if (op->is_graph_op()) {
      batch.push_back(op->graph_op());
      batch_lsn.push_back(r.lsn);
    }
    if (op->is_feed_op() || op->clears_posts()) {
      if (op->type == WalRecordType::kPosts || op->clears_posts()) {
        // A posts record's entries point into the payload, read only during this call; a
        // clear keeps its place among the feed's records. Both are rare: applied here.
        RELGRAPH_RETURN_IF_ERROR(apply());
        Status s = ApplyFeedOp(*op, *graph, *feed);
        if (!s.ok())
          return Status(s.code(), "replaying LSN " + std::to_string(r.lsn) + ": " + s.message());
      } else {
        feed_batch.emplace_back(*op, r.lsn);
      }
    }
    if (op->is_access_op()) {
      // They change edges too: everything before them is applied first, then they are, in
      // order. Inboxes are rebuilt after recovery, so no feed hook is needed.
      RELGRAPH_RETURN_IF_ERROR(apply());
      Status s = ApplyAccessOp(*op, *graph, nullptr);
      if (!s.ok())
        return Status(s.code(), "replaying LSN " + std::to_string(r.lsn) + ": " + s.message());
    }
    if (op->is_cursor_op()) state.cursors.Apply(*op);  // independent state
    if (op->is_epoch_op()) {
      Status s = state.epochs.Apply(op->a, op->b, r.lsn, op->ts);
      if (!s.ok())
        return Status(s.code(), "replaying LSN " + std::to_string(r.lsn) + ": " + s.message());
    }
    return batch.size() + feed_batch.size() >= kBatch ? apply() : Status::OK();
  });
  if (!wal.ok()) return wal.status();
  RELGRAPH_RETURN_IF_ERROR(apply());
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
