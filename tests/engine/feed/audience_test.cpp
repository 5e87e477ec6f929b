// Audience against a model of std::sets: random mutes, hides, forgets and celebrity changes;
// every answer, the caps, the invariants, and the epoch tag that never reads 0.
#include "engine/feed/audience.h"

#include <doctest.h>

#include <map>
#include <random>
#include <set>

namespace relgraph {
namespace {

struct Model {
  std::map<InternalId, std::set<InternalId>> mutes, hides;
  std::set<InternalId> celebrities;
};

TEST_CASE("audience: random mutes, hides, forgets and celebrities agree with a model") {
  Graph g;  // names users in CheckInvariants' messages
  for (UserId u = 1; u <= 64; ++u) g.InternUser(u);
  constexpr uint32_t kCap = 5;
  Audience a(kCap, kCap);
  Model m;
  std::mt19937 rng(7);
  for (int step = 0; step < 200'000; ++step) {
    const auto u = static_cast<InternalId>(rng() % 64), x = static_cast<InternalId>(rng() % 64);
    const int dice = static_cast<int>(rng() % 100);
    if (dice < 80 && u != x) {
      const bool mute = dice < 40, on = rng() % 3 != 0;
      auto& set = (mute ? m.mutes : m.hides)[u];
      const bool present = set.count(x) != 0;
      auto r = a.Set(u, x, on, mute, /*enforce_cap=*/true, u + 1);
      if (on && !present && set.size() >= kCap) {
        REQUIRE(r.status().code() == Code::kLimitExceeded);
      } else {
        REQUIRE(r.ok());
        REQUIRE(*r == (on != present));
        if (on)
          set.insert(x);
        else
          set.erase(x);
      }
    } else if (dice < 85) {
      a.Forget(u);
      m.mutes.erase(u);
      m.hides.erase(u);
    } else {
      const bool on = m.celebrities.count(u) == 0;
      (void)a.SetCelebrity(u, on);
      if (on)
        m.celebrities.insert(u);
      else
        m.celebrities.erase(u);
    }
    if (step % 1000 == 0) REQUIRE(a.CheckInvariants(g).ok());
  }
  for (InternalId r = 0; r < 64; ++r) {
    CHECK(a.IsCelebrity(r) == (m.celebrities.count(r) != 0));
    for (InternalId w = 0; w < 64; ++w) {
      const bool muted = m.mutes.count(r) && m.mutes[r].count(w);
      const bool hidden = m.hides.count(w) && m.hides[w].count(r);
      REQUIRE(a.Muted(r, w) == muted);
      REQUIRE(a.HiddenFrom(w, r) == hidden);
      REQUIRE(a.Visible(r, w) == (!muted && !hidden));
    }
  }
  CHECK(a.celebrities() == m.celebrities.size());
}

TEST_CASE("audience: replay adds past the cap; an emptied list leaves no bit behind") {
  Graph g;
  for (UserId u = 1; u <= 4; ++u) g.InternUser(u);
  Audience a(1, 1);
  REQUIRE(*a.Set(0, 1, true, true, true, 1));
  CHECK(a.Set(0, 2, true, true, true, 1).status().code() == Code::kLimitExceeded);
  CHECK(*a.Set(0, 2, true, true, /*enforce_cap=*/false, 1));
  CHECK(a.ListOf(0, true)->size() == 2);
  REQUIRE(*a.Set(0, 1, false, true, true, 1));
  REQUIRE(*a.Set(0, 2, false, true, true, 1));
  CHECK(a.ListOf(0, true) == nullptr);
  CHECK(a.CheckInvariants(g).ok());
}

TEST_CASE("audience: the epoch tag wraps without ever reading 0 or repeating at once") {
  Audience a(1, 1, (uint64_t{1} << 30) - 5);
  int wraps = 0;
  uint32_t last = a.EpochTag();
  for (int i = 0; i < 20; ++i) {
    wraps += a.BumpEpoch();
    REQUIRE(a.EpochTag() != 0);
    REQUIRE(a.EpochTag() != last);
    last = a.EpochTag();
  }
  CHECK(wraps == 1);
}

}  // namespace
}  // namespace relgraph
