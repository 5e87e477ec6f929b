// Named cursors: ACKs survive restarts (from the WAL and from snapshots), never appear as
// events, expire once the WAL no longer holds their next LSN, and refuse bad arguments.
#include <doctest.h>

#include <algorithm>
#include <map>
#include <random>

#include "engine/db.h"
#include "engine/graph/clock.h"
#include "tests/storage/test_dir.h"

namespace relgraph {
namespace {

using testing::TestDir;

DbOptions Options(ManualClock* clock) {
  DbOptions o;
  o.graph.clock = clock;
  o.graph.rate_limit.enabled = false;
  o.wal_segment_bytes = 4096;
  o.background_fanout = false;
  return o;
}

std::map<std::string, uint64_t> Positions(Db& db) {
  std::map<std::string, uint64_t> out;
  for (const Db::CursorInfo& c : db.Cursors()) out[c.name] = c.acked_lsn;
  return out;
}

TEST_CASE("cursors: acks and removals survive restarts from the WAL and from snapshots") {
  TestDir dir;
  ManualClock clock;
  std::map<std::string, uint64_t> model;
  std::mt19937_64 rng(21);
  const std::vector<std::string> names = {"indexer", "notify.v2", "cache-1", "a", "Z_9"};
  for (int life = 0; life < 8; ++life) {
    DbOptions o = Options(&clock);
    o.keep_all_wal = life % 2 == 0;  // half the lives also drop WAL their snapshots cover
    auto db = Db::Open(dir.path(), o);
    REQUIRE(db.ok());
    REQUIRE(Positions(**db) == model);
    for (int i = 0; i < 400; ++i) {
      clock.Advance(1);
      REQUIRE((*db)->Follow(1 + rng() % 50, 1 + rng() % 50).status().code() != Code::kInternal);
      const std::string& name = names[rng() % names.size()];
      const int dice = rng() % 10;
      if (dice < 5) {
        // LSN 0 too (a cursor held before LSN 1), until the WAL no longer holds LSN 1.
        const uint64_t back = rng() % 3;
        const uint64_t lsn = dice == 0 ? 0 : (*db)->last_lsn() - std::min(back, (*db)->last_lsn());
        const Status s = (*db)->AckCursor(name, lsn);
        if (s.code() == Code::kLsnExpired) continue;  // behind what the WAL still keeps
        REQUIRE_MESSAGE(s.ok(), s.ToString());
        model[name] = lsn;
      } else if (dice == 5) {
        const Status s = (*db)->RemoveCursor(name);
        CHECK((s.ok() || s.code() == Code::kNotFound));
        CHECK(s.ok() == (model.erase(name) == 1));
      } else if (dice == 6 && i % 50 == 0) {
        REQUIRE((*db)->Snapshot().ok());
      }
    }
    CHECK(Positions(**db) == model);
  }
}

TEST_CASE("cursors: acks are not events, and a cursor resumes after its acked LSN") {
  TestDir dir;
  ManualClock clock;
  DbOptions o = Options(&clock);
  o.keep_all_wal = true;
  auto db = Db::Open(dir.path(), o);
  REQUIRE(db.ok());
  REQUIRE((*db)->Follow(1, 2).ok());             // 1
  REQUIRE((*db)->AckCursor("indexer", 1).ok());  // 2: a cursor record
  REQUIRE((*db)->Follow(2, 3).ok());             // 3
  auto reader = (*db)->OpenChanges(1);
  REQUIRE(reader.ok());
  std::vector<uint64_t> lsns;
  while ((*reader)->next_lsn() <= (*db)->last_lsn()) {
    REQUIRE((*reader)->Read(10, [&](const ChangeEvent& e) { lsns.push_back(e.lsn); }).ok());
  }
  CHECK(lsns == std::vector<uint64_t>{1, 3});
  CHECK(*(*db)->CursorResumeLsn("indexer") == 2);
  CHECK((*db)->CursorResumeLsn("nobody").status().code() == Code::kNotFound);
}

TEST_CASE("cursors: bad names, LSNs in the future and in-memory Dbs are refused") {
  ManualClock clock;
  auto mem = Db::Open("", Options(&clock));
  REQUIRE(mem.ok());
  CHECK((*mem)->AckCursor("a", 1).code() == Code::kInvalidArgument);
  TestDir dir;
  auto db = Db::Open(dir.path(), Options(&clock));
  REQUIRE(db.ok());
  REQUIRE((*db)->Follow(1, 2).ok());
  for (const std::string& bad :
       std::vector<std::string>{"", "has space", "slash/", std::string(65, 'x'), "é"}) {
    CAPTURE(bad);
    CHECK((*db)->AckCursor(bad, 1).code() == Code::kInvalidArgument);
  }
  CHECK((*db)->AckCursor(std::string(64, 'x'), 1).ok());
  const Status future = (*db)->AckCursor("a", 5);
  CHECK(future.code() == Code::kInvalidArgument);
  CHECK(future.message().find("past the newest") != std::string::npos);
  CHECK((*db)->RemoveCursor("a").code() == Code::kNotFound);
}

TEST_CASE("cursors: one whose next LSN the WAL dropped is expired, and says so") {
  TestDir dir;
  ManualClock clock;
  DbOptions o = Options(&clock);
  o.keep_snapshots = 1;
  o.stream_retention_bytes = 0;  // cursors hold no WAL
  auto db = Db::Open(dir.path(), o);
  REQUIRE(db.ok());
  REQUIRE((*db)->Follow(1, 2).ok());
  REQUIRE((*db)->AckCursor("slow", 1).ok());
  for (int round = 0; round < 3; ++round) {
    for (uint64_t i = 0; i < 300; ++i) REQUIRE((*db)->Follow(10 + round * 300 + i, 3).ok());
    REQUIRE((*db)->Snapshot().ok());
  }
  const Status s = (*db)->CursorResumeLsn("slow").status();
  REQUIRE(s.code() == Code::kLsnExpired);
  CHECK(s.detail() > 2);
  const auto cursors = (*db)->Cursors();
  REQUIRE(cursors.size() == 1);
  CHECK(cursors[0].expired);
  CHECK((*db)->AckCursor("slow", 1).code() == Code::kLsnExpired);
  CHECK((*db)->AckCursor("slow", (*db)->last_lsn()).ok());  // moving it on revives it
  CHECK(!(*db)->Cursors()[0].expired);
}

TEST_CASE("cursors: a cursor holds the WAL it needs, within the retention bytes and age") {
  TestDir dir;
  ManualClock clock;
  DbOptions o = Options(&clock);
  o.keep_snapshots = 1;
  o.stream_retention_bytes = 64 << 10;  // 16 segments of 4 KiB
  o.stream_retention_age_s = 3600;
  auto db = Db::Open(dir.path(), o);
  REQUIRE(db.ok());
  REQUIRE((*db)->Follow(1, 2).ok());
  REQUIRE((*db)->AckCursor("held", 1).ok());
  uint64_t user = 100;
  auto write_and_snapshot = [&](int follows) {
    for (int i = 0; i < follows; ++i) REQUIRE((*db)->Follow(user++, 3).ok());
    REQUIRE((*db)->Snapshot().ok());
  };
  write_and_snapshot(500);  // ~25 KB of WAL: within the budget
  REQUIRE(*(*db)->CursorResumeLsn("held") == 2);
  auto reader = (*db)->OpenChanges(2);
  REQUIRE(reader.ok());
  uint64_t events = 0;
  while ((*reader)->next_lsn() <= (*db)->last_lsn()) {
    REQUIRE((*reader)->Read(100, [&](const ChangeEvent&) { ++events; }).ok());
  }
  CHECK(events == 500);
  // A cursor that has not moved keeps the WAL while it is younger than the age limit...
  clock.Advance(3500 * 1000);
  write_and_snapshot(200);
  CHECK((*db)->CursorResumeLsn("held").ok());
  // ...and loses it past the byte budget (each snapshot writes the WAL out: a segment each).
  for (int i = 0; i < 12; ++i) write_and_snapshot(200);
  CHECK((*db)->CursorResumeLsn("held").status().code() == Code::kLsnExpired);

  // Past the age limit a cursor holds nothing, however small its backlog.
  REQUIRE((*db)->AckCursor("aging", (*db)->last_lsn()).ok());
  write_and_snapshot(100);
  CHECK((*db)->CursorResumeLsn("aging").ok());
  clock.Advance(3601 * 1000);
  write_and_snapshot(300);
  CHECK((*db)->CursorResumeLsn("aging").status().code() == Code::kLsnExpired);
}

TEST_CASE("cursors: an ACK of LSN 0 holds the WAL from LSN 1 for a consumer with no event yet") {
  TestDir dir;
  ManualClock clock;
  DbOptions o = Options(&clock);
  o.keep_snapshots = 1;
  o.stream_retention_bytes = 1 << 20;
  o.stream_retention_age_s = 3600;
  auto db = Db::Open(dir.path(), o);
  REQUIRE(db.ok());
  REQUIRE((*db)->last_lsn() == 0);  // nothing logged: no LSN >= 1 to ACK yet
  REQUIRE((*db)->AckCursor("new", 0).ok());
  CHECK(Positions(**db) == std::map<std::string, uint64_t>{{"new", 0}});
  CHECK(*(*db)->CursorResumeLsn("new") == 1);
  uint64_t user = 100;
  for (int round = 0; round < 3; ++round) {  // each snapshot would drop the WAL it covers
    for (int i = 0; i < 300; ++i) REQUIRE((*db)->Follow(user++, 3).ok());
    REQUIRE((*db)->Snapshot().ok());
  }
  CHECK((*db)->OldestWalLsn() == 1);
  CHECK(!(*db)->Cursors()[0].expired);
  auto read_all = [&](Db& d) {
    auto reader = d.OpenChanges(*d.CursorResumeLsn("new"));
    REQUIRE(reader.ok());
    uint64_t events = 0;
    while ((*reader)->next_lsn() <= d.last_lsn()) {
      REQUIRE((*reader)->Read(100, [&](const ChangeEvent&) { ++events; }).ok());
    }
    return events;
  };
  CHECK(read_all(**db) == 900);
  // Recovery brings it back at 0 (from the snapshot, and from the WAL after a removal and a
  // new ACK of 0), still holding the WAL.
  REQUIRE((*db)->RemoveCursor("new").ok());
  REQUIRE((*db)->AckCursor("new", 0).ok());
  db->reset();
  db = Db::Open(dir.path(), o);
  REQUIRE(db.ok());
  CHECK(Positions(**db) == std::map<std::string, uint64_t>{{"new", 0}});
  CHECK(read_all(**db) == 900);
  // Once it moves on, the WAL before it goes at the next snapshot.
  REQUIRE((*db)->AckCursor("new", 600).ok());
  REQUIRE((*db)->Snapshot().ok());
  CHECK((*db)->OldestWalLsn() > 1);
  CHECK((*db)->OldestWalLsn() <= 601);
  // And without a cursor holding it, LSN 0 is behind what the WAL keeps.
  CHECK((*db)->AckCursor("other", 0).code() == Code::kLsnExpired);
}

}  // namespace
}  // namespace relgraph
