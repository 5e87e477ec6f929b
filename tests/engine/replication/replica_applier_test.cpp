// Replication in the engine: a replica Db that applies its primary's raw records
// (Db::ApplyReplicated) answers every read like the primary, timelines included, while it
// serves reads between batches; it survives restarts, starts from a copied snapshot, and the
// epoch history detects a node that holds records its primary never had.
#include <doctest.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "engine/db.h"
#include "engine/graph/clock.h"
#include "storage/env/file_names.h"
#include "tests/storage/test_dir.h"

namespace relgraph {
namespace {

using testing::TestDir;

DbOptions Options(ManualClock* clock) {
  DbOptions o;
  o.graph.clock = clock;
  o.graph.rate_limit.enabled = false;
  o.graph.max_following = 40;
  o.feed.celebrity_fans = 12;  // authors cross the push/pull line back and forth
  o.feed.posts_per_author = 6;
  o.wal_segment_bytes = 8192;
  o.background_fanout = false;
  return o;
}

// Raw records as a replica receives them, owning their payloads.
struct RecordBatch {
  std::vector<std::string> payloads;
  std::vector<Db::ReplicatedRecord> records;
  // Appends up to `max` visible records from the reader; returns how many.
  Result<size_t> Read(ChangeReader& reader, size_t max) {
    auto n = reader.ReadRecords(max, [&](const WalRecordView& r) {
      payloads.emplace_back(r.payload);
      records.push_back({r.lsn, r.type, {}});
      return Status::OK();
    });
    // The views are set once the payloads stop moving.
    for (size_t i = 0; i < records.size(); ++i) records[i].payload = payloads[i];
    return n;
  }
};

// Copies every record after the replica's newest from the primary into the replica.
Status CatchUp(Db& primary, Db& replica, size_t max_batch = 97) {
  auto reader = primary.OpenChanges(replica.last_lsn() + 1);
  if (!reader.ok()) return reader.status();
  for (;;) {
    RecordBatch batch;
    auto n = batch.Read(**reader, max_batch);
    if (!n.ok()) return n.status();
    if (*n == 0) {
      if (replica.last_lsn() == primary.last_lsn()) return Status::OK();
      std::this_thread::sleep_for(std::chrono::microseconds(200));  // the primary writes it out
      continue;
    }
    RELGRAPH_RETURN_IF_ERROR(replica.ApplyReplicated(batch.records));
  }
}

struct Workload {
  std::mt19937_64 rng;
  ManualClock* clock;
  uint64_t next_post = 1;
  std::vector<std::pair<UserId, PostId>> posts;
  explicit Workload(uint64_t seed, ManualClock* c) : rng(seed), clock(c) {}

