// The information bound of a graph's layout: the formula on lists small enough to count by
// hand, and the whole-graph sums on a graph of three users; and the bit-packed estimate's
// widths, headers and plain fallbacks on lists counted by hand.
#include "tools/bench/layout_bound.h"

#include <doctest.h>

#include <cmath>
#include <vector>

namespace relgraph::bench {
namespace {

TEST_CASE("layout bound: a list's bits are its time multiset and its ordered peers") {
  CHECK(ListBits(0, 1000, 10) == 0);
  CHECK(ListBits(1, 1, 1) == doctest::Approx(0).epsilon(1e-9));
  // One entry: any of 1,024 times, any of 8 peers.
  CHECK(ListBits(1, 1024, 8) == doctest::Approx(13).epsilon(1e-9));
  // Two entries in a span of 4: C(5, 2) = 10 multisets of times, 3 * 2 ordered peers.
  CHECK(ListBits(2, 4, 3) == doctest::Approx(std::log2(60.0)).epsilon(1e-9));
  // A list holding every peer: the peers cost log2(k!), the times log2 C(S + k - 1, k).
  CHECK(ListBits(5, 1, 5) == doctest::Approx(std::log2(120.0)).epsilon(1e-9));
}

TEST_CASE("layout bound: times farther apart cost more bits, about log2 of the span each") {
  const double near = ListBits(100, 1 << 10, 1000000);
  const double far = ListBits(100, uint64_t{1} << 40, 1000000);
  CHECK(far > near);
  CHECK((far - near) / 100 == doctest::Approx(30).epsilon(0.02));
}

TEST_CASE("layout bound: a three-user graph sums its lists, its ids and the mutual bits") {
  Graph g;
  REQUIRE(g.FollowAt(1, 2, 100).ok());
  REQUIRE(g.FollowAt(1, 3, 103).ok());
  REQUIRE(g.FollowAt(2, 3, 101).ok());
  const LayoutBound b = ComputeLayoutBound(g);
  CHECK(b.users == 3);
  CHECK(b.edges == 3);
  CHECK(b.first_ts == 100);
  CHECK(b.last_ts == 103);
  // Span 4, two others per user. Following: user 1 (k 2), user 2 (k 1); fans: 2 (1), 3 (2).
  const double two = std::log2(10.0 * 2);  // C(5, 2) time multisets, 2 * 1 orders of peers
  const double one = std::log2(4.0 * 2);
  CHECK(b.following_bits == doctest::Approx(two + one).epsilon(1e-9));
  CHECK(b.fan_bits == doctest::Approx(two + one).epsilon(1e-9));
  CHECK(b.mutual_bits == 6);
  CHECK(b.id_bits == doctest::Approx(3 * 64 - std::log2(6.0)).epsilon(1e-9));
  CHECK(b.OnceBytesPerEdge() == doctest::Approx((b.id_bits + two + one) / 24).epsilon(1e-9));
  CHECK(b.BothBytesPerEdge() ==
        doctest::Approx((b.id_bits + 2 * (two + one) + 6) / 24).epsilon(1e-9));
  // A list of one entry stays plain (10 bytes); one of two is a short run, 12 + 32 bits of
  // prefix and base, peer and kMutual bits for each, the span's bits for the second, in whole
  // 4-byte words: following 12 + 32 + 2 * 3 + 2 bits, fans 12 + 32 + 2 * 2 + 2, 8 bytes each.
  CHECK(b.following_packed_bytes == 18);
  CHECK(b.fan_packed_bytes == 18);
}

TEST_CASE("layout bound: packed lists take their widths, short ones are runs, poor fits plain") {
  // Ten entries, peers up to 6 (3 bits), times over 999 ms (10 bits).
  std::vector<EdgeEntry> run;
  for (uint32_t i = 0; i < 10; ++i) run.push_back(MakeEntry(i % 7, 5000 + 111 * i, i % 2 == 0));
  // Following: u32 peers, 11 bits an entry (kMutual and time), an 8-byte header.
  CHECK(PackedFollowingBytes(run.data(), 10) == 40 + 14 + 8);
  // Fans: 3 + 1 + 10 bits an entry, an 8-byte header.
  CHECK(PackedFanBytes(run.data(), 10) == 8 + 18);
  // Under 8 entries: a short run, 12 + 32 + 7 * (3 + 1) + 6 * 10 = 132 bits in 5 words.
  CHECK(PackedFollowingBytes(run.data(), 7) == 20);
  CHECK(PackedFanBytes(run.data(), 7) == 20);
  CHECK(PackedFanBytes(run.data(), 1) == 10);  // one entry: plain
  // Times over the whole 42-bit range and 32-bit peers: packing cannot win, so plain.
  std::vector<EdgeEntry> wide;
  for (uint32_t i = 0; i < 8; ++i) {
    wide.push_back(MakeEntry(0xffffffffu - i, i == 7 ? kMaxTimestampMs : i, false));
  }
  CHECK(PackedFanBytes(wide.data(), 8) == 80);
  // A long fan list: blocks of 128 with 32 bytes of directory each.
  std::vector<EdgeEntry> fans;
  for (uint32_t i = 0; i < 300; ++i) fans.push_back(MakeEntry(1, 1000 + i, false));
  // Peers of 1 bit, kMutual, times over 127 ms (7 bits) or 43 ms (6 bits) in the last block.
  CHECK(PackedFanBytes(fans.data(), 300) == 2 * (32 + 128 * 9 / 8) + 32 + std::ceil(44 * 8 / 8.0));
}

TEST_CASE("layout bound: times coded as gaps take an anchor a group and the gaps' widths") {
  // The run above: gaps of 111 ms (7 bits), a span of 999 ms (10-bit anchors).
  std::vector<EdgeEntry> run;
  for (uint32_t i = 0; i < 10; ++i) run.push_back(MakeEntry(i % 7, 5000 + 111 * i, i % 2 == 0));
  // Groups of 8: (10 + 6 + 7 * 7) + (10 + 6 + 7) time bits, 10 kMutual bits.
  CHECK(GapFollowingBytes(run.data(), 10, {8, false}) == 40 + std::ceil(98 / 8.0) + 8);
  CHECK(GapFollowingBytes(run.data(), 10, {16, false}) == 40 + std::ceil((10 + 79) / 8.0) + 8);
  // Varints: each 7-bit gap in three 4-bit pieces.
  CHECK(GapFollowingBytes(run.data(), 10, {16, true}) == 40 + (10 + 10 + 9 * 12) / 8 + 8);
  // Fans add 3 peer bits and keep kMutual: 40 + 88 bits.
  CHECK(GapFanBytes(run.data(), 10, {8, false}) == 8 + 16);
  CHECK(GapFanBytes(run.data(), 7, {8, false}) == 20);  // short: a short run, as above
  // Two sessions of 8 follows 1 ms apart, 2^20 ms between them: the jump is the second
  // group's anchor, so gaps cost a bit each where a packed time costs 21.
  std::vector<EdgeEntry> sessions;
  for (uint32_t i = 0; i < 16; ++i) {
    sessions.push_back(MakeEntry(i, 1000 + i + (i < 8 ? 0 : (int64_t{1} << 20)), false));
  }
  CHECK(PackedFollowingBytes(sessions.data(), 16) == 64 + 44 + 8);
  CHECK(GapFollowingBytes(sessions.data(), 16, {8, false}) ==
        64 + std::ceil((2 * 34 + 16) / 8.0) + 8);
  // As varints the jump takes seven pieces, each 1 ms gap one.
  CHECK(GapFollowingBytes(sessions.data(), 16, {16, true}) ==
        64 + std::ceil((21 + 14 * 4 + 28 + 16) / 8.0) + 8);
}

TEST_CASE("layout bound: an empty graph is zero bytes per edge, not a division by zero") {
  Graph g;
  const LayoutBound b = ComputeLayoutBound(g);
  CHECK(b.edges == 0);
  CHECK(b.OnceBytesPerEdge() == 0);
  CHECK(b.BothBytesPerEdge() == 0);
}

}  // namespace
}  // namespace relgraph::bench
