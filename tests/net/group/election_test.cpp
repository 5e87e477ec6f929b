// The election rule against a model of acknowledged writes: members hold prefixes of one
// history; with sync_replicas = N a write was acknowledged only when N counted members held it
// durably. Whatever subset of members has reported since the lapse, a member the rule lets
// take the lease holds every acknowledged write, and no two members are let take it on the
// same reports.
#include "net/group/election.h"

#include <doctest.h>

#include <algorithm>
#include <random>

namespace relgraph::net {
namespace {

std::string Name(int i) {
  return "10.0.0." + std::to_string(i) + ":7707";
}

TEST_CASE("election: a member that takes the lease holds every acknowledged write") {
  std::mt19937_64 rng(11);
  int takes = 0, waits = 0;
  for (int round = 0; round < 20000; ++round) {
    const int k = 1 + static_cast<int>(rng() % 4);  // counted members
    const uint32_t n = static_cast<uint32_t>(rng() % (k + 1));
    GroupLease lease;
    lease.holder = "10.0.0.99:7707";
    lease.sync_replicas = n;
    std::vector<uint64_t> durable(k);
    for (int i = 0; i < k; ++i) {
      lease.members.push_back(Name(i));
      durable[i] = rng() % 50;
    }
    // The newest acknowledged LSN: N of the members hold it (nothing is promised with N = 0).
    std::vector<uint64_t> sorted = durable;
    std::sort(sorted.rbegin(), sorted.rend());
    const uint64_t acked = n == 0 ? 0 : sorted[n - 1];
    const uint64_t lapsed = 1 + rng() % 3;
    std::vector<GroupMember> reports;
    for (int i = 0; i < k; ++i) {
      const int what = static_cast<int>(rng() % 3);  // 0 fresh, 1 stale, 2 none
      if (what == 2) continue;
      GroupMember m;
      m.address = Name(i);
      m.epoch = 5;
      m.durable_lsn = durable[i];
      m.lapsed_revision = what == 0 ? lapsed : lapsed - 1;
      reports.push_back(m);
    }
    // A member outside the count, far ahead: never a candidate, never counted.
    GroupMember outsider;
    outsider.address = "10.0.0.50:7707";
    outsider.epoch = 5;
    outsider.durable_lsn = 1000;
    outsider.lapsed_revision = lapsed;
    reports.push_back(outsider);
    const bool collected = rng() % 2 == 0;
    int took = 0;
    for (int i = 0; i < k; ++i) {
      ElectionInput in;
      in.lease = lease;
      in.lapsed_revision = lapsed;
      in.self = Name(i);
      in.reports = reports;
      in.collect_ms = 750;
      in.waited_ms = collected ? 800 : 10;
      const ElectionOutcome out = Elect(in);
      if (out.kind != ElectionOutcome::Kind::kTake) continue;
      ++took;
      CHECK_MESSAGE(durable[i] >= acked, "member " << i << " at " << durable[i]
                                                   << " took the lease; acknowledged up to "
                                                   << acked << " (N " << n << ", k " << k << ")");
    }
    CHECK(took <= 1);
    takes += took;
    waits += took == 0 ? 1 : 0;
    ElectionInput in;
    in.lease = lease;
    in.lapsed_revision = lapsed;
    in.self = outsider.address;
    in.reports = reports;
    CHECK(Elect(in).kind == ElectionOutcome::Kind::kIneligible);
  }
  CHECK(takes > 1000);  // the rule is not merely "never"
  CHECK(waits > 1000);
}

TEST_CASE("election: every report in, the most advanced member takes it at once") {
  GroupLease lease;
  lease.holder = "p:1";
  lease.sync_replicas = 1;
  lease.members = {"a:1", "b:1", "c:1"};
  std::vector<GroupMember> reports;
  struct Row {
    const char* name;
    uint64_t epoch, lsn;
  };
  for (const Row& r : {Row{"a:1", 4, 90}, Row{"b:1", 5, 10}, Row{"c:1", 5, 9}}) {
    GroupMember m;
    m.address = r.name;
    m.epoch = r.epoch;
    m.durable_lsn = r.lsn;
    m.lapsed_revision = 7;
    reports.push_back(m);
  }
  ElectionInput in;
  in.lease = lease;
  in.lapsed_revision = 7;
  in.reports = reports;
  in.collect_ms = 750;
  in.waited_ms = 0;
  // A newer epoch beats a longer tail of an older one: a's records past b's are diverged.
  in.self = "b:1";
  CHECK(Elect(in).kind == ElectionOutcome::Kind::kTake);
  in.self = "a:1";
  auto out = Elect(in);
  CHECK(out.kind == ElectionOutcome::Kind::kWait);
  CHECK(out.winner == "b:1");
  // Without its own report, a member waits.
  in.self = "b:1";
  in.reports.erase(in.reports.begin() + 1);
  CHECK(Elect(in).kind == ElectionOutcome::Kind::kWait);
}

TEST_CASE("election: a lease that counts no member lets every member that saw it lapse run") {
  GroupLease lease;
  lease.holder = "p:1";
  lease.sync_replicas = 1;  // no member joined before the primary was lost: nothing acknowledged
  GroupMember a, b, stale;
  a.address = "a:1";
  a.durable_lsn = 2;
  a.lapsed_revision = 9;
  b.address = "b:1";
  b.durable_lsn = 1;
  b.lapsed_revision = 9;
  stale.address = "c:1";  // its report predates the lapse: not a candidate
  stale.durable_lsn = 50;
  stale.lapsed_revision = 0;
  ElectionInput in;
  in.lease = lease;
  in.lapsed_revision = 9;
  in.reports = {a, b, stale};
  in.collect_ms = 750;
  in.waited_ms = 800;
  in.self = "a:1";
  CHECK(Elect(in).kind == ElectionOutcome::Kind::kTake);
  in.self = "b:1";
  CHECK(Elect(in).kind == ElectionOutcome::Kind::kWait);
  in.self = "c:1";
  CHECK(Elect(in).kind == ElectionOutcome::Kind::kWait);
}

TEST_CASE("election: without a lease, the members that reported lately elect among them") {
  ElectionInput in;
  in.lease_exists = false;
  in.self = "a:1";
  in.now_ms = 100000;
  in.fresh_ms = 3000;
  in.collect_ms = 3000;
  in.waited_ms = 5000;
  GroupMember a, b, old;
  a.address = "a:1";
  a.durable_lsn = 5;
  a.reported_ms = 99900;
  b.address = "b:1";
  b.durable_lsn = 3;
  b.reported_ms = 99950;
  old.address = "z:1";  // a member gone long ago, far ahead: not waited for
  old.durable_lsn = 99;
  old.reported_ms = 10000;
  in.reports = {a, b, old};
  CHECK(Elect(in).kind == ElectionOutcome::Kind::kTake);
  in.self = "b:1";
  CHECK(Elect(in).kind == ElectionOutcome::Kind::kWait);
}

}  // namespace
}  // namespace relgraph::net
