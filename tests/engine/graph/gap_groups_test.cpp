#include "engine/graph/gap_groups.h"

#include <doctest.h>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

namespace relgraph {
namespace {

// Times that come the way follows do: mostly small steps within a session, sometimes a
// jump of days or years, now and then the same millisecond twice; `wide` adds gaps near
// the 42-bit limit.
std::vector<EdgeEntry> RandomEntries(std::mt19937_64& rng, uint32_t n, bool wide) {
  std::vector<EdgeEntry> entries;
  TimestampMs ts = wide ? 0 : static_cast<TimestampMs>(rng() % (uint64_t{1} << 41));
  for (uint32_t i = 0; i < n; ++i) {
    if (i > 0) {
      const uint64_t kind = rng() % 10;
      uint64_t gap = kind < 2 ? 0 : kind < 8 ? rng() % 300 : rng() % (uint64_t{1} << (rng() % 36));
      if (wide && rng() % 4 == 0) gap = rng() % ((kMaxTimestampMs - ts) / (n - i) + 1);
      ts = std::min<TimestampMs>(kMaxTimestampMs, ts + static_cast<TimestampMs>(gap));
    }
    entries.push_back(MakeEntry(i, ts, rng() % 3 == 0));
  }
  return entries;
}

// An area of exactly its bytes behind 8 bytes that stand for the list's peers, on the heap,
// so that a read past its end is an ASan error.
struct Area {
  std::unique_ptr<char[]> bytes;
  char* area = nullptr;
  Area(uint64_t area_bits, uint64_t room_bits = 0)
      : bytes(new char[8 + (area_bits + room_bits + 7) / 8]()), area(bytes.get() + 8) {}
};

// n random entries (RandomEntries) written to an exact-size area.
struct WrittenArea {
  std::vector<EdgeEntry> entries;
  GapShape shape;
  uint64_t stream_bits = 0;
  Area area;
};
WrittenArea WriteRandom(std::mt19937_64& rng, uint32_t n, bool wide) {
  std::vector<EdgeEntry> entries = RandomEntries(rng, n, wide);
  uint64_t stream = 0;
  const GapShape shape = GapGroups::ShapeFor(entries.data(), n, &stream);
  WrittenArea w{std::move(entries), shape, stream, Area(shape.stream_start() + stream)};
  GapGroups::Write(w.area.area, shape, w.entries.data());
  return w;
}

void RequireMatches(const GapGroups& g, const std::vector<EdgeEntry>& want) {
  REQUIRE(g.shape().n == want.size());
  REQUIRE(g.Check() == "");
  for (uint32_t i = 0; i < want.size(); ++i) {
    REQUIRE(g.Ts(i) == EntryTs(want[i]));
    REQUIRE(g.Mutual(i) == EntryMutual(want[i]));
  }
  TimestampMs ts[GapShape::kGroup];
  for (uint32_t grp = 0; grp < g.shape().groups(); ++grp) {
    const uint32_t first = grp * GapShape::kGroup;
    const uint32_t count = std::min<uint32_t>(GapShape::kGroup, g.shape().n - first);
    REQUIRE(g.GroupSize(grp) == count);
    g.DecodeGroup(grp, ts);
    uint32_t mask = 0;
    for (uint32_t r = 0; r < count; ++r) {
      REQUIRE(ts[r] == EntryTs(want[first + r]));
      mask |= (EntryMutual(want[first + r]) ? 1u : 0u) << r;
    }
    REQUIRE(g.MutualMask(grp) == mask);
  }
}

TEST_CASE("gap_groups: a varint takes 4 bits per 3 bits of its value, at least 4") {
  CHECK(GapVarintBits(0) == 4);
  CHECK(GapVarintBits(7) == 4);
  CHECK(GapVarintBits(8) == 8);
  CHECK(GapVarintBits(63) == 8);
  CHECK(GapVarintBits(64) == 12);
  CHECK(GapVarintBits((uint64_t{1} << 42) - 1) == 56);
}

TEST_CASE("gap_groups: written areas read back every time and kMutual bit") {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 400; ++round) {
    const auto n = static_cast<uint32_t>(1 + rng() % (round < 300 ? 70 : 1200));
    const WrittenArea w = WriteRandom(rng, n, round % 5 == 0);
    const std::vector<EdgeEntry>& entries = w.entries;
    const GapGroups g(w.area.area, w.shape);
    REQUIRE(g.StreamBits() == w.stream_bits);
    REQUIRE(g.LastTs() == EntryTs(entries.back()));
    RequireMatches(g, entries);
    // kMutual bits flip in place and touch nothing else.
    std::vector<EdgeEntry> want = entries;
    for (int k = 0; k < 20; ++k) {
      const auto i = static_cast<uint32_t>(rng() % n);
      const bool m = !EntryMutual(want[i]);
      want[i] = MakeEntry(want[i].peer, EntryTs(want[i]), m);
      g.SetMutual(i, m);
    }
    RequireMatches(g, want);
  }
}

TEST_CASE("gap_groups: appends in place match a fresh write until the widths are outgrown") {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 200; ++round) {
    const auto total = static_cast<uint32_t>(2 + rng() % 300);
    const std::vector<EdgeEntry> entries = RandomEntries(rng, total, round % 4 == 0);
    const auto start = static_cast<uint32_t>(1 + rng() % (total - 1));
    uint64_t stream = 0;
    const GapShape shape = GapGroups::ShapeFor(entries.data(), start, &stream);
    // Room for every append: the caller (FollowingList) moves the area, here it stays.
    Area a(shape.stream_start() + stream, 80 * uint64_t{total});
    GapGroups::Write(a.area, shape, entries.data());
    GapGroups g(a.area, shape);
    uint32_t n = start;
    for (; n < total; ++n) {
      const TimestampMs ts = EntryTs(entries[n]), last = g.LastTs();
      if (!g.CanAppend(ts, last)) break;
      const uint64_t bits = g.AppendedAreaBits(ts, last);
      g.Append(ts, last, EntryMutual(entries[n]));
      REQUIRE(g.AreaBits() == bits);
    }
    RequireMatches(g, std::vector<EdgeEntry>(entries.begin(), entries.begin() + n));
    if (n < total) {
      // What stopped it: a time past the anchors' width, or a stream end past the end
      // width.
      const uint64_t gap = static_cast<uint64_t>(EntryTs(entries[n]) - EntryTs(entries[n - 1]));
      const bool anchor_too_wide =
          (static_cast<uint64_t>(EntryTs(entries[n]) - shape.base) >> shape.time_bits) != 0;
      const bool end_too_wide = ((g.StreamBits() + GapVarintBits(gap)) >> shape.end_bits) != 0;
      REQUIRE((anchor_too_wide || end_too_wide));
    }
  }
}

