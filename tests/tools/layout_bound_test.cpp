// The information bound of a graph's layout: the formula on lists small enough to count by
// hand, and the whole-graph sums on a graph of three users.
#include "tools/bench/layout_bound.h"

#include <doctest.h>

#include <cmath>

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
