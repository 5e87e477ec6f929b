// GapGroups: the times and kMutual bits of a packed following list (FollowingList, from 8
// entries), coded as gaps with a directory entry every 16 entries.
//
// Why this design: a user's follows come in sessions, so the gap from one follow to the next
// is usually minutes or seconds while the list's whole span is months or years. A fixed-width
// field per entry pays the span's width for every entry (30-40 bits at 1 ms, 25-30 at 1 s);
// a gap pays its own width. Gaps are nibble varints (3 value bits and a continuation bit a
// piece): a gap of a minute in seconds takes 8 bits, of a day 24. Every 16th entry's time
// (the anchor), where the gaps after it start and the group's 16 kMutual bits sit in a
// fixed-width directory, so reading one entry's time decodes at most 15 gaps, a kMutual bit
// is one load, and a search by time (Rank) is a binary search over the anchors. The last
// group's anchor is its newest entry's time instead: every follow reads the list's newest
// time (is the new entry the newest?) and writes it, and then both are one field; the
// group's first time is its anchor minus its gaps, and when a new group starts the old
// last one's anchor turns into its first time (one decode every 16 appends).
//
// The stream holds every gap, from entry 1 to the last, including the one into each group's
// first entry that its anchor makes redundant: an erase then changes the stream in one place
// (two gaps become their sum) and moves its tail down, a bit move at memmove speed, while
// each later group's directory entry takes the next entry's time and gap position from the
// varint at its old position: O(n / 16) directory updates and no decoding of whole groups.
//
// Layout: the area is a bit array (low bit of the first byte first):
//   directory: G = ceil(n / 16) entries of W = time_bits + end_bits + 16 bits; entry g:
//     anchor (time_bits): the time of entry 16g minus the list's base; for the last group,
//                         the time of the list's newest entry minus the base
//     gaps   (end_bits):  where the gap of entry 16g + 1 starts, in bits from the stream's
//                         start (the stream's end when the group has one entry)
//     mutual (16):        bit r is the kMutual bit of entry 16g + r (0 past the list's end)
//   end (end_bits): the stream's length in bits
//   stream: the gap of each entry i = 1 .. n-1 (its time minus entry i-1's), each a nibble
//     varint: pieces of 3 value bits, lowest first, each with a continuation bit above it
//     (1: another piece follows).
// The list's header holds base, time_bits and end_bits (FollowingList); base is at most the
// oldest time (an erase of the oldest entry keeps it).
//
// Reads never touch a byte past the stream's end, and every 8-byte access ends at or before
// the last byte it needs, so the area needs 8 readable bytes in front of it (the list's
// peers) and none after.
//
// Thread-safety: views over the caller's memory; the owner serializes changes.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>

#include "engine/graph/edge_entry.h"
#include "engine/graph/packed_bits.h"

namespace relgraph {

// The widths that describe a GapGroups area, beside its list's size.
struct GapShape {
  uint32_t n = 0;          // entries
  TimestampMs base = 0;    // at most entry 0's time
  unsigned time_bits = 0;  // the anchors' width (0..42)
  unsigned end_bits = 1;   // the gap positions' width (1..57)

  static constexpr uint32_t kGroup = 16;
  uint32_t groups() const { return (n + kGroup - 1) / kGroup; }
  unsigned dir_bits() const { return time_bits + end_bits + kGroup; }
  uint64_t end_field() const { return uint64_t{groups()} * dir_bits(); }
  uint64_t stream_start() const { return end_field() + end_bits; }
};

// Bits of the nibble varint of `v`: 4 per 3 bits of its width, at least 4.
inline unsigned GapVarintBits(uint64_t v) {
  const auto w = static_cast<unsigned>(std::bit_width(v));
  return w <= 3 ? 4 : 4 * ((w + 2) / 3);
}

// What erasing one entry changes in the stream (GapGroups::PlanErase): bits
// [start, start + cut_bits) give way to the varint of `merged` (merged_bits, 0 for none).
struct GapErase {
  uint32_t pos = 0;
  uint64_t start = 0, cut_bits = 0;
  uint64_t last_gap = 0;  // erasing the newest entry: its gap (the new newest time is older)
  uint64_t merged = 0;
  unsigned merged_bits = 0;
  uint64_t delta() const { return cut_bits - merged_bits; }
};

class GapGroups {
 public:
  GapGroups(char* area, const GapShape& shape) : area_(area), s_(shape) {}