TEST_CASE("gap_groups: erases in place match the entries left, at every position") {
  // Each erase merges two gaps (or drops the first or last), moves the stream's tail down
  // and updates every later group's anchor, gap position and kMutual bits: checked against
  // the entries left after every erase, down to two entries, with groups emptying.
  std::mt19937_64 rng(17);
  for (int round = 0; round < 150; ++round) {
    const auto n = static_cast<uint32_t>(2 + rng() % (round < 100 ? 60 : 400));
    std::vector<EdgeEntry> want = RandomEntries(rng, n, round % 5 == 0);
    uint64_t stream = 0;
    const GapShape shape = GapGroups::ShapeFor(want.data(), n, &stream);
    Area a(shape.stream_start() + stream);
    GapGroups::Write(a.area, shape, want.data());
    GapGroups g(a.area, shape);
    while (g.shape().n >= 2) {
      const uint32_t size = g.shape().n;
      const uint32_t kind = static_cast<uint32_t>(rng() % 4);
      const uint32_t pos = kind == 0   ? 0
                           : kind == 1 ? size - 1
                                       : static_cast<uint32_t>(rng() % size);
      const GapErase plan = g.PlanErase(pos);
      const uint64_t bits = g.ErasedAreaBits(plan);
      g.Erase(plan);
      want.erase(want.begin() + pos);
      REQUIRE(g.AreaBits() == bits);
      RequireMatches(g, want);
    }
  }
}

