#include <doctest.h>

#include <algorithm>
#include <random>
#include <unordered_map>
#include <vector>

#include "engine/graph/id_map.h"

namespace relgraph {
namespace {

TEST_CASE("id_map: interning is dense, stable and agrees with a hash map through growth") {
  IdMap map;
  std::unordered_map<UserId, InternalId> ref;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200'000; ++i) {
    // Mix of fresh random ids, repeats, and sequential ids that collide in low bits.
    const UserId u = i % 3 == 0   ? (rng() | 1)
                     : i % 3 == 1 ? UserId(i) * 4096 + 1
                                  : UserId(1 + rng() % 5000);
    const InternalId id = map.Intern(u);
    auto [it, inserted] = ref.try_emplace(u, static_cast<InternalId>(ref.size()));
    REQUIRE(id == it->second);
    REQUIRE(map.External(id) == u);
  }
  CHECK(map.size() == ref.size());
  for (const auto& [u, id] : ref) REQUIRE(map.Find(u) == id);
  CHECK(map.Find(10'002) == kNoInternalId);  // even and > 5000: no generator above makes it
}

TEST_CASE("id_map: id 0 is never found") {
  IdMap map;
  CHECK(map.Find(0) == kNoInternalId);
  for (UserId u = 1; u <= 1000; ++u) map.Intern(u);
  CHECK(map.Find(0) == kNoInternalId);
}

TEST_CASE("id_map: reserve keeps lookups right and memory is accounted") {
  IdMap map;
  map.Intern(42);
  map.Reserve(100'000);
  CHECK(map.Find(42) == 0);
  CHECK(map.MemoryBytes() >= 100'000 * 5);
  CHECK(map.RecordBytes() >= sizeof(UserRecord));
}

TEST_CASE("id_map: users whose home slots are all at the table's end wrap around it") {
  // Home slots grow with the hash, so ids whose hash starts with 0xf all start probing in the
  // last sixteenth of the table: most must wrap to its start.
  IdMap map;
  std::vector<UserId> crowded;
  std::mt19937_64 rng(5);
  while (crowded.size() < 20'000) {
    const UserId u = rng() | 1;
    if (IdMap::Hash(u) >> 60 == 0xf) crowded.push_back(u);
  }
  for (size_t i = 0; i < crowded.size(); ++i) REQUIRE(map.Intern(crowded[i]) == i);
  for (size_t i = 0; i < crowded.size(); ++i) REQUIRE(map.Find(crowded[i]) == i);
  CHECK(map.Find(2) == kNoInternalId);
  IdMap bulk;
  REQUIRE(bulk.AppendAll(crowded) == crowded.size());
  REQUIRE(bulk.IndexAll() == crowded.size());
  for (size_t i = 0; i < crowded.size(); ++i) REQUIRE(bulk.Find(crowded[i]) == i);
}

TEST_CASE("id_map: keys that share a fingerprint and a neighbourhood are told apart") {
  // A slot keeps only 8 bits of its key's hash: ids whose hashes agree in the low byte (the
  // fingerprint) and start with the same nibble (so they probe the same stretch of the
  // table) can only be told apart by the external ids. Absent ids with that fingerprint must
  // not be found either.
  std::vector<UserId> same;
  std::vector<UserId> absent;
  std::mt19937_64 rng(9);
  while (same.size() < 5'000 || absent.size() < 5'000) {
    const UserId u = rng() | 1;
    const uint64_t h = IdMap::Hash(u);
    if ((h & 0xff) != 0x5a || h >> 60 != 0x3) continue;
    (same.size() < 5'000 ? same : absent).push_back(u);
  }
  IdMap map;
  for (size_t i = 0; i < same.size(); ++i) REQUIRE(map.Intern(same[i]) == i);
  for (size_t i = 0; i < same.size(); ++i) REQUIRE(map.Find(same[i]) == i);
  for (UserId u : absent) REQUIRE(map.Find(u) == kNoInternalId);
  IdMap bulk;
  REQUIRE(bulk.AppendAll(same) == same.size());
  REQUIRE(bulk.IndexAll() == same.size());
  for (size_t i = 0; i < same.size(); ++i) REQUIRE(bulk.Find(same[i]) == i);
  for (UserId u : absent) REQUIRE(bulk.Find(u) == kNoInternalId);
}

// A restarted server's map is bulk-indexed at a load of 0.8: its first new user starts a
// growth. The users move kGrowthStep per Intern (or the step set_growth_step gives, down to
// 2, where the new users fill the larger table the most before the growth ends), and every
// lookup stays right meanwhile, through Find and through the pipelined PrefetchCandidate +
// Confirm.
TEST_CASE("id_map: growing moves users in steps and answers every lookup right meanwhile") {
  for (const size_t step : {IdMap::kGrowthStep, size_t{64}, size_t{2}}) {
    CAPTURE(step);
    std::mt19937_64 rng(23);
    constexpr size_t kUsers = 100'000;
    std::vector<UserId> ids(kUsers);
    for (UserId& u : ids) u = rng() | 1;
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    IdMap m;
    m.set_growth_step(step);
    REQUIRE(m.AppendAll(ids) == ids.size());
    REQUIRE(m.IndexAll() == ids.size());
    std::unordered_map<UserId, InternalId> ref;
    for (size_t i = 0; i < ids.size(); ++i) ref[ids[i]] = static_cast<InternalId>(i);
    std::vector<UserId> known = ids;
    auto check = [&](UserId u) {
      const auto it = ref.find(u);
      const InternalId want = it == ref.end() ? kNoInternalId : it->second;
      REQUIRE(m.Find(u) == want);
      m.Prefetch(u);
      REQUIRE(m.Confirm(m.PrefetchCandidate(u), u) == want);
    };
    CHECK_FALSE(m.growing());
    size_t interns = 0;
    do {
      const UserId fresh = rng() & ~UserId{1};  // even: never one of the odd bulk ids
      if (fresh == 0 || ref.count(fresh)) continue;
      REQUIRE(m.Intern(fresh) == ref.size());
      ref[fresh] = static_cast<InternalId>(ref.size());
      known.push_back(fresh);
      ++interns;
      if (interns == 1) REQUIRE(m.growing());  // the first new user started it
      const int checks = step < 64 ? 2 : 64;   // a step of 2 takes 50,000 interns
      for (int k = 0; k < checks; ++k) check(known[rng() % known.size()]);
      for (int k = 0; k < checks / 8 + 1; ++k) check(rng() | 1);  // most are unknown
    } while (m.growing());
    // Spread over the interns: never more than `step` users moved by one of them.
    CHECK(interns == (ids.size() + step - 1) / step);
    for (UserId u : known) check(u);
  }
}

// A Db's background worker finishes a growth with Grow, between writes, with no new users:
// each call moves at most the users it is given, lookups stay right between calls, and the
// last call frees the old table.
TEST_CASE("id_map: Grow finishes a growth without new users, a bounded number at a time") {
  std::mt19937_64 rng(29);
  std::vector<UserId> ids(50'000);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = IdMap::Hash(i + 1) | 1;
  IdMap m;
  REQUIRE(m.AppendAll(ids) == ids.size());
  REQUIRE(m.IndexAll() == ids.size());
  CHECK_FALSE(m.Grow(100));  // nothing to grow: a no-op
  const size_t one_table = m.MemoryBytes();
  const UserId fresh = 2;  // even: not a bulk id
  REQUIRE(m.Intern(fresh) == ids.size());
  REQUIRE(m.growing());
  const size_t both_tables = m.MemoryBytes();
  CHECK(both_tables > 2 * one_table);            // the old table (0.8 load) and the 1.5x new one
  size_t calls = 0, given = IdMap::kGrowthStep;  // the Intern moved kGrowthStep
  for (bool more = true; more; ++calls) {
    const size_t n = 1 + rng() % 3000;
    more = m.Grow(n);
    given += n;
    REQUIRE(more == m.growing());
    if (more) REQUIRE(given < ids.size());  // never more moved than it was given
    for (int k = 0; k < 32; ++k) {
      const size_t i = rng() % ids.size();
      REQUIRE(m.Find(ids[i]) == i);
      REQUIRE(m.Find((rng() & ~UserId{1}) | 4) == kNoInternalId);  // even, not `fresh`
    }
    REQUIRE(m.Find(fresh) == ids.size());
  }
  CHECK(given >= ids.size());
  CHECK(calls > 10);
  CHECK(m.MemoryBytes() < both_tables - one_table / 2);  // the old table is gone
  for (size_t i = 0; i < ids.size(); ++i) REQUIRE(m.Find(ids[i]) == i);
}

TEST_CASE("id_map: a table sized for its users runs at a load of 0.8, a grown one above 0.5") {
  constexpr size_t kUsers = 1'000'000;
  std::vector<UserId> ids(kUsers);
  for (size_t i = 0; i < kUsers; ++i) ids[i] = IdMap::Hash(i + 1) | 1;
  IdMap bulk;
  bulk.AppendAll(ids);
  bulk.IndexAll();
  const double bulk_slot_bytes = double(bulk.MemoryBytes()) / kUsers;
  CHECK(bulk_slot_bytes >= 5 / 0.81);
  CHECK(bulk_slot_bytes <= 5 / 0.79);
  // The records: 28 bytes each, in 2 MiB chunks (the last one partly used).
  CHECK(double(bulk.RecordBytes()) / kUsers >= 28);
  CHECK(double(bulk.RecordBytes()) / kUsers <= 28 + 2.1);
  IdMap grown;
  for (UserId u : ids) grown.Intern(u);
  const double grown_slot_bytes = double(grown.MemoryBytes()) / kUsers;
  CHECK(grown_slot_bytes >= 5 / 0.81);
  CHECK(grown_slot_bytes <= 5 / 0.53);
}

}  // namespace
}  // namespace relgraph

namespace relgraph {
namespace {

TEST_CASE("id_map: a bulk load finds every id, and refuses id 0 and repeats by position") {
  std::mt19937_64 rng(11);
  for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, size_t{300'000}}) {
    CAPTURE(n);
    std::vector<UserId> ids(n);
    for (UserId& u : ids) u = rng() % 3 == 0 ? 1 + rng() % (4 * n + 1) : rng() | 1;
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::shuffle(ids.begin(), ids.end(), rng);
    IdMap m;
    REQUIRE(m.AppendAll(ids) == ids.size());
    REQUIRE(m.IndexAll() == ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      REQUIRE(m.Find(ids[i]) == i);
      REQUIRE(m.External(static_cast<InternalId>(i)) == ids[i]);
    }
    CHECK(m.Find(0) == kNoInternalId);
    if (n == 0) continue;
    const UserId fresh = m.Intern(ids[0] == 7 ? 8 : 7);  // interning goes on afterwards
    CHECK(m.Find(ids[0] == 7 ? 8 : 7) == fresh);
    // A repeat is named by the later of its two positions; a 0 by its own.
    std::vector<UserId> repeated = ids;
    repeated.push_back(ids[ids.size() / 2]);
    IdMap r;
    REQUIRE(r.AppendAll(repeated) == repeated.size());
    CHECK(r.IndexAll() == ids.size());
    std::vector<UserId> zero = ids;
    zero[ids.size() / 3] = 0;
    IdMap z;
    CHECK(z.AppendAll(zero) == ids.size() / 3);
  }
}

}  // namespace
}  // namespace relgraph