  const GapShape& shape() const { return s_; }
  char* area() const { return area_; }
  // Group g's anchor: its first entry's time, the newest entry's for the last group.
  TimestampMs Anchor(uint32_t g) const {
    return s_.base + static_cast<TimestampMs>(LoadBits(area_, DirBit(g), s_.time_bits));
  }
  // Where group g's gaps (those of entries 16g + 1 ..) start, from the stream's start.
  uint64_t GapsAt(uint32_t g) const {
    return LoadBits(area_, DirBit(g) + s_.time_bits, s_.end_bits);
  }
  // The stream's length in bits.
  uint64_t StreamBits() const { return LoadBits(area_, s_.end_field(), s_.end_bits); }
  // The whole area in bits.
  uint64_t AreaBits() const { return s_.stream_start() + StreamBits(); }

  bool Mutual(uint32_t i) const {
    return LoadBits(area_, MutualBit(i / GapShape::kGroup) + i % GapShape::kGroup, 1) != 0;
  }
  void SetMutual(uint32_t i, bool mutual) const {
    StoreBits(area_, MutualBit(i / GapShape::kGroup) + i % GapShape::kGroup, 1, mutual ? 1 : 0);
  }
  // The kMutual bits of group g (bit r: entry 16g + r).
  uint32_t MutualMask(uint32_t g) const {
    return static_cast<uint32_t>(LoadBits(area_, MutualBit(g), GapShape::kGroup));
  }

  // Entries in group g.
  uint32_t GroupSize(uint32_t g) const {
    return std::min(GapShape::kGroup, s_.n - g * GapShape::kGroup);
  }
  // The times of group g's first `count` entries into ts[0, count).
  void DecodeGroup(uint32_t g, uint32_t count, TimestampMs* ts) const;
  void DecodeGroup(uint32_t g, TimestampMs* ts) const { DecodeGroup(g, GroupSize(g), ts); }
  // The time of entry i.
  TimestampMs Ts(uint32_t i) const;
  TimestampMs LastTs() const { return Anchor(s_.groups() - 1); }

  // Writes the area of these n entries (in key order) at `shape`, which ShapeFor gave.
  static void Write(char* area, const GapShape& shape, const EdgeEntry* entries);
  // The shape for these n >= 1 entries, and the stream's bits through *stream_bits. The
  // anchors get 3 bits beyond what they need (at most 42) and the positions 2, so that a
  // list growing by appends seldom outgrows them.
  static GapShape ShapeFor(const EdgeEntry* entries, uint32_t n, uint64_t* stream_bits);

  // Whether the widths hold an appended entry of time ts (the newest is last_ts).
  bool CanAppend(TimestampMs ts, TimestampMs last_ts) const;
  // The area's bits after that append.
  uint64_t AppendedAreaBits(TimestampMs ts, TimestampMs last_ts) const;
  // Appends entry n (time ts >= last_ts, its kMutual bit) in place, with room in the area
  // for AppendedAreaBits. REQUIRES: CanAppend(ts, last_ts). Updates shape().n.
  void Append(TimestampMs ts, TimestampMs last_ts, bool mutual);

  // Erasing entry pos: what changes in the stream, and the area's bits after. REQUIRES:
  // n >= 2.
  GapErase PlanErase(uint32_t pos) const;
  uint64_t ErasedAreaBits(const GapErase& e) const;
  // Erases entry `e.pos` in place (PlanErase on this same area, perhaps moved since).
  // Updates shape().n.
  void Erase(const GapErase& e);

  // The first inconsistency in the area's bookkeeping, or an empty string: each directory
  // entry's gap position where the stream puts that gap, the end field at the stream's end,
  // every gap in its shortest varint, the anchors at the times the gaps give (the oldest time
  // not before base), no kMutual bit past the list's end. Reads nothing past the end field's
  // stream end. For Graph::CheckInvariants (and so `relgraph-admin verify` and the tests
  // that audit after every batch): a decode of the list does not see these.
  std::string Check() const;

 private:
  uint64_t DirBit(uint32_t g) const { return uint64_t{g} * s_.dir_bits(); }
  uint64_t MutualBit(uint32_t g) const { return DirBit(g) + s_.time_bits + s_.end_bits; }

  char* area_;
  GapShape s_;
};

}  // namespace relgraph