TEST_CASE("gap_groups: erases and appends mixed on one area match the entries left") {
  // Appends after erases of the oldest (the base stays below the new first time), of the
  // newest (the last anchor steps back) and of entries that empty the last group; gaps
  // near the 42-bit limit on some rounds. The area sits in an exact-size copy before each
  // check, so a read past its end is an ASan error.
  std::mt19937_64 rng(23);
  for (int round = 0; round < 200; ++round) {
    const bool wide = round % 4 == 0;
    std::vector<EdgeEntry> pool = RandomEntries(rng, 600, wide);
    auto n = static_cast<uint32_t>(2 + rng() % 40);
    std::vector<EdgeEntry> want(pool.begin(), pool.begin() + n);
    uint64_t stream = 0;
    const GapShape shape = GapGroups::ShapeFor(want.data(), n, &stream);
    Area a(shape.stream_start() + stream, 80 * 600);
    GapGroups::Write(a.area, shape, want.data());
    GapGroups g(a.area, shape);
    uint32_t next = n;
    for (int step = 0; step < 300 && next < pool.size(); ++step) {
      if (g.shape().n >= 2 && rng() % 3 == 0) {
        const uint32_t size = g.shape().n;
        const uint64_t kind = rng() % 3;
        const uint32_t pos = kind == 0   ? 0
                             : kind == 1 ? size - 1
                                         : static_cast<uint32_t>(rng() % size);
        g.Erase(g.PlanErase(pos));
        want.erase(want.begin() + pos);
      } else {
        const TimestampMs ts = EntryTs(pool[next]), last = g.LastTs();
        if (!g.CanAppend(ts, last)) break;
        g.Append(ts, last, EntryMutual(pool[next]));
        want.push_back(pool[next++]);
      }
      Area exact(g.AreaBits());
      std::memcpy(exact.area, a.area, static_cast<size_t>((g.AreaBits() + 7) / 8));
      RequireMatches(GapGroups(exact.area, g.shape()), want);
    }
  }
}

// Check must see a bookkeeping error that a decode of the list would not: one field of a
// written area changed at a time (a bit of a gap position, the end field, an anchor of a
// group before the last, a kMutual bit past the end), and nothing read past the area (exact
// size: ASan).
TEST_CASE("gap_groups: Check finds each kind of damage to the bookkeeping") {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 600; ++round) {
    const auto n = static_cast<uint32_t>(1 + rng() % (round < 400 ? 70 : 600));
    WrittenArea w = WriteRandom(rng, n, round % 5 == 0);
    const GapShape& shape = w.shape;
    Area& a = w.area;
    const GapGroups g(a.area, shape);
    REQUIRE(g.Check() == "");
    const uint32_t groups = shape.groups();
    const auto flip = [&](uint64_t bit, unsigned width) {
      const uint64_t old = LoadBits(a.area, bit, width);
      StoreBits(a.area, bit, width, old ^ (uint64_t{1} << (rng() % width)));
      return old;
    };
    const auto grp = static_cast<uint32_t>(rng() % groups);
    uint64_t bit = 0;
    unsigned width = 0;
    switch (rng() % 4) {
      case 0:  // where a group's gaps start
        bit = grp * shape.dir_bits() + shape.time_bits, width = shape.end_bits;
        break;
      case 1:  // the end field
        bit = shape.end_field(), width = shape.end_bits;
        break;
      case 2:  // an anchor, of a group before the last (the last one's may move within base)
        if (groups < 2) continue;
        bit = (grp % (groups - 1)) * shape.dir_bits(), width = shape.time_bits;
        if (width == 0) continue;
        break;
      default:  // a kMutual bit past the end
        if (n % GapShape::kGroup == 0) continue;
        bit = (groups - 1) * shape.dir_bits() + shape.time_bits + shape.end_bits +
              n % GapShape::kGroup + rng() % (GapShape::kGroup - n % GapShape::kGroup);
        width = 1;
        break;
    }
    const uint64_t old = flip(bit, width);
    CAPTURE(round);
    CHECK(g.Check() != "");
    StoreBits(a.area, bit, width, old);
    REQUIRE(g.Check() == "");
  }
}

}  // namespace
}  // namespace relgraph