  UserId User() { return 1 + rng() % 60; }
  // One random operation on the primary (errors such as follow_limit are part of the mix).
  void Step(Db& db) {
    clock->Advance(rng() % 3);
    const UserId a = User(), b = User();
    switch (rng() % 22) {
      case 0:
      case 1:
      case 2:
      case 3:
      case 4:
      case 5:
      case 6:
        (void)db.Follow(a, b);
        break;
      case 7:
      case 8:
        (void)db.Unfollow(a, b);
        break;
      case 9:
        if (rng() % 8 == 0) (void)db.RemoveUser(a);
        break;
      case 10:
      case 11:
      case 12: {
        const PostId p = next_post++;
        if (db.Publish(a, p, rng() % 3, std::nullopt).ok()) posts.push_back({a, p});
        break;
      }
      case 13:
        if (!posts.empty()) {
          const auto [author, post] = posts[rng() % posts.size()];
          (void)db.DeletePost(author, post);
        }
        break;
      case 14:
        (void)db.Mute(a, b, rng() % 3 != 0);
        break;
      case 15:
        (void)db.Hide(a, b, rng() % 3 != 0);
        break;
      case 16: {  // LSN 0 too: a cursor held before LSN 1
        const std::string name = "c" + std::to_string(rng() % 3);
        (void)db.AckCursor(name, rng() % 4 == 0 ? 0 : db.last_lsn());
        break;
      }
      case 20:  // blocks (edges and timelines change on the replica through its hooks)
        (void)(rng() % 3 != 0 ? db.Block(a, b).status() : db.Unblock(a, b).status());
        break;
      case 21: {  // private accounts and requests, among the first ten users
        const UserId t = 1 + rng() % 10;
        const int dice = static_cast<int>(rng() % 4);
        if (dice == 0) (void)db.SetPrivate(t, rng() % 3 != 0);
        if (dice == 1) (void)db.Approve(t, a);
        if (dice == 2) (void)db.Reject(t, a);
        if (dice == 3) (void)db.Withdraw(a, t);
        break;
      }
      default:
        (void)db.Publish(a, next_post++, 0, std::nullopt);
        break;
    }
  }
};

std::string Timeline(Db& db, UserId u) {
  std::string out;
  FeedPageRequest q;
  q.limit = 50;
  auto page = db.Timeline(u, q);
  if (!page.ok()) return page.status().ToString();
  for (const FeedEntry& e : page->entries) {
    out +=
        std::to_string(e.post) + "/" + std::to_string(e.author) + "/" + std::to_string(e.ts) + " ";
  }
  return out;
}

// Every read the two must agree on.
void CheckSame(Db& primary, Db& replica) {
  primary.DrainFanout();
  replica.DrainFanout();
  REQUIRE(replica.last_lsn() == primary.last_lsn());
  CHECK(replica.Read([](const Graph& g) { return g.Digest(); }) ==
        primary.Read([](const Graph& g) { return g.Digest(); }));
  CHECK(replica.ReadFeed([](const Graph& g, const Feed& f) { return f.Digest(g); }) ==
        primary.ReadFeed([](const Graph& g, const Feed& f) { return f.Digest(g); }));
  for (UserId u = 1; u <= 60; ++u) {
    INFO("user " << u);
    CHECK(Timeline(replica, u) == Timeline(primary, u));
    auto rc = replica.Read([&](const Graph& g) { return g.GetCounts(u); });
    auto pc = primary.Read([&](const Graph& g) { return g.GetCounts(u); });
    CHECK(rc.ok() == pc.ok());
    if (rc.ok() && pc.ok()) CHECK((rc->fans == pc->fans && rc->friends == pc->friends));
  }
  std::vector<std::pair<std::string, uint64_t>> pc, rc;
  for (const auto& c : primary.Cursors()) pc.push_back({c.name, c.acked_lsn});
  for (const auto& c : replica.Cursors()) rc.push_back({c.name, c.acked_lsn});
  CHECK(pc == rc);
  CHECK(replica.epochs() == primary.epochs());
  CHECK(replica.CheckInvariants().ok());
}

TEST_CASE("replication: a replica applying raw records answers every read like its primary") {
  TestDir pdir, rdir;
  ManualClock clock;
  auto primary = Db::Open(pdir.path(), Options(&clock));
  REQUIRE(primary.ok());
  auto replica = std::make_unique<std::unique_ptr<Db>>();
  {
    auto r = Db::Open(rdir.path(), Options(&clock));
    REQUIRE(r.ok());
    *replica = std::move(*r);
  }
  Workload w(7, &clock);
  std::mt19937_64 rng(8);
  for (int round = 0; round < 60; ++round) {
    const int steps = 1 + static_cast<int>(rng() % 400);
    for (int i = 0; i < steps; ++i) w.Step(**primary);
    // Reads on the replica between batches build inboxes that the applied records must
    // then keep exact (the live paths, not replay's).
    for (int i = 0; i < 10; ++i) Timeline(**replica, w.User());
    if (rng() % 3 == 0) (*replica)->RunFanoutBatch();
    REQUIRE(CatchUp(**primary, **replica, 1 + rng() % 200).ok());
    if (round % 10 == 9) CheckSame(**primary, **replica);
    if (round % 15 == 14) {  // a replica restarts from its own WAL (and snapshots)
      if (rng() % 2 == 0) REQUIRE((*replica)->Snapshot().ok());
      replica->reset();
      auto r = Db::Open(rdir.path(), Options(&clock));
      REQUIRE(r.ok());
      *replica = std::move(*r);
    }
  }
  CheckSame(**primary, **replica);
  CHECK((*primary)->Read([](const Graph& g) { return g.block_count(); }) > 0);
  // The replica's own change stream is the primary's (from what its WAL still holds).
  const uint64_t from = (*replica)->OldestWalLsn();
  auto a = (*primary)->OpenChanges(from), b = (*replica)->OpenChanges(from);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  auto drain = [](ChangeReader& reader) {
    std::vector<uint64_t> out;
    for (;;) {
      auto n =
          reader.Read(1000, [&](const ChangeEvent& e) { out.push_back(e.lsn * 16 + e.a % 16); });
      REQUIRE(n.ok());
      if (*n == 0) return out;
    }
  };
  const std::vector<uint64_t> ea = drain(**a), eb = drain(**b);
  CHECK(ea == eb);
  CHECK(ea.size() > 100);
}

TEST_CASE("replication: a replica starts from a copy of the primary's snapshot") {
  TestDir pdir, rdir;
  ManualClock clock;
  auto primary = Db::Open(pdir.path(), Options(&clock));
  REQUIRE(primary.ok());
  Workload w(11, &clock);
  for (int i = 0; i < 3000; ++i) w.Step(**primary);
  auto snap = (*primary)->Snapshot();
  REQUIRE(snap.ok());
  for (int i = 0; i < 2000; ++i) w.Step(**primary);  // after the snapshot
  std::filesystem::copy_file(JoinPath(pdir.path(), SnapshotName(snap->lsn)),
                             JoinPath(rdir.path(), SnapshotName(snap->lsn)));
  auto replica = Db::Open(rdir.path(), Options(&clock));
  REQUIRE(replica.ok());
  CHECK((*replica)->last_lsn() == snap->lsn);
  REQUIRE(CatchUp(**primary, **replica).ok());
  CheckSame(**primary, **replica);
}

TEST_CASE("replication: an ACK of LSN 0 reaches a replica, its restarts and its snapshots") {
  TestDir pdir, rdir, sdir;
  ManualClock clock;
  auto primary = Db::Open(pdir.path(), Options(&clock));
  auto replica = Db::Open(rdir.path(), Options(&clock));
  REQUIRE(primary.ok());
  REQUIRE(replica.ok());
  REQUIRE((*primary)->AckCursor("fresh", 0).ok());  // LSN 1, before any change
  for (UserId u = 2; u < 30; ++u) REQUIRE((*primary)->Follow(1, u).ok());
  REQUIRE((*primary)->AckCursor("later", 0).ok());
  REQUIRE(CatchUp(**primary, **replica).ok());
  using Positions = std::vector<std::pair<std::string, uint64_t>>;
  auto positions = [](Db& db) {
    Positions out;
    for (const auto& c : db.Cursors()) out.push_back({c.name, c.acked_lsn});
    return out;
  };
  const Positions want = {{"fresh", 0}, {"later", 0}};
  CHECK(positions(**replica) == want);
  // From its WAL, then from its snapshot.
  for (int restart = 0; restart < 2; ++restart) {
    if (restart == 1) REQUIRE((*replica)->Snapshot().ok());
    replica->reset();
    replica = Db::Open(rdir.path(), Options(&clock));
    REQUIRE(replica.ok());
    CHECK(positions(**replica) == want);
    CHECK(*(*replica)->CursorResumeLsn("fresh") == 1);
  }
  // A replica started from a copy of the primary's snapshot.
  auto snap = (*primary)->Snapshot();
  REQUIRE(snap.ok());
  std::filesystem::copy_file(JoinPath(pdir.path(), SnapshotName(snap->lsn)),
                             JoinPath(sdir.path(), SnapshotName(snap->lsn)));
  auto copy = Db::Open(sdir.path(), Options(&clock));
  REQUIRE(copy.ok());
  CHECK(positions(**copy) == want);
}

TEST_CASE("replication: under `always`, applied records are fsynced, or handed back to wait for") {
  TestDir pdir, rdir;
  ManualClock clock;
  auto primary = Db::Open(pdir.path(), Options(&clock));
  DbOptions ro = Options(&clock);
  ro.durability = DurabilityMode::kAlways;
  auto replica = Db::Open(rdir.path(), ro);
  REQUIRE(primary.ok());
  REQUIRE(replica.ok());
  Workload w(5, &clock);
  for (int i = 0; i < 300; ++i) w.Step(**primary);
  REQUIRE(CatchUp(**primary, **replica).ok());  // without commit_lsn: fsynced on return
  CHECK((*replica)->durable_lsn() == (*replica)->last_lsn());
  for (int i = 0; i < 300; ++i) (void)(*primary)->Follow(500 + i, 501 + i);  // a follow run
  auto reader = (*primary)->OpenChanges((*replica)->last_lsn() + 1);
  REQUIRE(reader.ok());
  RecordBatch batch;
  while (batch.records.size() < 300) REQUIRE(batch.Read(**reader, 1000).ok());
  uint64_t commit = 0;
  REQUIRE((*replica)->ApplyReplicated(batch.records, &commit).ok());
  CHECK(commit == (*replica)->last_lsn());
  REQUIRE((*replica)->WaitDurable(commit).ok());
  CHECK((*replica)->durable_lsn() == (*replica)->last_lsn());
}

TEST_CASE("replication: records out of order, foreign records and mismatches are refused") {
  TestDir pdir, rdir;
  ManualClock clock;
  auto primary = Db::Open(pdir.path(), Options(&clock));
  auto replica = Db::Open(rdir.path(), Options(&clock));
  REQUIRE(primary.ok());
  REQUIRE(replica.ok());
  REQUIRE((*primary)->Follow(1, 2).ok());
  REQUIRE(CatchUp(**primary, **replica).ok());
  const WalPayload follow = EncodeFollowRecord(3, 4, 5, 0);
  Db::ReplicatedRecord gap{5, 1, follow.view()};
  Status s = (*replica)->ApplyReplicated({&gap, 1});
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("LSN 2 was expected") != std::string::npos);
  const WalPayload again = EncodeFollowRecord(1, 2, 5, 0);
  Db::ReplicatedRecord dup{2, 1, again.view()};
  s = (*replica)->ApplyReplicated({&dup, 1});
  CHECK(s.code() == Code::kCorruption);
  CHECK(s.message().find("follow of an edge it holds") != std::string::npos);
  Db::ReplicatedRecord junk{2, 77, again.view()};
  CHECK((*replica)->ApplyReplicated({&junk, 1}).code() == Code::kCorruption);
  const WalPayload del = EncodePairRecord(1, 99, 5);
  Db::ReplicatedRecord missing{2, 5, del.view()};
  CHECK((*replica)->ApplyReplicated({&missing, 1}).code() == Code::kCorruption);
  const WalPayload unfollow_absent = EncodePairRecord(2, 1, 5);
  Db::ReplicatedRecord lacking{2, 2, unfollow_absent.view()};
  s = (*replica)->ApplyReplicated({&lacking, 1});
  CHECK(s.code() == Code::kCorruption);
  CHECK(s.message().find("LSN 2 does not fit") != std::string::npos);
  CHECK(s.message().find("unfollow of an edge it lacks") != std::string::npos);
  CHECK((*replica)->last_lsn() == 1);  // nothing refused was logged
  CHECK((*replica)->CheckInvariants().ok());
}

TEST_CASE("replication: a run stops at the record that does not fit; the ones before it stay") {
  TestDir dir;
  ManualClock clock;
  auto replica = Db::Open(dir.path(), Options(&clock));
  REQUIRE(replica.ok());
  // follow 1->2, follow 2->1, unfollow 1->2, follow 2->1 again (it exists: the mismatch).
  const WalPayload payloads[] = {EncodeFollowRecord(1, 2, 5, 0), EncodeFollowRecord(2, 1, 6, 0),
                                 EncodePairRecord(1, 2, 7), EncodeFollowRecord(2, 1, 8, 0),
                                 EncodeFollowRecord(3, 1, 9, 0)};
  const uint8_t types[] = {1, 1, 2, 1, 1};
  std::vector<Db::ReplicatedRecord> run;
  for (size_t i = 0; i < 5; ++i) run.push_back({i + 1, types[i], payloads[i].view()});
  Status s = (*replica)->ApplyReplicated(run);
  CHECK(s.code() == Code::kCorruption);
  CHECK(s.message().find("LSN 4 does not fit") != std::string::npos);
  CHECK((*replica)->last_lsn() == 3);
  CHECK((*replica)->Read([](const Graph& g) { return *g.GetRelation(2, 1); }) ==
        Relation::kFollowing);
  CHECK((*replica)->Read([](const Graph& g) { return *g.GetRelation(3, 1); }) == Relation::kNone);
  CHECK((*replica)->CheckInvariants().ok());
}

TEST_CASE("replication: epochs record promotions and find divergence") {
  TestDir pdir, rdir;
  ManualClock clock;
  auto primary = Db::Open(pdir.path(), Options(&clock));
  auto replica = Db::Open(rdir.path(), Options(&clock));
  REQUIRE(primary.ok());
  REQUIRE(replica.ok());
  Workload w(3, &clock);
  for (int i = 0; i < 500; ++i) w.Step(**primary);
  REQUIRE(CatchUp(**primary, **replica).ok());
  const uint64_t failover_lsn = (*primary)->last_lsn();
  for (int i = 0; i < 50; ++i) (void)(*primary)->Follow(100 + i, 200);  // never replicated
  // The replica is promoted: epoch 2 starts at the next LSN.
  auto e2 = (*replica)->StartEpoch();
  REQUIRE(e2.ok());
  CHECK(e2->number == 2);
  CHECK(e2->first_lsn == failover_lsn + 1);
  CHECK(e2->id != 0);
  for (int i = 0; i < 20; ++i) w.Step(**replica);
  // The old primary (epoch 1, 50 records past the failover) may not follow it...
  const Epoch old = (*primary)->epoch();
  CHECK(old.number == 1);
  Status s = (*replica)->CheckFollower(old.number, old.id, (*primary)->last_lsn());
  CHECK(s.code() == Code::kDiverged);
  CHECK(s.message().find(std::to_string(failover_lsn + 1) + "..") != std::string::npos);
  // ...but a node that stopped at or before the failover may.
  CHECK((*replica)->CheckFollower(1, 0, failover_lsn).ok());
  CHECK((*replica)->CheckFollower(1, 0, failover_lsn - 10).ok());
  CHECK((*replica)->CheckFollower(2, e2->id, (*replica)->last_lsn()).ok());
  CHECK((*replica)->CheckFollower(2, e2->id + 2, failover_lsn).code() == Code::kDiverged);
  CHECK((*replica)->CheckFollower(3, 5, failover_lsn).code() == Code::kDiverged);
  CHECK((*replica)->CheckFollower(2, e2->id, (*replica)->last_lsn() + 1).code() == Code::kDiverged);
  // The history survives restarts, from the WAL and from a snapshot.
  for (bool snapshot : {false, true}) {
    if (snapshot) REQUIRE((*replica)->Snapshot().ok());
    replica->reset();
    replica = Db::Open(rdir.path(), Options(&clock));
    REQUIRE(replica.ok());
    REQUIRE((*replica)->epochs().size() == 2);
    CHECK((*replica)->epochs()[1] == *e2);
  }
  // A third node that follows the new primary from scratch gets its history with the records.
  TestDir tdir;
  auto third = Db::Open(tdir.path(), Options(&clock));
  REQUIRE(third.ok());
  REQUIRE(CatchUp(**replica, **third).ok());
  CHECK((*third)->epochs() == (*replica)->epochs());

  // The diverged old primary is told to resynchronize: it resets to the new primary's
  // snapshot (dropping its 50 records) and follows it from there.
  auto snap = (*replica)->Snapshot();
  REQUIRE(snap.ok());
  TestDir transfer;
  const std::string copy = JoinPath(transfer.path(), "fetched.rgs");
  std::filesystem::copy_file(JoinPath(rdir.path(), SnapshotName(snap->lsn)), copy);
  for (int i = 0; i < 30; ++i) w.Step(**replica);
  Status reset = (*primary)->ResetToSnapshot(copy);
  INFO(reset.ToString());
  REQUIRE(reset.ok());
  CHECK((*primary)->last_lsn() == snap->lsn);
  CHECK((*primary)->OldestWalLsn() == snap->lsn + 1);
  const Epoch e = (*primary)->epoch();
  CHECK((*replica)->CheckFollower(e.number, e.id, (*primary)->last_lsn()).ok());
  REQUIRE(CatchUp(**replica, **primary).ok());
  CheckSame(**replica, **primary);
  // It restarts into the same state, and a bad file changes nothing.
  primary->reset();
  primary = Db::Open(pdir.path(), Options(&clock));
  REQUIRE(primary.ok());
  CheckSame(**replica, **primary);
  {
    std::FILE* f = std::fopen(copy.c_str(), "w");
    std::fputs("not a snapshot", f);
    std::fclose(f);
  }
  CHECK(!(*primary)->ResetToSnapshot(copy).ok());
  CheckSame(**replica, **primary);
  // The empty state, too (a primary that has no snapshot yet).
  REQUIRE((*primary)->ResetToSnapshot("").ok());
  CHECK((*primary)->last_lsn() == 0);
  CHECK((*primary)->Read([](const Graph& g) { return g.edge_count(); }) == 0);
}

}  // namespace
}  // namespace relgraph
