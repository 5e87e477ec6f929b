#include "engine/import/edge_rows.h"

namespace relgraph::edge_import {

Status EdgeRows::Parse(const std::string& path, uint64_t id_offset, TimestampMs now,
                       EdgeListLoadStats* stats) {
  path_ = path;
  id_offset_ = id_offset;
  now_ = now;
  auto ranges = EdgeListReader::Split(path, kWorkers);
  if (!ranges.ok()) return ranges.status();
  struct Part {
    EdgeListLoadStats stats;
    uint64_t lines = 0;
    Status status;
  };
  std::array<Part, kWorkers> parts;
  if (ranges->size() == static_cast<size_t>(kWorkers)) {
    ranges_ = *ranges;
    OnEachWorker([&](int t) {
      // Counters live on the worker's own stack until it is done: adjacent ones shared a
      // cache line between the cores, and that false sharing tripled the parse time.
      Part p;
      std::vector<uint32_t> counts(size_t{1} << kBucketBits, 0);
      size_t rows = 0;
      p.status =
          ParseRange(path, ranges_[t], id_offset, now, &p.stats, &p.lines, [&](const Row& r) {
            ++counts[BucketOf(r.follower, kBucketBits)];
            ++rows;
          });
      parts[t] = std::move(p);
      counts_[t] = std::move(counts);
      share_rows_[t] = rows;
    });
  } else {
    parts[0].status = ParseRange(path, {}, id_offset, now, &parts[0].stats, &parts[0].lines,
                                 [&](const Row& r) { rows_.push_back(r); });
    for (int t = 0; t < kWorkers; ++t)
      share_rows_[t] = rows_.size() * (t + 1) / kWorkers - rows_.size() * t / kWorkers;
  }
  uint64_t lines_before = 0;
  for (int t = 0; t < kWorkers; ++t) {
    if (!parts[t].status.ok()) {
      if (t == 0) return parts[t].status;
      // Its lines were numbered from the range's start: parse it again, numbered right.
      // (Errors are rare; the second parse keeps line arithmetic off the fast path.)
      EdgeListRange numbered = ranges_[t];
      numbered.first_line = lines_before;
      EdgeListLoadStats ignored;
      uint64_t lines;
      return ParseRange(path, numbered, id_offset, now, &ignored, &lines, [](const Row&) {});
    }
    lines_before += parts[t].lines;
    stats->edges_read += parts[t].stats.edges_read;
    stats->self_loops += parts[t].stats.self_loops;
    size_ += share_rows_[t];
  }
  if (ranges_.empty()) {  // count each share of the rows in memory per bucket
    OnEachWorker([&](int t) {
      std::vector<uint32_t> counts(size_t{1} << kBucketBits, 0);
      Status ignored =
          ForEach(t, [&](const Row& r) { ++counts[BucketOf(r.follower, kBucketBits)]; });
      counts_[t] = std::move(counts);
    });
  }
  return Status::OK();
}

}  // namespace relgraph::edge_import
