#include "engine/import/edge_list_import.h"

#include <algorithm>
#include <array>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "engine/graph/clock.h"
#include "engine/graph/id_map.h"
#include "engine/import/edge_rows.h"
#include "engine/mem/huge_pages.h"

namespace relgraph {
namespace {

// Why this shape: an import is a parse, a grouping by follower and a per-follower pass, and
// each splits in two, so each runs on both cores of the machine it is measured on (kWorkers).
// - Parse: a plain file is cut into one byte range per worker. The first pass only checks
//   the lines and counts rows per hash bucket of the follower; the second parses again and
//   scatters each row straight to its bucket. Parsing twice (0.2 s a pass at 10M edges) is
//   cheaper than storing 240 MB of rows and reading them back: fresh memory is the dearest
//   thing here (the kernel zeroing pages was 16% of an import). A gzip file can only be
//   read from its start: one worker parses it into memory, then both scatter.
// - Each worker then owns the followers of a run of buckets: it groups each bucket by
//   follower while the bucket is in cache (GroupBucket), checks each list, and compresses
//   blocks that it appends to the snapshot itself.
// File order within a follower, which decides duplicates and the cap, survives every step:
// within a bucket, the rows of an earlier share of the file come first, and buckets are
// sorted stably.

using namespace edge_import;  // NOLINT: the stages share one vocabulary (edge_rows.h)

// Every row by hash bucket of its follower: rows[start[b] .. start[b + 1]) holds bucket b,
// in file order; GroupBucket then makes each follower's rows contiguous, keeping that order.
struct GroupedRows {
  LargeArray<Row> rows;
  size_t size = 0;
  std::vector<size_t> start;
  int bits = 0;
  size_t BucketOf(uint64_t id) const { return relgraph::BucketOf(id, bits); }
};

Status GroupByFollower(const EdgeRows& source, GroupedRows* g) {
  g->size = source.size();
  g->bits = kBucketBits;
  const size_t buckets = size_t{1} << g->bits;
  // fill[t][b]: where worker t's next row of bucket b goes; end[t][b]: where its rows stop.
  std::vector<std::vector<size_t>> fill(kWorkers, std::vector<size_t>(buckets));
  std::vector<std::vector<size_t>> end(kWorkers, std::vector<size_t>(buckets));
  g->start.resize(buckets + 1);
  size_t at = 0;
  for (size_t b = 0; b < buckets; ++b) {
    g->start[b] = at;
    for (int t = 0; t < kWorkers; ++t) {
      fill[t][b] = at;
      at += source.counts(t)[b];
      end[t][b] = at;
    }
  }
  g->start[buckets] = at;
  g->rows = LargeArray<Row>(g->size);  // every row is written below
  std::array<Status, kWorkers> status;
  OnEachWorker([&](int t) {
    std::vector<size_t>& next = fill[t];
    const std::vector<size_t>& stop = end[t];
    bool overflow = false;
    status[t] = source.ForEach(t, [&](const Row& r) {
      const size_t b = g->BucketOf(r.follower);
      if (next[b] < stop[b]) {
        g->rows[next[b]++] = r;
      } else {
        overflow = true;
      }
    });
    if (status[t].ok() && (overflow || next != stop))
      status[t] = Status::Corruption("edge list changed while it was being imported");
  });
  for (const Status& s : status) RELGRAPH_RETURN_IF_ERROR(s);
  return Status::OK();
}

// Orders one bucket's rows into `out` so that each follower's rows are contiguous and keep
// their order: a stable scatter by the hash bits after the bucket's, then a stable sort of
// each sub-bucket by follower, all within the cache.
void GroupBucket(std::span<const Row> bucket, std::vector<Row>& out, std::vector<size_t>& start) {
  out.resize(bucket.size());
  const int sub_bits = SplitBits(bucket.size(), 16, 12);  // mostly insertion-sorted, below
  ScatterByBucket<Row>(
      size_t{1} << sub_bits,
      [&](auto visit) {
        for (const Row& r : bucket) visit(r);
      },
      [sub_bits](const Row& r) {
        return TopBits(IdMap::Hash(r.follower) << kBucketBits,
                       sub_bits);  // bits after the bucket's
      },
      out.data(), start);
  auto by_follower = [](const Row& x, const Row& y) { return x.follower < y.follower; };
  for (size_t b = 0; b + 1 < start.size(); ++b) {
    Row* const first = out.data() + start[b];
    Row* const last = out.data() + start[b + 1];
    if (last - first > 32) {
      std::stable_sort(first, last, by_follower);
      continue;
    }
    // Insertion sort, stable too, without the buffer stable_sort allocates on every call.
    for (Row* i = first + 1; i < last; ++i) {
      const Row r = *i;
      Row* j = i;
      for (; j > first && by_follower(r, j[-1]); --j) *j = j[-1];
      *j = r;
    }
  }
}

// What one worker's followers contribute.
struct WorkerOutput {
  EdgeListLoadStats stats;  // added, duplicates, over_cap
  Status status;
  LargeVector<UserId> followers;                        // those with a kept edge; distinct
  std::array<LargeVector<UserId>, kWorkers> followees;  // of kept edges, by the owning worker
};

// Checks each follower's rows in buckets [owner_begin[w], owner_begin[w + 1]) in file order
// (duplicates counted, followees past the cap skipped), puts each kept list in list order and
// appends it to the snapshot in blocks of its own.
Status ImportBuckets(GroupedRows& g, int w, const std::array<size_t, kWorkers + 1>& owner_begin,
                     uint32_t cap, SnapshotWriter& writer, WorkerOutput* out) {
  EdgeListLoadStats& stats = out->stats;
  std::vector<SnapshotEdge> kept;
  std::vector<std::pair<UserId, uint32_t>> seen;  // (followee, state), for long groups
  std::vector<UserId> over;                       // followees met past the cap, short groups
  SnapshotEdgeBlocks blocks;
  constexpr size_t kSmallGroup = 32;
  auto owner = [&](UserId u) {
    const size_t b = g.BucketOf(u);
    int o = 0;
    while (o + 1 < kWorkers && b >= owner_begin[o + 1]) ++o;
    return o;
  };
  // Address space only: pages are touched as they fill, and nothing is copied by growth.
  const size_t my_rows = g.start[owner_begin[w + 1]] - g.start[owner_begin[w]];
  out->followers.reserve(my_rows);
  for (auto& f : out->followees) f.reserve(my_rows);
  std::vector<Row> rows;
  std::vector<size_t> sub_start;
  for (size_t bucket = owner_begin[w]; bucket < owner_begin[w + 1]; ++bucket) {
    GroupBucket({g.rows.data() + g.start[bucket], g.rows.data() + g.start[bucket + 1]}, rows,
                sub_start);
    const size_t bucket_end = rows.size();
    for (size_t begin = 0; begin < bucket_end;) {
      size_t end = begin;
      while (end < bucket_end && rows[end].follower == rows[begin].follower) ++end;
      kept.clear();
      if (end - begin <= kSmallGroup) {
        // Most followers have a handful of edges: scanning what was kept beats sorting.
        over.clear();
        for (size_t i = begin; i < end; ++i) {
          const UserId f = rows[i].followee;
          auto is_f = [f](const auto& x) { return x == f; };
          if (std::any_of(kept.begin(), kept.end(),
                          [f](const SnapshotEdge& k) { return k.followee == f; })) {
            ++stats.duplicates;
          } else if (kept.size() >= cap || std::any_of(over.begin(), over.end(), is_f)) {
            if (std::none_of(over.begin(), over.end(), is_f)) over.push_back(f);
            ++stats.over_cap;
          } else {
            kept.push_back({f, rows[i].ts});
          }
        }
      } else {
        seen.clear();
        for (size_t i = begin; i < end; ++i) seen.push_back({rows[i].followee, 0});
        std::sort(seen.begin(), seen.end());
        seen.erase(std::unique(seen.begin(), seen.end(),
                               [](auto& x, auto& y) { return x.first == y.first; }),
                   seen.end());
        for (auto& s : seen) s.second = 0;  // 0 = not met yet, 1 = kept, 2 = over the cap
        for (size_t i = begin; i < end; ++i) {
          auto it = std::lower_bound(seen.begin(), seen.end(),
                                     std::pair<UserId, uint32_t>{rows[i].followee, 0});
          if (it->second == 1) {
            ++stats.duplicates;
          } else if (it->second == 2 || kept.size() >= cap) {
            it->second = 2;
            ++stats.over_cap;
          } else {
            it->second = 1;
            kept.push_back({rows[i].followee, rows[i].ts});
          }
        }
      }
      auto list_order = [](const SnapshotEdge& x, const SnapshotEdge& y) {
        return x.ts_ms != y.ts_ms ? x.ts_ms < y.ts_ms : x.followee < y.followee;
      };
      if (!std::is_sorted(kept.begin(), kept.end(), list_order))  // files are often in time order
        std::sort(kept.begin(), kept.end(), list_order);
      if (!kept.empty()) {
        out->followers.push_back(rows[begin].follower);
        for (const SnapshotEdge& k : kept) out->followees[owner(k.followee)].push_back(k.followee);
        RELGRAPH_RETURN_IF_ERROR(blocks.Add(rows[begin].follower, kept));
        if (blocks.has_finished_blocks()) RELGRAPH_RETURN_IF_ERROR(writer.AppendEdgeBlocks(blocks));
      }
      stats.added += kept.size();
      begin = end;
    }
  }
  RELGRAPH_RETURN_IF_ERROR(blocks.Finish());
  return writer.AppendEdgeBlocks(blocks);
}

// The number of distinct ids in `lists` (ids are never 0): a scatter into 1,024 buckets by
// hash, then each bucket's ids go into a small hash set that stays in cache. (Sorting each
// bucket instead was a tenth of the import.)
template <size_t N>
uint64_t CountDistinct(const std::array<const LargeVector<UserId>*, N>& lists) {
  size_t n = 0;
  for (const auto* l : lists) n += l->size();
  if (n == 0) return 0;
  const int bits = SplitBits(n, 128, kBucketBits);
  LargeArray<UserId> ids(n);
  std::vector<size_t> start;
  ScatterByBucket<UserId>(
      size_t{1} << bits,
      [&](auto visit) {
        for (const auto* l : lists)
          for (UserId u : *l) visit(u);
      },
      [bits](UserId u) { return BucketOf(u, bits); }, ids.data(), start);
  uint64_t distinct = 0;
  std::vector<UserId> set;  // open addressing, 0 = empty; at most half full
  for (size_t b = 0; b + 1 < start.size(); ++b) {
    size_t slots = 16;
    while (slots < 2 * (start[b + 1] - start[b])) slots *= 2;
    set.assign(slots, 0);
    const size_t mask = slots - 1;
    for (size_t i = start[b]; i < start[b + 1]; ++i) {
      const UserId u = ids[i];
      size_t s = IdMap::Hash(u) & mask;  // the low bits: the top ones chose the bucket
      while (set[s] != 0 && set[s] != u) s = (s + 1) & mask;
      if (set[s] == 0) {
        set[s] = u;
        ++distinct;
      }
    }
  }
  return distinct;
}

}  // namespace

Result<EdgeListImportResult> ImportEdgeListToSnapshot(Env* env, const std::string& edge_list,
                                                      const std::string& dir,
                                                      const EdgeListImportOptions& options) {
  EdgeListImportResult result;
  EdgeListLoadStats& stats = result.stats;
  const TimestampMs now = SystemClock::Default()->NowMs();

  GroupedRows grouped;
  {
    EdgeRows rows;
    RELGRAPH_RETURN_IF_ERROR(rows.Parse(edge_list, options.id_offset, now, &stats));
    RELGRAPH_RETURN_IF_ERROR(GroupByFollower(rows, &grouped));
  }

  // Each worker owns a run of buckets holding about an equal share of the rows.
  const size_t buckets = grouped.start.size() - 1;
  std::array<size_t, kWorkers + 1> owner_begin;
  owner_begin[0] = 0;
  owner_begin[kWorkers] = buckets;
  for (int w = 1; w < kWorkers; ++w) {
    owner_begin[w] =
        static_cast<size_t>(std::lower_bound(grouped.start.begin(), grouped.start.end() - 1,
                                             grouped.size * w / kWorkers) -
                            grouped.start.begin());
  }
  auto writer = SnapshotWriter::Create(env, dir, 0, now, SnapshotLayout::kEdgeList);
  if (!writer.ok()) return writer.status();
  std::array<WorkerOutput, kWorkers> outputs;
  OnEachWorker([&](int w) {
    outputs[w].status =
        ImportBuckets(grouped, w, owner_begin, options.max_following, **writer, &outputs[w]);
  });
  grouped = GroupedRows();
  for (const WorkerOutput& out : outputs) {
    RELGRAPH_RETURN_IF_ERROR(out.status);
    stats.added += out.stats.added;
    stats.duplicates += out.stats.duplicates;
    stats.over_cap += out.stats.over_cap;
  }

  // Users: worker w counts the distinct ids that hash to its buckets (its followers, already
  // distinct, and every kept followee there), while a third thread makes the file durable
  // (it mostly waits for the disk).
  std::array<uint64_t, kWorkers> users{};
  Result<SnapshotInfo> info = Status(Code::kInternal, "snapshot not finished");
  std::thread finisher([&] { info = (*writer)->Finish(); });
  OnEachWorker([&](int w) {
    std::array<const LargeVector<UserId>*, kWorkers + 1> lists;
    lists[0] = &outputs[w].followers;
    for (int t = 0; t < kWorkers; ++t) lists[t + 1] = &outputs[t].followees[w];
    users[w] = CountDistinct(lists);
  });
  finisher.join();
  if (!info.ok()) return info.status();
  result.snapshot = *info;
  for (uint64_t u : users) result.users += u;
  return result;
}

}  // namespace relgraph
