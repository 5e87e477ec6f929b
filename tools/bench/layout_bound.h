// LayoutBound: how few bytes per edge any encoding of a graph can take, counted from the graph
// itself, so that the memory and snapshot targets can be read against what the data allows.
//
// Why this design: the size of a follow graph is bounded below by its information, and the
// follow times carry most of it (millisecond times spread over years). The count is the
// standard one for sets: a list of k entries whose times lie in a span of S milliseconds holds
// one multiset of k times, log2 C(S + k - 1, k) bits; its peers, in that order, are an
// arrangement of k of the other U - 1 users, log2((U-1)! / (U-1-k)!) bits; and the external
// ids are a set of U 64-bit numbers, log2 C(2^64, U) bits. No encoding can do better on
// average, whatever its access speed; a random-access layout sits above it (fixed-width fields,
// list headers, per-user records, hash slots, allocator slack).
//
// Two figures: the edges once (each follower's list with its times: what a snapshot must
// hold, the fan lists being derivable), and both directions each with its own times (what a
// layout that reads following and fan pages without a join must hold), plus one bit per entry
// of each side for the kMutual mark such a layout keeps.
//
// Beside the bound, what a bit-packed layout of the same lists would take (PackedFollowingBytes,
// PackedFanBytes), and the same with the times coded as gaps (GapFollowingBytes, GapFanBytes):
// the estimates that order the next memory steps in docs/design.md.
//
// Thread-safety: reads the graph; the caller keeps it from changing meanwhile.
#pragma once

#include <array>
#include <cstdint>

#include "engine/graph/graph.h"

namespace relgraph::bench {

// How an estimate codes a list's times as gaps (GapTimeBits): in groups of `group` entries,
// at the group's widest gap, or as varints.
struct GapCoding {
  uint32_t group = 8;
  bool varint = false;
};
inline constexpr std::array<GapCoding, 3> kGapCodings = {GapCoding{8, false}, GapCoding{16, false},
                                                         GapCoding{16, true}};

struct LayoutBound {
  uint64_t users = 0;  // the graph's users (the peer alphabet and the id set)
  uint64_t edges = 0;
  // The span every list's times are counted in, in the graph's stored unit (whole seconds at
  // --follow-time-resolution=1s: the bound is that of the times it keeps).
  TimestampMs first_ts = 0, last_ts = 0;
  uint32_t time_unit_ms = 1;
  double id_bits = 0;                     // the external ids, as a set
  double following_bits = 0;              // every following list: its times and its peers
  double fan_bits = 0;                    // every fan list: the same, from the followee's side
  double mutual_bits = 0;                 // one bit per entry of each side
  double following_packed_bytes = 0;      // PackedFollowingBytes summed over the lists
  double fan_packed_bytes = 0;            // PackedFanBytes summed over the lists
  // GapFollowingBytes and GapFanBytes summed over the lists, for each of kGapCodings.
  std::array<double, 3> following_gap_bytes{}, fan_gap_bytes{};

  double OnceBytesPerEdge() const { return PerEdge(id_bits + following_bits); }
  double BothBytesPerEdge() const {
    return PerEdge(id_bits + following_bits + fan_bits + mutual_bits);
  }
  double FollowingPackedBytesPerEdge() const { return PerEdge(8 * following_packed_bytes); }
  double FanPackedBytesPerEdge() const { return PerEdge(8 * fan_packed_bytes); }
  double FollowingGapBytesPerEdge(size_t c) const { return PerEdge(8 * following_gap_bytes[c]); }
  double FanGapBytesPerEdge(size_t c) const { return PerEdge(8 * fan_gap_bytes[c]); }

 private:
  double PerEdge(double bits) const {
    return edges == 0 ? 0 : bits / 8 / static_cast<double>(edges);
  }
};

// O(users) time, O(1) memory.
LayoutBound ComputeLayoutBound(const Graph& graph);

// The bytes of one list of n entries (in key order) in a bit-packed layout, exact-fit (no
// allocator slack). A following list keeps its u32 peers (the SIMD scan) and packs each
// entry's time as its distance from the list's oldest, at the width of the list's span, and
// its kMutual bit, behind an 8-byte header (the oldest time, the width). A fan list of at
// most 256 entries packs peer (at the width of its largest), kMutual bit and time distance
// per entry behind an 8-byte header; a longer one does so in blocks of 128, each with 32
// bytes of chunk directory (handle, first key, rank counter) instead of a header. Lists
// under 8 entries take their form in the lists: one entry plain (10 bytes), 2 to 7 a short
// run in whole 4-byte words; a longer list that packing would not shrink counts as plain.
double PackedFollowingBytes(const EdgeEntry* entries, uint32_t n);
double PackedFanBytes(const EdgeEntry* entries, uint32_t n);
// The same lists with their times coded as gaps (`coding`), the step docs/design.md weighs
// next: each group of entries keeps an anchor time and its gaps; peers and kMutual bits as
// above. Reading one entry's time then decodes its group.
double GapFollowingBytes(const EdgeEntry* entries, uint32_t n, GapCoding coding);
double GapFanBytes(const EdgeEntry* entries, uint32_t n, GapCoding coding);

// The bits of one list of k entries, times in a span of `span` milliseconds, peers among
// `others` users: log2 C(span + k - 1, k) + log2(others! / (others - k)!). REQUIRES: k <= others.
double ListBits(uint64_t k, uint64_t span, uint64_t others);

}  // namespace relgraph::bench
