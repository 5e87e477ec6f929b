#include "engine/graph/gap_groups.h"

#include <algorithm>
#include <cstring>

namespace relgraph {
namespace {

constexpr unsigned kTimeBits = 42;  // any time minus the base fits (kMaxTimestampMs < 2^42)

constexpr uint64_t kValueBits = 0x7777777777777777;  // each nibble's 3 value bits
constexpr uint64_t kMoreBits = 0x8888888888888888;   // each nibble's continuation bit

uint64_t LowBits(unsigned bits) {
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

// The nibbles of v's varint, `bits` = GapVarintBits(v) of them, as one field: v's 3-bit
// pieces spread to one a nibble (SWAR: halves, quarters, ... apart), then the
// continuation bits on all but the last.
uint64_t NibbleForm(uint64_t v, unsigned bits) {
  uint64_t x = v;
  x = (x & 0xFFFFFF) | ((x & 0xFFFFFF000000) << 8);
  x = (x & 0x00000FFF00000FFF) | ((x & 0x00FFF00000FFF000) << 4);
  x = (x & 0x003F003F003F003F) | ((x & 0x0FC00FC00FC00FC0) << 2);
  x = (x & 0x0707070707070707) | ((x & 0x3838383838383838) << 1);
  return x | (kMoreBits & LowBits(bits - 4));
}

// The value of a varint's nibbles (continuation bits ignored): NibbleForm's steps backwards.
uint64_t PiecesValue(uint64_t x) {
  x &= kValueBits;
  x = (x & 0x0707070707070707) | ((x >> 1) & 0x3838383838383838);
  x = (x & 0x003F003F003F003F) | ((x >> 2) & 0x0FC00FC00FC00FC0);
  x = (x & 0x00000FFF00000FFF) | ((x >> 4) & 0x00FFF00000FFF000);
  return (x & 0xFFFFFF) | ((x >> 8) & 0xFFFFFF000000);
}

// Reads the varints of bits [pos, end) of a stream whose varints start at multiples of 4
// bits from `pos`: up to 14 nibbles a load, each load ending at or before end's last byte.
// A varint's length is found from its window's continuation bits (no branch a nibble).
class NibbleReader {
 public:
  NibbleReader(const char* bits, uint64_t pos, uint64_t end) : bits_(bits), pos_(pos), end_(end) {}

  // The bit after the last varint read.
  uint64_t position() const { return pos_ - 4 * uint64_t{left_}; }

  uint64_t Next() {
    uint64_t stops = ~window_ & kMoreBits & LowBits(4 * left_);
    if (stops == 0) {
      Refill();
      stops = ~window_ & kMoreBits & LowBits(4 * left_);
      if (stops == 0) return 0;  // past the end: only a corrupt area gets here
    }
    const auto bits = static_cast<unsigned>(std::countr_zero(stops)) + 1;
    const uint64_t v = PiecesValue(window_ & LowBits(bits));
    window_ = bits >= 64 ? 0 : window_ >> bits;
    left_ -= bits / 4;
    return v;
  }

 private:
  // Loads the window from the first nibble not yet read.
  void Refill() {
    pos_ -= 4 * uint64_t{left_};  // nibbles loaded but not read are loaded again
    window_ = 0;
    left_ = 0;
    if (pos_ >= end_) return;
    const uint64_t stop = std::min(pos_ + 56, end_);
    const auto last = static_cast<int64_t>((stop - 1) >> 3);
    uint64_t word;
    std::memcpy(&word, bits_ + last - 7, sizeof(word));
    window_ = word >> (pos_ - 8 * static_cast<uint64_t>(last - 7));
    left_ = static_cast<unsigned>((stop - pos_) / 4);
    pos_ += 4 * uint64_t{left_};
  }

  const char* bits_;
  uint64_t pos_, end_;  // pos_: just past the nibbles loaded into window_
  uint64_t window_ = 0;
  unsigned left_ = 0;  // nibbles loaded and not read, from window_'s low bits
};

}  // namespace

void GapGroups::DecodeGroup(uint32_t g, uint32_t count, TimestampMs* ts) const {
  const uint32_t size = GroupSize(g);
  const uint64_t start = s_.stream_start();
  NibbleReader r(area_, start + GapsAt(g), start + StreamBits());
  if (g + 1 < s_.groups()) {
    ts[0] = Anchor(g);
    for (uint32_t k = 1; k < count; ++k) ts[k] = ts[k - 1] + static_cast<TimestampMs>(r.Next());
    return;
  }
  // The last group: its anchor is the newest time, its first is that minus all its gaps.
  TimestampMs gaps[GapShape::kGroup];
  TimestampMs sum = 0;
  for (uint32_t k = 1; k < size; ++k) sum += gaps[k] = static_cast<TimestampMs>(r.Next());
  ts[0] = Anchor(g) - sum;
  for (uint32_t k = 1; k < count; ++k) ts[k] = ts[k - 1] + gaps[k];
}

TimestampMs GapGroups::Ts(uint32_t i) const {
  TimestampMs ts[GapShape::kGroup];
  DecodeGroup(i / GapShape::kGroup, i % GapShape::kGroup + 1, ts);
  return ts[i % GapShape::kGroup];
}

GapShape GapGroups::ShapeFor(const EdgeEntry* entries, uint32_t n, uint64_t* stream_bits) {
  GapShape s;
  s.n = n;
  s.base = EntryTs(entries[0]);
  uint64_t bits = 0;
  for (uint32_t i = 1; i < n; ++i)
    bits += GapVarintBits(static_cast<uint64_t>(EntryTs(entries[i]) - EntryTs(entries[i - 1])));
  // A bit of the directory costs 1/16 bit an entry; a widening costs an encode of the list.
  const auto span = static_cast<uint64_t>(EntryTs(entries[n - 1]) - s.base);
  s.time_bits = std::min(kTimeBits, static_cast<unsigned>(std::bit_width(span)) + 3);
  s.end_bits = static_cast<unsigned>(std::bit_width(bits)) + 2;
  *stream_bits = bits;
  return s;
}

void GapGroups::Write(char* area, const GapShape& shape, const EdgeEntry* entries) {
  const GapGroups view(area, shape);
  // The stream first, then the directory and the end: the sink keeps the byte it starts in
  // (which holds the end field's last bits) until it flushes, and StoreBits keeps the bits
  // around its field.
  BitSink stream(area, shape.stream_start());
  for (uint32_t i = 1; i < shape.n; ++i) {
    const auto gap = static_cast<uint64_t>(EntryTs(entries[i]) - EntryTs(entries[i - 1]));
    const unsigned bits = GapVarintBits(gap);
    stream.Put(NibbleForm(gap, bits), bits);
  }
  stream.Flush();
  uint64_t pos = 0;  // from the stream's start
  for (uint32_t g = 0; g < shape.groups(); ++g) {
    const EdgeEntry* const group = entries + g * GapShape::kGroup;
    if (g > 0) pos += GapVarintBits(static_cast<uint64_t>(EntryTs(group[0]) - EntryTs(group[-1])));
    const uint64_t dir = view.DirBit(g);
    const uint32_t count = view.GroupSize(g);
    const EdgeEntry& anchor = g + 1 < shape.groups() ? group[0] : group[count - 1];
    StoreBits(area, dir, shape.time_bits, static_cast<uint64_t>(EntryTs(anchor) - shape.base));
    StoreBits(area, dir + shape.time_bits, shape.end_bits, pos);
    uint32_t mask = EntryMutual(group[0]) ? 1 : 0;
    for (uint32_t r = 1; r < count; ++r) {
      if (EntryMutual(group[r])) mask |= 1u << r;
      pos += GapVarintBits(static_cast<uint64_t>(EntryTs(group[r]) - EntryTs(group[r - 1])));
    }
    StoreBits(area, dir + shape.time_bits + shape.end_bits, GapShape::kGroup, mask);
  }
  StoreBits(area, shape.end_field(), shape.end_bits, pos);
}

bool GapGroups::CanAppend(TimestampMs ts, TimestampMs last_ts) const {
  // Every time fits the anchors' width, so that any entry can become an anchor.
  if ((static_cast<uint64_t>(ts - s_.base) >> s_.time_bits) != 0) return false;
  const uint64_t end = StreamBits() + GapVarintBits(static_cast<uint64_t>(ts - last_ts));
  return (end >> s_.end_bits) == 0;
}

uint64_t GapGroups::AppendedAreaBits(TimestampMs ts, TimestampMs last_ts) const {
  return AreaBits() + GapVarintBits(static_cast<uint64_t>(ts - last_ts)) +
         (s_.n % GapShape::kGroup == 0 ? s_.dir_bits() : 0);
}

void GapGroups::Append(TimestampMs ts, TimestampMs last_ts, bool mutual) {
  const auto gap = static_cast<uint64_t>(ts - last_ts);
  const unsigned bits = GapVarintBits(gap);
  const uint64_t stream = StreamBits() + bits;
  StoreBits(area_, s_.stream_start() + stream - bits, bits, NibbleForm(gap, bits));
  if (s_.n % GapShape::kGroup == 0) {
    // A new group. The old last one's anchor becomes its first time (its 15 gaps are read;
    // the new one after them is not).
    const uint32_t old_last = s_.groups() - 1;
    TimestampMs first[GapShape::kGroup];
    DecodeGroup(old_last, 1, first);
    StoreBits(area_, DirBit(old_last), s_.time_bits, static_cast<uint64_t>(first[0] - s_.base));
    // Its directory entry goes where the end field is; end and stream move up.
    const uint64_t dir = s_.end_field();
    MoveBitsUp(area_, dir + s_.dir_bits(), dir, s_.end_bits + stream);
    StoreBits(area_, dir, s_.time_bits, static_cast<uint64_t>(ts - s_.base));
    StoreBits(area_, dir + s_.time_bits, s_.end_bits, stream);
    StoreBits(area_, dir + s_.time_bits + s_.end_bits, GapShape::kGroup, mutual ? 1 : 0);
    ++s_.n;
  } else {
    StoreBits(area_, DirBit(s_.groups() - 1), s_.time_bits, static_cast<uint64_t>(ts - s_.base));
    SetMutual(s_.n++, mutual);
  }
  StoreBits(area_, s_.end_field(), s_.end_bits, stream);
}

GapErase GapGroups::PlanErase(uint32_t pos) const {
  const uint64_t start = s_.stream_start();
  const uint64_t stream = StreamBits();
  GapErase e;
  e.pos = pos;
  if (pos == 0) {
    // The gap into entry 1 goes; entry 1's time comes from the anchor.
    NibbleReader r(area_, start + GapsAt(0), start + stream);
    r.Next();
    e.start = GapsAt(0);
    e.cut_bits = r.position() - start - e.start;
    return e;
  }
  // The gap into entry pos: skip from its group's first gap, or from the group before when
  // pos starts a group.
  const uint32_t g = pos / GapShape::kGroup;
  const uint32_t r = pos % GapShape::kGroup;
  NibbleReader reader(area_, start + GapsAt(r == 0 ? g - 1 : g), start + stream);
  for (uint32_t k = 1; k < (r == 0 ? GapShape::kGroup : r); ++k) reader.Next();
  e.start = reader.position() - start;
  if (pos == s_.n - 1) {
    e.last_gap = reader.Next();
    e.cut_bits = stream - e.start;  // the last gap goes
    return e;
  }
  // The gaps into pos and pos + 1 become one.
  e.merged = reader.Next();
  e.merged += reader.Next();
  e.cut_bits = reader.position() - start - e.start;
  e.merged_bits = GapVarintBits(e.merged);
  return e;
}

uint64_t GapGroups::ErasedAreaBits(const GapErase& e) const {
  GapShape after = s_;
  after.n = s_.n - 1;
  return after.stream_start() + StreamBits() - e.delta();
}

void GapGroups::Erase(const GapErase& e) {
  const uint64_t start = s_.stream_start();
  const uint64_t stream = StreamBits();
  const uint32_t groups = s_.groups();
  GapShape after = s_;
  after.n = s_.n - 1;
  const uint32_t kept = after.groups();
  // 1. Directory: every group from pos's on loses an entry at its front (pos's own only
  // when pos is its first): its first entry becomes the next one, whose gap the old
  // position holds. kMutual bits move down one, across groups.
  // The last group's anchor is the newest time: older by the last gap when the newest goes.
  const TimestampMs newest = Anchor(groups - 1) - static_cast<TimestampMs>(e.last_gap);
  const uint32_t g0 = e.pos / GapShape::kGroup;
  for (uint32_t g = g0; g < kept; ++g) {
    const uint64_t dir = DirBit(g);
    if (uint64_t{g} * GapShape::kGroup >= e.pos) {
      const uint64_t at = GapsAt(g);
      NibbleReader r(area_, start + at, start + stream);
      const uint64_t gap = r.Next();
      if (g + 1 < kept)
        StoreBits(area_, dir, s_.time_bits, LoadBits(area_, dir, s_.time_bits) + gap);
      StoreBits(area_, dir + s_.time_bits, s_.end_bits, r.position() - start - e.delta());
    }
    const uint32_t mask = MutualMask(g);
    const uint32_t next = g + 1 < groups ? MutualMask(g + 1) & 1 : 0;
    const uint32_t r0 = g == g0 ? e.pos % GapShape::kGroup : 0;
    const uint32_t low = mask & ((1u << r0) - 1);
    const uint32_t moved = ((mask >> (r0 + 1)) << r0) | (next << (GapShape::kGroup - 1));
    StoreBits(area_, MutualBit(g), GapShape::kGroup, low | moved);
  }
  // The last group left (pos's, a later one, or an earlier one when pos's emptied) takes
  // the newest time.
  StoreBits(area_, DirBit(kept - 1), s_.time_bits, static_cast<uint64_t>(newest - s_.base));
  // 2. Stream: the cut gives way to the merged gap; the tail moves down.
  if (e.merged_bits > 0)
    StoreBits(area_, start + e.start, e.merged_bits, NibbleForm(e.merged, e.merged_bits));
  const uint64_t tail = e.start + e.cut_bits;
  MoveBitsDown(area_, start + e.start + e.merged_bits, start + tail, stream - tail);
  const uint64_t new_stream = stream - e.delta();
  StoreBits(area_, s_.end_field(), s_.end_bits, new_stream);
  // 3. The last group emptied: end and stream move down over its directory entry.
  if (kept < groups)
    MoveBitsDown(area_, after.end_field(), s_.end_field(), s_.end_bits + new_stream);
  s_ = after;
}

std::string GapGroups::Check() const {
  const uint32_t n = s_.n, groups = s_.groups();
  const uint64_t start = s_.stream_start(), end = StreamBits();
  const auto at = [](const char* what, uint64_t i) {
    return std::string(what) + std::to_string(i);
  };
  if (n == 0) return "no entries";
  if (s_.time_bits > kTimeBits) return at("anchor width ", s_.time_bits);
  // The oldest time: the first anchor, or, with one group, the newest minus every gap.
  TimestampMs rel = 0;  // entry i's time minus entry 0's
  uint64_t pos = 0;     // in the stream
  for (uint32_t i = 1; i < n; ++i) {
    if ((i - 1) % GapShape::kGroup == 0 && GapsAt((i - 1) / GapShape::kGroup) != pos) {
      return at("directory entry of group ", (i - 1) / GapShape::kGroup) + ": gaps at bit " +
             std::to_string(GapsAt((i - 1) / GapShape::kGroup)) + ", the stream has them at " +
             std::to_string(pos);
    }
    uint64_t gap = 0;
    unsigned bits = 0;
    for (uint64_t piece = 8; (piece & 8) != 0; bits += 4) {
      if (pos + bits + 4 > end) return at("the stream ends inside the gap of entry ", i);
      if (bits >= 4 * ((kTimeBits + 2) / 3)) return at("the gap of entry ", i) + " is too wide";
      piece = LoadBits(area_, start + pos + bits, 4);
      gap |= (piece & 7) << (bits / 4 * 3);
    }
    if (bits != GapVarintBits(gap))
      return at("the gap of entry ", i) + " is not in its shortest form";
    pos += bits;
    rel += static_cast<TimestampMs>(gap);
    if (i % GapShape::kGroup == 0 && i / GapShape::kGroup + 1 < groups &&
        Anchor(i / GapShape::kGroup) != Anchor(0) + rel) {
      return at("anchor of group ", i / GapShape::kGroup) + " differs from its gaps' sum";
    }
  }
  if (pos != end) {
    return "the end field says " + std::to_string(end) + " bits, the gaps take " +
           std::to_string(pos);
  }
  if (GroupSize(groups - 1) == 1 && GapsAt(groups - 1) != end) {
    return at("directory entry of group ", groups - 1) + ": one entry, gaps not at the end";
  }
  const TimestampMs newest = Anchor(groups - 1);
  if (groups > 1 && newest != Anchor(0) + rel) return "the last anchor is not the newest time";
  if (newest - rel < s_.base) return "the oldest time is before the list's base";
  if ((MutualMask(groups - 1) >> GroupSize(groups - 1)) != 0) {
    return "kMutual bits past the list's end";
  }
  return {};
}

}  // namespace relgraph
