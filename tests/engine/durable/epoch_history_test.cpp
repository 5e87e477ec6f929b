// EpochHistory: epochs only go forward, a loaded history is checked like an applied one, and
// CheckFollower accepts exactly the nodes whose last record the history also holds.
#include <doctest.h>

#include <random>

#include "engine/durable/epoch_history.h"

namespace relgraph {
namespace {

TEST_CASE("epoch history: starts in epoch 1 and only moves forward") {
  EpochHistory h;
  CHECK(h.current() == Epoch{1, 0, 1, 0});
  CHECK(h.Apply(2, 9, 10, 5).ok());
  CHECK(h.Apply(2, 7, 20, 5).code() == Code::kCorruption);  // same number
  CHECK(h.Apply(3, 7, 10, 5).code() == Code::kCorruption);  // same LSN
  CHECK(h.Apply(3, 7, 11, 5).ok());
  EpochHistory loaded;
  CHECK(loaded.Load(h.epochs()).ok());
  CHECK(loaded.epochs() == h.epochs());
  CHECK(loaded.Load({Epoch{1, 0, 1, 0}, Epoch{3, 1, 5, 0}, Epoch{2, 1, 9, 0}}).code() ==
        Code::kCorruption);
  CHECK(loaded.epochs() == h.epochs());  // a failed load changes nothing
}

// The reference: a node at (epoch e, lsn L) follows iff the history has e with the same id
// and the next epoch (if any) begins after L.
TEST_CASE("epoch history: CheckFollower against a reference over random histories") {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 2000; ++round) {
    EpochHistory h;
    std::vector<Epoch> list = {Epoch{}};
    uint64_t lsn = 1;
    for (int n = static_cast<int>(rng() % 5); n > 0; --n) {
      lsn += 1 + rng() % 20;
      Epoch e{list.back().number + 1, rng() | 1, lsn, 0};
      REQUIRE(h.Apply(e.number, e.id, e.first_lsn, 0).ok());
      list.push_back(e);
    }
    const uint64_t number = 1 + rng() % (list.size() + 1);
    const Epoch* same = number <= list.size() ? &list[number - 1] : nullptr;
    const uint64_t id = same != nullptr && rng() % 4 != 0 ? same->id : rng();
    const uint64_t last = rng() % (lsn + 25);
    bool want = same != nullptr && id == same->id &&
                (number == list.size() || last < list[number].first_lsn);
    const Status s = h.CheckFollower(number, id, last);
    CHECK(s.ok() == want);
    if (!s.ok()) CHECK(s.code() == Code::kDiverged);
  }
}

}  // namespace
}  // namespace relgraph
