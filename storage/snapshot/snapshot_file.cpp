#include "storage/snapshot/snapshot_file.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include <cstring>
#include <vector>

#include "storage/coding.h"
#include "storage/env/file_names.h"
#include "storage/snapshot/block_read_ahead.h"
#include "storage/snapshot/block_write_behind.h"

namespace relgraph {
namespace {

constexpr char kHeaderMagic[8] = {'R', 'G', 'S', 'N', 'A', 'P', '\0', '\1'};
// The footer's magic is "RGSNEND" followed by the version's number as one byte.
constexpr char kFooterMagicStem[7] = {'R', 'G', 'S', 'N', 'E', 'N', 'D'};
// Version 4 is version 3 whose feed blocks may hold the graph's blocks, requests and private
// marks; version 5 is version 4 with its image's lists bit-packed (records opaque here either
// way): a build that reads only up to the one before refuses each by its version.
constexpr uint32_t kEdgeListVersion = 2, kFirstImageVersion = 3, kImageVersion = 5;
constexpr size_t kHeaderBytes = 36, kBlockHeaderBytes = 16;
constexpr size_t kFooterBytesV1 = 40, kFooterBytes = 48;
constexpr size_t kEntryHeaderBytes = 12, kEdgeBytes = 16;
constexpr size_t kTargetBlockRaw = 1u << 20;

// Appends `follower`'s edges to the version-2 block in `raw`, as one entry or, for a list
// longer than a block's room, several; calls flush() to empty `raw` whenever it is full.
template <typename Flush>
Status AppendEdgeEntries(std::string& raw, uint64_t follower, std::span<const SnapshotEdge> edges,
                         uint64_t* entries, uint64_t* edge_count, Flush flush) {
  while (!edges.empty()) {
    if (raw.size() + kEntryHeaderBytes + kEdgeBytes > kTargetBlockRaw)
      RELGRAPH_RETURN_IF_ERROR(flush());
    const size_t room = (kTargetBlockRaw - raw.size() - kEntryHeaderBytes) / kEdgeBytes;
    const size_t n = std::min(room, edges.size());
    const size_t at = raw.size();
    raw.resize(at + kEntryHeaderBytes + n * kEdgeBytes);  // one resize, not 2n + 2 appends
    char* p = raw.data() + at;
    EncodeFixed64(p, follower);
    EncodeFixed32(p + 8, static_cast<uint32_t>(n));
    p += kEntryHeaderBytes;
    for (size_t i = 0; i < n; ++i, p += kEdgeBytes) {
      EncodeFixed64(p, edges[i].followee);
      EncodeFixed64(p + 8, static_cast<uint64_t>(edges[i].ts_ms));
    }
    ++*entries;
    *edge_count += n;
    edges = edges.subspan(n);
  }
  return Status::OK();
}

}  // namespace

SnapshotWriter::SnapshotWriter(Env* env, std::string dir, std::string temp, std::string final_path)
    : env_(env),
      dir_(std::move(dir)),
      temp_path_(std::move(temp)),
      final_path_(std::move(final_path)) {}

SnapshotWriter::~SnapshotWriter() {
  write_behind_.reset();  // stops appending before the file goes
  if (finished_) return;
  if (file_) file_->Close().IgnoreError();
  env_->RemoveFile(temp_path_).IgnoreError();
}

Result<std::unique_ptr<SnapshotWriter>> SnapshotWriter::Create(Env* env, const std::string& dir,
                                                               uint64_t lsn, int64_t created_ms,
                                                               SnapshotLayout layout,
                                                               SnapshotCompression compression) {
  std::unique_ptr<SnapshotWriter> w(new SnapshotWriter(
      env, dir, JoinPath(dir, SnapshotTempName(lsn)), JoinPath(dir, SnapshotName(lsn))));
  auto f = env->OpenWritable(w->temp_path_, /*truncate=*/true);
  if (!f.ok()) return f.status();
  w->file_ = std::move(*f);
  w->info_.lsn = lsn;
  w->info_.created_ms = created_ms;
  w->layout_ = layout;
  w->info_.version = layout == SnapshotLayout::kGraphImage ? kImageVersion : kEdgeListVersion;
  std::string header(kHeaderMagic, sizeof kHeaderMagic);
  PutFixed32(&header, w->info_.version);
  PutFixed64(&header, lsn);
  PutFixed64(&header, static_cast<uint64_t>(created_ms));
  PutFixed64(&header, XXH3_64bits(header.data(), header.size()));
  RELGRAPH_RETURN_IF_ERROR(w->file_->Append(header));
  if (compression == SnapshotCompression::kBackground)
    w->write_behind_ = std::make_unique<BlockWriteBehind>(w->file_.get());
  return w;
}

Status SnapshotWriter::AddRecord(std::string_view record) {
  if (record.size() > kSnapshotMaxRecord) {
    return Status::InvalidArgument("snapshot record of " + std::to_string(record.size()) +
                                   " bytes is over 1 MiB");
  }
  if (raw_.size() + record.size() > kTargetBlockRaw) RELGRAPH_RETURN_IF_ERROR(FlushBlock());
  raw_.append(record);
  return Status::OK();
}

Status SnapshotWriter::AddFeedRecord(std::string_view record) {
  if (!in_feed_) {
    RELGRAPH_RETURN_IF_ERROR(FlushBlock());
    in_feed_ = true;
  }
  return AddRecord(record);
}

Status SnapshotWriter::AddImageRecord(std::string_view record) {
  if (layout_ != SnapshotLayout::kGraphImage)
    return Status(Code::kInternal, "image record in an edge-list snapshot");
  if (in_feed_) return Status(Code::kInternal, "snapshot image added after feed records");
  return AddRecord(record);
}

Status SnapshotWriter::Add(uint64_t follower, std::span<const SnapshotEdge> edges) {
  if (layout_ != SnapshotLayout::kEdgeList)
    return Status(Code::kInternal, "edge-list entry in an image snapshot");
  if (in_feed_) return Status(Code::kInternal, "snapshot edges added after feed records");
  return AppendEdgeEntries(raw_, follower, edges, &info_.entries, &info_.edges,
                           [this] { return FlushBlock(); });
}

Status SnapshotWriter::AppendEdgeBlocks(SnapshotEdgeBlocks& blocks) {
  std::lock_guard lock(append_mu_);
  if (layout_ != SnapshotLayout::kEdgeList || in_feed_ || write_behind_ || !raw_.empty())
    return Status(Code::kInternal, "edge blocks appended beside another way of adding edges");
  for (const std::string& block : blocks.framed_) RELGRAPH_RETURN_IF_ERROR(file_->Append(block));
  info_.blocks += blocks.framed_.size();
  info_.entries += std::exchange(blocks.entries_, 0);
  info_.edges += std::exchange(blocks.edges_, 0);
  info_.raw_bytes += std::exchange(blocks.raw_bytes_, 0);
  blocks.framed_.clear();
  return Status::OK();
}

Status SnapshotEdgeBlocks::Add(uint64_t follower, std::span<const SnapshotEdge> edges) {
  const uint64_t entries_before = entries_;
  RELGRAPH_RETURN_IF_ERROR(AppendEdgeEntries(raw_, follower, edges, &entries_, &edges_,
                                             [this] { return FlushBlock(); }));
  // A list split into several entries spans blocks, and its tail is in raw_: finish that too,
  // so the finished blocks hold the whole list (such lists are rare; little space is lost).
  if (entries_ - entries_before > 1) return FlushBlock();
  return Status::OK();
}

Status SnapshotEdgeBlocks::FlushBlock() {
  if (raw_.empty()) return Status::OK();
  raw_bytes_ += raw_.size();
  RELGRAPH_RETURN_IF_ERROR(FrameSnapshotBlock(raw_, &framed_.emplace_back()));
  raw_.clear();
  return Status::OK();
}

Status SnapshotWriter::FlushBlock() {
  if (raw_.empty()) return Status::OK();
  info_.raw_bytes += raw_.size();
  ++info_.blocks;
  if (in_feed_) ++info_.feed_blocks;
  if (write_behind_) {
    Status s = write_behind_->Write(std::move(raw_));
    raw_ = std::string();
    return s;
  }
  std::string block;
  RELGRAPH_RETURN_IF_ERROR(FrameSnapshotBlock(raw_, &block));
  raw_.clear();
  return file_->Append(block);
}

Result<SnapshotInfo> SnapshotWriter::Finish() {
  RELGRAPH_RETURN_IF_ERROR(FlushBlock());
  if (write_behind_) {
    RELGRAPH_RETURN_IF_ERROR(write_behind_->Drain());
    write_behind_.reset();  // the file is ours again
  }
  std::string footer(kFooterMagicStem, sizeof kFooterMagicStem);
  footer.push_back(static_cast<char>(info_.version));
  PutFixed64(&footer, info_.blocks);
  PutFixed64(&footer, info_.entries);
  PutFixed64(&footer, info_.edges);
  PutFixed64(&footer, info_.feed_blocks);
  PutFixed64(&footer, XXH3_64bits(footer.data(), footer.size()));
  RELGRAPH_RETURN_IF_ERROR(file_->Append(footer));
  RELGRAPH_RETURN_IF_ERROR(file_->Sync());
  info_.file_bytes = file_->Size();
  RELGRAPH_RETURN_IF_ERROR(file_->Close());
  RELGRAPH_RETURN_IF_ERROR(env_->Rename(temp_path_, final_path_));
  RELGRAPH_RETURN_IF_ERROR(env_->SyncDir(dir_));
  finished_ = true;
  return info_;
}

Result<SnapshotInfo> ReadSnapshot(Env* env, const std::string& path,
                                  const SnapshotVisitor& visitor) {
  // Read a block at a time into reused buffers: reading a 200 MiB file whole cost more
  // (allocation, page faults, a cold copy) than checking and decompressing it.
  auto file = env->OpenRandomAccess(path);
  if (!file.ok()) return file.status();
  const uint64_t file_bytes = (*file)->Size();
  auto bad = [&](uint64_t offset, const std::string& what) {
    return Status::Corruption("snapshot " + path + " at offset " + std::to_string(offset) + ": " +
                              what);
  };
  SnapshotInfo info;
  info.file_bytes = file_bytes;
  if (file_bytes < kHeaderBytes + kFooterBytesV1) return bad(0, "file too short");
  char header[kHeaderBytes];
  RELGRAPH_RETURN_IF_ERROR((*file)->ReadAt(0, kHeaderBytes, header));
  if (std::memcmp(header, kHeaderMagic, 8) != 0) return bad(0, "not a relgraph snapshot (magic)");
  info.version = DecodeFixed32(header + 8);
  if (info.version < 1 || info.version > kImageVersion) {
    return bad(
        8, "unsupported version " + std::to_string(info.version) + " (this build reads 1 to 5)");
  }
  const bool image = info.version >= kFirstImageVersion;
  const size_t footer_bytes = info.version == 1 ? kFooterBytesV1 : kFooterBytes;
  if (file_bytes < kHeaderBytes + footer_bytes) return bad(0, "file too short");
  if (DecodeFixed64(header + 28) != XXH3_64bits(header, 28))
    return bad(0, "header checksum mismatch");
  info.lsn = DecodeFixed64(header + 12);
  info.created_ms = static_cast<int64_t>(DecodeFixed64(header + 20));

  const uint64_t footer_at = file_bytes - footer_bytes;
  char footer[kFooterBytes];
  RELGRAPH_RETURN_IF_ERROR((*file)->ReadAt(footer_at, footer_bytes, footer));
  if (std::memcmp(footer, kFooterMagicStem, 7) != 0 ||
      static_cast<uint8_t>(footer[7]) != info.version) {
    return bad(footer_at, "footer missing (file cut short?)");
  }
  if (DecodeFixed64(footer + footer_bytes - 8) != XXH3_64bits(footer, footer_bytes - 8))
    return bad(footer_at, "footer checksum mismatch");
  const uint64_t want_blocks = DecodeFixed64(footer + 8);
  const uint64_t want_entries = DecodeFixed64(footer + 16);
  const uint64_t want_edges = DecodeFixed64(footer + 24);
  const uint64_t want_feed_blocks = info.version == 1 ? 0 : DecodeFixed64(footer + 32);
  if (want_feed_blocks > want_blocks) return bad(footer_at, "more feed blocks than blocks");
  const uint64_t edge_blocks = want_blocks - want_feed_blocks;
  if (visitor.counts) {
    SnapshotInfo counts = info;
    counts.blocks = want_blocks;
    counts.entries = want_entries;
    counts.edges = want_edges;
    counts.feed_blocks = want_feed_blocks;
    RELGRAPH_RETURN_IF_ERROR(visitor.counts(counts));
  }

  BlockReadAhead blocks(file->get(), path, kHeaderBytes, footer_at);
  BlockReadAhead::Block block;
  std::vector<SnapshotEdge> edges;
  for (;;) {
    bool done = false;
    RELGRAPH_RETURN_IF_ERROR(blocks.Next(&block, &done));
    if (done) break;
    const std::string& raw = block.raw;
    const uint64_t pos = block.offset;
    const auto raw_len = raw.size();
    const bool feed = info.blocks >= edge_blocks;
    if (feed || image) {  // the engine parses these
      const auto& fn = feed ? visitor.feed_block : visitor.image_block;
      if (fn) RELGRAPH_RETURN_IF_ERROR(fn(raw));
      info.raw_bytes += raw_len;
      ++info.blocks;
      if (feed) ++info.feed_blocks;
      continue;
    }
    // Entries.
    size_t r = 0;
    while (r < raw.size()) {
      if (raw.size() - r < kEntryHeaderBytes) return bad(pos, "entry cut short inside a block");
      const uint64_t follower = DecodeFixed64(raw.data() + r);
      const uint32_t count = DecodeFixed32(raw.data() + r + 8);
      r += kEntryHeaderBytes;
      if ((raw.size() - r) / kEdgeBytes < count) return bad(pos, "entry longer than its block");
      edges.resize(count);
      for (uint32_t i = 0; i < count; ++i, r += kEdgeBytes) {
        edges[i] = {DecodeFixed64(raw.data() + r),
                    static_cast<int64_t>(DecodeFixed64(raw.data() + r + 8))};
      }
      ++info.entries;
      info.edges += count;
      if (visitor.edges) RELGRAPH_RETURN_IF_ERROR(visitor.edges(follower, edges));
    }
    info.raw_bytes += raw_len;
    ++info.blocks;
  }
  if (image) {  // storage cannot count users and edges inside the engine's records
    info.entries = want_entries;
    info.edges = want_edges;
  }
  if (info.blocks != want_blocks || info.entries != want_entries || info.edges != want_edges ||
      info.feed_blocks != want_feed_blocks) {
    return bad(footer_at, "footer counts (" + std::to_string(want_blocks) + " blocks, " +
                              std::to_string(want_edges) + " edges) differ from the file's (" +
                              std::to_string(info.blocks) + ", " + std::to_string(info.edges) +
                              ")");
  }
  return info;
}

}  // namespace relgraph
