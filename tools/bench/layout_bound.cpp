#include "tools/bench/layout_bound.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <vector>

#include "engine/graph/id_map.h"
#include "engine/graph/short_run.h"

namespace relgraph::bench {
namespace {

double Log2Factorial(double n) {
  return std::lgamma(n + 1) / std::log(2.0);
}

constexpr double kPlainEntryBytes = 10;
constexpr uint32_t kPackedMinEntries = 8;

// A list under kPackedMinEntries as the lists keep it: one entry plain, 2 to 7 a short run
// (engine/graph/short_run.h) in whole 4-byte words.
double SmallListBytes(const EdgeEntry* entries, uint32_t n) {
  if (n < kShortRunMin) return kPlainEntryBytes * n;
  uint64_t buffer[kShortRunMaxWords64];
  return 4.0 * EncodeShortRun(entries, n, buffer);
}

// Bits of the time distances in entries [from, to): the width of the run's span.
double TimeBits(const EdgeEntry* entries, uint32_t from, uint32_t to) {
  return std::bit_width(static_cast<uint64_t>(EntryTs(entries[to - 1]) - EntryTs(entries[from])));
}

// Bytes of entries [from, to) packed as peer, kMutual bit and time distance each.
double PackedRunBytes(const EdgeEntry* entries, uint32_t from, uint32_t to) {
  uint32_t largest = 0;
  for (uint32_t i = from; i < to; ++i)
    largest = std::max<uint32_t>(largest, uint32_t{entries[i].peer});
  const double width = std::bit_width(largest) + 1 + TimeBits(entries, from, to);
  return std::ceil((to - from) * width / 8);
}

// Bits of the times of entries [from, to) coded as gaps from the entry before, in groups: each
// group an anchor (its first time's distance from entries[from]'s, at the width of the whole
// span) and then, by `coding`, its other gaps at the group's widest gap behind a 6-bit width,
// or each gap as a varint of 4-bit pieces (3 value bits and a continuation bit).
double GapTimeBits(const EdgeEntry* entries, uint32_t from, uint32_t to, GapCoding coding) {
  const double anchor = TimeBits(entries, from, to);
  double bits = 0;
  for (uint32_t g = from; g < to; g += coding.group) {
    const uint32_t end = std::min(to, g + coding.group);
    uint64_t widest = 0;
    double varint_bits = 0;
    for (uint32_t i = g + 1; i < end; ++i) {
      const auto gap = static_cast<uint64_t>(EntryTs(entries[i]) - EntryTs(entries[i - 1]));
      widest = std::max(widest, gap);
      varint_bits += 4.0 * std::max<uint64_t>(1, (std::bit_width(gap) + 2) / 3);
    }
    bits +=
        anchor + (coding.varint ? varint_bits
                                : 6 + static_cast<double>(end - g - 1) * std::bit_width(widest));
  }
  return bits;
}

// PackedRunBytes with the times coded as GapTimeBits.
double GapRunBytes(const EdgeEntry* entries, uint32_t from, uint32_t to, GapCoding coding) {
  uint32_t largest = 0;
  for (uint32_t i = from; i < to; ++i)
    largest = std::max<uint32_t>(largest, uint32_t{entries[i].peer});
  const double bits =
      (to - from) * (std::bit_width(largest) + 1.0) + GapTimeBits(entries, from, to, coding);
  return std::ceil(bits / 8);
}

}  // namespace

double GapFollowingBytes(const EdgeEntry* entries, uint32_t n, GapCoding coding) {
  const double plain = kPlainEntryBytes * n;
  if (n < kPackedMinEntries) return SmallListBytes(entries, n);
  const double packed = 4.0 * n + std::ceil((n + GapTimeBits(entries, 0, n, coding)) / 8) + 8;
  return std::min(plain, packed);
}

double GapFanBytes(const EdgeEntry* entries, uint32_t n, GapCoding coding) {
  const double plain = kPlainEntryBytes * n;
  if (n < kPackedMinEntries) return SmallListBytes(entries, n);
  if (n <= 256) return std::min(plain, 8 + GapRunBytes(entries, 0, n, coding));
  double bytes = 0;
  for (uint32_t at = 0; at < n; at += 128) {
    bytes += 32 + GapRunBytes(entries, at, std::min(n, at + 128), coding);
  }
  return std::min(plain, bytes);
}

double ListBits(uint64_t k, uint64_t span, uint64_t others) {
  if (k == 0) return 0;
  const auto kd = static_cast<double>(k);
  const auto s = static_cast<double>(span);
  const auto u = static_cast<double>(others);
  const double times = Log2Factorial(s + kd - 1) - Log2Factorial(kd) - Log2Factorial(s - 1);
  const double peers = Log2Factorial(u) - Log2Factorial(u - kd);
  return times + peers;
}

double PackedFollowingBytes(const EdgeEntry* entries, uint32_t n) {
  const double plain = kPlainEntryBytes * n;
  if (n < kPackedMinEntries) return SmallListBytes(entries, n);
  const double packed = 4.0 * n + std::ceil(n * (1 + TimeBits(entries, 0, n)) / 8) + 8;
  return std::min(plain, packed);
}

double PackedFanBytes(const EdgeEntry* entries, uint32_t n) {
  const double plain = kPlainEntryBytes * n;
  if (n < kPackedMinEntries) return SmallListBytes(entries, n);
  if (n <= 256) return std::min(plain, 8 + PackedRunBytes(entries, 0, n));
  double bytes = 0;
  for (uint32_t at = 0; at < n; at += 128) {
    bytes += 32 + PackedRunBytes(entries, at, std::min(n, at + 128));
  }
  return std::min(plain, bytes);
}

LayoutBound ComputeLayoutBound(const Graph& graph) {
  LayoutBound b;
  b.users = graph.user_count();
  b.edges = graph.edge_count();
  b.time_unit_ms = graph.time().unit_ms();
  if (b.edges == 0) return b;
  // Every edge is in one following list, each list in time order: their ends give the span.
  b.first_ts = INT64_MAX;
  b.last_ts = INT64_MIN;
  for (size_t i = 0; i < b.users; ++i) {
    const FollowingList& following = graph.FollowingOf(static_cast<InternalId>(i));
    if (following.empty()) continue;
    b.first_ts = std::min(b.first_ts, following.TsAt(0));
    b.last_ts = std::max(b.last_ts, following.TsAt(following.size() - 1));
  }
  const auto span = static_cast<uint64_t>(b.last_ts - b.first_ts) + 1;
  std::vector<EdgeEntry> list;
  for (size_t i = 0; i < b.users; ++i) {
    const auto id = static_cast<InternalId>(i);
    const FollowingList& following = graph.FollowingOf(id);
    b.following_bits += ListBits(following.size(), span, b.users - 1);
    b.fan_bits += ListBits(graph.FanCountOf(id), span, b.users - 1);
    list.resize(following.size());
    following.Decode(list.data());
    b.following_packed_bytes += PackedFollowingBytes(list.data(), following.size());
    for (size_t c = 0; c < kGapCodings.size(); ++c) {
      b.following_gap_bytes[c] += GapFollowingBytes(list.data(), following.size(), kGapCodings[c]);
    }
    const uint32_t fans = graph.FanCountOf(id);
    list.resize(fans);
    const uint32_t got = graph.FansBefore(id, std::nullopt, fans, list.data());  // newest first
    std::reverse(list.begin(), list.begin() + got);
    b.fan_packed_bytes += PackedFanBytes(list.data(), got);
    for (size_t c = 0; c < kGapCodings.size(); ++c) {
      b.fan_gap_bytes[c] += GapFanBytes(list.data(), got, kGapCodings[c]);
    }
  }
  b.mutual_bits = 2 * static_cast<double>(b.edges);
  // log2 C(2^64, U) = log2(2^64! / (2^64 - U)!) - log2 U!, and for U far below 2^64 the first
  // term is U * 64 to well within a bit per user.
  const auto users = static_cast<double>(b.users);
  b.id_bits = users * 64 - Log2Factorial(users);
  return b;
}

}  // namespace relgraph::bench
