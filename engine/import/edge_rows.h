// The first stage of an edge-list import (edge_list_import.cpp says why it has this shape):
// the list's rows, parsed on kWorkers threads into shares in file order and counted per hash
// bucket of the follower, with the helpers the later stages share (huge-page arrays, bucket
// bits, a stable scatter by bucket).
//
// Thread-safety: EdgeRows is filled by Parse on one thread (which starts the workers); its
// shares may then be visited concurrently, one thread per share.
#pragma once

#include <array>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/graph/id_map.h"
#include "engine/import/edge_list.h"
#include "engine/mem/huge_pages.h"

namespace relgraph::edge_import {

inline constexpr int kWorkers =
    2;  // the import runs on both cores of the machine it is measured on

struct Row {
  uint64_t follower;
  uint64_t followee;
  int64_t ts;
};

// Runs work(0) on this thread and work(1) .. work(kWorkers - 1) on helpers; waits for all.
template <typename Work>
void OnEachWorker(Work work) {
  std::array<std::thread, kWorkers - 1> helpers;
  for (int t = 1; t < kWorkers; ++t) helpers[t - 1] = std::thread([&work, t] { work(t); });
  work(0);
  for (auto& h : helpers) h.join();
}

// Large arrays on huge pages (512 times fewer page faults). LargeVector for ones that grow;
// LargeArray, a fixed size left uninitialized, where a vector would zero memory on one core
// only for every element to be overwritten.
template <typename T>
using LargeVector = std::vector<T, HugePageAllocator<T>>;

template <typename T>
class LargeArray {
 public:
  LargeArray() = default;
  explicit LargeArray(size_t n) : data_(static_cast<T*>(AllocateLarge(n * sizeof(T)))), n_(n) {}
  LargeArray(LargeArray&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  LargeArray& operator=(LargeArray&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(n_, o.n_);
    return *this;
  }
  ~LargeArray() { FreeLarge(data_, n_ * sizeof(T)); }
  T* data() { return data_; }
  T& operator[](size_t i) { return data_[i]; }

 private:
  T* data_ = nullptr;
  size_t n_ = 0;
};

// Rows are grouped by follower in two levels of hash buckets (IdMap::Hash's top bits).
// - kBucketBits: the rows are scattered into 1,024 buckets, so the scatter's 1,024 write
//   streams stay in cache. (At 2^18 buckets, every row written was a cache miss, and the
//   scatter took three times as long as parsing.)
// - Then each bucket, about 10,000 rows at 10M edges, is split by the next bits of the hash
//   into sub-buckets of about 16 rows while it is in cache, and each sub-bucket is sorted.
constexpr int kBucketBits = 10;
// The top `bits` of h (0 when bits is 0: a shift by 64 is undefined).
inline size_t TopBits(uint64_t h, int bits) {
  return bits == 0 ? 0 : h >> (64 - bits);
}
inline size_t BucketOf(uint64_t id, int bits) {
  return TopBits(IdMap::Hash(id), bits);
}
// Bits for splitting n keys into buckets of about `per_bucket`, at most 2^max_bits buckets.
inline int SplitBits(size_t n, size_t per_bucket, int max_bits) {
  int bits = 0;
  while (bits < max_bits && (n >> bits) > per_bucket) ++bits;
  return bits;
}

// Scatters the items that for_each(visit) visits into `out`, stably, by bucket_of(item) in
// [0, buckets): afterwards out[start[b] .. start[b + 1]) holds bucket b, in visiting order.
// REQUIRES: `out` has room for every item.
template <typename T, typename ForEach, typename BucketOfFn>
void ScatterByBucket(size_t buckets, ForEach for_each, BucketOfFn bucket_of, T* out,
                     std::vector<size_t>& start) {
  start.assign(buckets + 1, 0);
  for_each([&](const T& x) { ++start[bucket_of(x) + 1]; });
  for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  std::vector<size_t> fill(start.begin(), start.end() - 1);
  for_each([&](const T& x) { out[fill[bucket_of(x)]++] = x; });
}

// Calls row(Row) for each edge of `range` that is not a self-loop, counting edges_read and
// self_loops into *stats; returns the range's line count in *lines.
template <typename RowFn>
Status ParseRange(const std::string& path, const EdgeListRange& range, uint64_t id_offset,
                  TimestampMs now, EdgeListLoadStats* stats, uint64_t* lines, RowFn row) {
  auto reader = EdgeListReader::Open(path, range);
  if (!reader.ok()) return reader.status();
  EdgeRecord e;
  while ((*reader)->Next(&e)) {
    ++stats->edges_read;
    if (e.follower == e.followee) {
      ++stats->self_loops;
      continue;
    }
    UserId a, b;
    RELGRAPH_RETURN_IF_ERROR(OffsetEdgeIds(path, e, id_offset, &a, &b));
    row(Row{a, b, e.ts.value_or(now)});
  }
  *lines = (*reader)->lines();
  return (*reader)->status();
}

// The edge list's rows, in kWorkers shares in file order; each share can be visited again.
class EdgeRows {
 public:
  // Parses the whole list (on every worker, when it is plain), counting the rows of each
  // share per bucket of the follower (counts). Errors name the first bad line, numbered from
  // the file's start.
  Status Parse(const std::string& path, uint64_t id_offset, TimestampMs now,
               EdgeListLoadStats* stats);
  size_t size() const { return size_; }
  const std::vector<uint32_t>& counts(int share) const { return counts_[share]; }
  // Calls row(const Row&) for each row of `share`, in file order. A plain file is parsed again:
  // kCorruption if it no longer gives the rows Parse counted (the file changed meanwhile).
  template <typename RowFn>
  Status ForEach(int share, RowFn row) const;

 private:
  std::string path_;
  uint64_t id_offset_ = 0;
  TimestampMs now_ = 0;
  std::vector<EdgeListRange> ranges_;  // kWorkers of them: parsed again; else rows_ holds all
  LargeVector<Row> rows_;
  std::array<size_t, kWorkers> share_rows_{};
  std::array<std::vector<uint32_t>, kWorkers> counts_;
  size_t size_ = 0;
};

template <typename RowFn>
inline Status EdgeRows::ForEach(int share, RowFn row) const {
  if (ranges_.empty()) {
    const size_t begin = rows_.size() * share / kWorkers;
    for (size_t i = begin; i < begin + share_rows_[share]; ++i) row(rows_[i]);
    return Status::OK();
  }
  EdgeListLoadStats stats;
  uint64_t lines, rows = 0;
  RELGRAPH_RETURN_IF_ERROR(
      ParseRange(path_, ranges_[share], id_offset_, now_, &stats, &lines, [&](const Row& r) {
        if (++rows <= share_rows_[share]) row(r);
      }));
  if (rows != share_rows_[share])
    return Status::Corruption(path_ + " changed while it was being imported");
  return Status::OK();
}

}  // namespace relgraph::edge_import
