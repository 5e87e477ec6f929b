#include "engine/edge_list_import.h"

#include <algorithm>
#include <vector>

#include "engine/clock.h"
#include "engine/id_map.h"

namespace relgraph {
namespace {

struct Row {
  uint64_t follower;
  uint64_t followee;
  int64_t ts;
};

// Groups equal keys together, keeping the input order among equal keys. Grouping is all the
// import needs (a snapshot may list followers in any order), so instead of an LSD radix sort
// (four scatter passes over 64-bit keys) it takes one stable scatter into buckets by the
// key's hash (IdMap::Hash), each about 128 elements, then stable-sorts each bucket by key while it
// is in cache.
template <typename T, typename Key>
void GroupByKey(std::vector<T>& v, Key key) {
  if (v.size() < 2) return;
  int bits = 1;
  while (bits < 20 && (v.size() >> bits) > 128) ++bits;
  const int shift = 64 - bits;
  std::vector<uint32_t> start((size_t{1} << bits) + 1, 0);
  for (const T& x : v) ++start[(IdMap::Hash(key(x)) >> shift) + 1];
  for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  std::vector<T> out(v.size());
  {
    std::vector<uint32_t> fill(start.begin(), start.end() - 1);
    for (const T& x : v) out[fill[IdMap::Hash(key(x)) >> shift]++] = x;
  }
  for (size_t b = 0; b + 1 < start.size(); ++b) {
    std::stable_sort(out.begin() + start[b], out.begin() + start[b + 1],
                     [&](const T& x, const T& y) { return key(x) < key(y); });
  }
  v.swap(out);
}

}  // namespace

Result<EdgeListImportResult> ImportEdgeListToSnapshot(Env* env, const std::string& edge_list,
                                                      const std::string& dir,
                                                      const EdgeListImportOptions& options) {
  EdgeListImportResult result;
  EdgeListLoadStats& stats = result.stats;

  // ---- parse ------------------------------------------------------------------------------------
  auto reader = EdgeListReader::Open(edge_list);
  if (!reader.ok()) return reader.status();
  const TimestampMs now = SystemClock::Default()->NowMs();
  std::vector<Row> rows;
  EdgeRecord e;
  while ((*reader)->Next(&e)) {
    ++stats.edges_read;
    if (e.follower == e.followee) {
      ++stats.self_loops;
      continue;
    }
    UserId a, b;
    RELGRAPH_RETURN_IF_ERROR(OffsetEdgeIds(edge_list, e, options.id_offset, &a, &b));
    rows.push_back({a, b, e.ts.value_or(now)});
  }
  if (!(*reader)->status().ok()) return (*reader)->status();

  // ---- group by follower (stable: file order kept within a follower) ---------------------------
  GroupByKey(rows, [](const Row& r) { return r.follower; });

  // ---- per follower: duplicates, cap, list order; stream into the snapshot ----------------------
  auto writer = SnapshotWriter::Create(env, dir, 0, now, SnapshotLayout::kEdgeList,
                                       SnapshotCompression::kBackground);
  if (!writer.ok()) return writer.status();
  std::vector<UserId> users;  // every id of a kept edge, counted once sorted
  std::vector<SnapshotEdge> kept;
  std::vector<std::pair<UserId, uint32_t>> seen;  // (followee, state), for long groups
  std::vector<UserId> over;                       // followees met past the cap, short groups
  constexpr size_t kSmallGroup = 32;
  for (size_t begin = 0; begin < rows.size();) {
    size_t end = begin;
    while (end < rows.size() && rows[end].follower == rows[begin].follower) ++end;
    kept.clear();
    const uint32_t cap = options.max_following;
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
      users.push_back(rows[begin].follower);
      for (const SnapshotEdge& k : kept) users.push_back(k.followee);
      RELGRAPH_RETURN_IF_ERROR((*writer)->Add(rows[begin].follower, kept));
    }
    stats.added += kept.size();
    begin = end;
  }
  auto info = (*writer)->Finish();
  if (!info.ok()) return info.status();
  result.snapshot = *info;
  GroupByKey(users, [](UserId u) { return u; });
  result.users = static_cast<uint64_t>(std::unique(users.begin(), users.end()) - users.begin());
  return result;
}

}  // namespace relgraph
