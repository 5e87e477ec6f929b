// Failover as docs/replication.md tells an operator to run it, with real processes: a primary
// with --sync-replicas=1 and two replicas, all --fsync=always, under writers; then, cycle
// after cycle, kill -9 of the primary, promotion of the replica the doc says is safe (the
// highest applied LSN), the other two pointed at it, the writers moved to it. The group's
// sync_replicas must survive every promotion and restart (a promoted node that acknowledged
// writes alone lost them at the next failover), PROMOTE must refuse the replica that is behind,
// and in the end no acknowledged follow is missing, no acknowledged unfollow undone, and the
// three data directories verify with equal digests. RELGRAPH_FAILOVER_CYCLES=N sets the
// number of cycles (4 by default).
#include <doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net/client/client.h"
#include "tests/net/roles/replication/replication_node.h"
#include "tests/net/roles/replication/write_ledger.h"

namespace relgraph {
namespace {

using testing::Ledger;
using testing::Node;
using testing::VerifyDigests;
using testing::WaitCaughtUp;

const std::vector<std::string> kDurable = {"--fsync=always"};

std::vector<std::string> With(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// One writer: follows of fresh pairs, and now and then an unfollow of one it followed.
void Write(const Node& primary, uint64_t writer, std::atomic<uint64_t>* next, Ledger* ledger,
           const std::atomic<bool>* stop) {
  net::ClientOptions o;
  o.port = primary.port;
  o.io_timeout = std::chrono::milliseconds(3000);
  auto c = net::Client::Connect(o);
  if (!c.ok()) return;
  std::vector<std::pair<uint64_t, uint64_t>> followed;
  while (!*stop) {
    const uint64_t n = next->fetch_add(1);
    if (n % 7 == 3 && !followed.empty()) {
      const auto [a, b] = followed.back();
      followed.pop_back();
      ledger->Set(a, b, Ledger::State::kUnknown);
      if (!(*c)->Unfollow(a, b).ok()) return;
      ledger->Set(a, b, Ledger::State::kUnfollowed);
      continue;
    }
    const uint64_t a = 100000 + n, b = 1 + (n + writer) % 40;
    ledger->Set(a, b, Ledger::State::kUnknown);
    if (!(*c)->Follow(a, b).ok()) return;  // its outcome is unknown: the ledger says so
    ledger->Set(a, b, Ledger::State::kFollowed);
    followed.push_back({a, b});
  }
}

net::ReplicationReply ReplicationOf(const Node& node) {
  auto r = node.Connect()->Replication();
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  return *r;
}

// Waits until `replica` knows of `others` other replicas of its primary (the peers PROMOTE asks).
void WaitPeersKnown(const Node& primary, size_t replicas) {
  for (int i = 0; i < 1000; ++i) {
    if (ReplicationOf(primary).replicas.size() >= replicas) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL("the primary never saw " << replicas << " replicas");
}

TEST_CASE(
    "failover: kill -9 of the primary, promote as the doc says, loses no acknowledged "
    "write over many cycles") {
  std::vector<std::unique_ptr<Node>> nodes;
  for (int i = 0; i < 3; ++i) nodes.push_back(std::make_unique<Node>());
  size_t primary = 0;
  nodes[0]->Start(With(kDurable, {"--sync-replicas=1"}));
  for (int i = 1; i < 3; ++i) {
    nodes[i]->Start(With(kDurable, {"--replica-of=" + nodes[0]->address()}));
  }
  WaitPeersKnown(*nodes[0], 2);

  Ledger ledger;
  std::atomic<uint64_t> next{0};
  // Four cycles in the suite; RELGRAPH_FAILOVER_CYCLES=N runs a longer soak.
  const char* cycles_env = std::getenv("RELGRAPH_FAILOVER_CYCLES");
  const int cycles = cycles_env != nullptr ? std::atoi(cycles_env) : 4;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    Node& p = *nodes[primary];
    CAPTURE(cycle);
    CHECK(p.Info("sync_replicas") == 1);
    // Writers on the primary until it dies under them.
    std::atomic<bool> stop{false};
    std::vector<std::thread> writers;
    const uint64_t before = ledger.Acked();
    for (uint64_t w = 0; w < 3; ++w) {
      writers.emplace_back([&, w] { Write(p, w, &next, &ledger, &stop); });
    }
    // Let the replicas' group polls (every 2 s) see both siblings before the primary dies.
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    for (int i = 0; i < 1000 && ledger.Acked() < before + 300; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    p.Kill();
    stop = true;
    for (auto& t : writers) t.join();
    REQUIRE(ledger.Acked() > before + 100);

    // The doc's rule: promote the replica with the highest applied LSN. PROMOTE refuses the
    // other one while it can see the first further ahead.
    std::vector<size_t> replicas;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (i != primary) replicas.push_back(i);
    }
    const uint64_t lsn0 = ReplicationOf(*nodes[replicas[0]]).applied_lsn;
    const uint64_t lsn1 = ReplicationOf(*nodes[replicas[1]]).applied_lsn;
    const size_t best = lsn0 >= lsn1 ? replicas[0] : replicas[1];
    const size_t other = best == replicas[0] ? replicas[1] : replicas[0];
    if (lsn0 != lsn1) {
      auto refused = nodes[other]->Connect()->Promote();
      REQUIRE_FALSE(refused.ok());
      CHECK(refused.status().code() == Code::kInvalidArgument);
      CHECK(refused.status().message().find(nodes[best]->address()) != std::string::npos);
      CHECK(ReplicationOf(*nodes[other]).role == net::ReplicationRole::kReplica);
    }
    auto promoted = nodes[best]->Connect()->Promote();
    REQUIRE_MESSAGE(promoted.ok(), promoted.status().ToString());
    Node& np = *nodes[best];
    // The group's requirement came with the promotion: with no replica attached yet, a write
    // is not acknowledged (its outcome is unknown to the writer).
    CHECK(np.Info("sync_replicas") == 1);
    {
      net::ClientOptions o;
      o.port = np.port;
      o.io_timeout = std::chrono::milliseconds(300);
      auto c = net::Client::Connect(o);
      REQUIRE(c.ok());
      const uint64_t a = 900000 + static_cast<uint64_t>(cycle);
      ledger.Set(a, 1, Ledger::State::kUnknown);
      auto r = (*c)->Follow(a, 1);
      CHECK_MESSAGE(!r.ok(), "a promoted node acknowledged a write that no replica holds");
    }
    // The other replica follows the new primary; the old primary comes back as its replica,
    // dropping what it logged but never had acknowledged (--resync).
    nodes[other]->Stop();
    nodes[other]->Start(With(kDurable, {"--replica-of=" + np.address()}));
    p.Start(With(kDurable, {"--replica-of=" + np.address(), "--resync"}));
    WaitCaughtUp(np, *nodes[other]);
    WaitCaughtUp(np, p);
    WaitPeersKnown(np, 2);
    primary = best;
  }

  // Everything acknowledged is on the last primary, and every node holds the same data.
  Node& last = *nodes[primary];
  {
    auto c = last.Connect();
    std::lock_guard lock(ledger.mu);
    uint64_t checked = 0;
    for (const auto& [pair, state] : ledger.pairs) {
      if (state == Ledger::State::kUnknown) continue;
      auto rel = c->Relation(pair.first, pair.second);
      REQUIRE(rel.ok());
      const bool follows =
          *rel == net::RelationCode::kFollowing || *rel == net::RelationCode::kMutual;
      if (state == Ledger::State::kFollowed && !follows) {
        FAIL("acknowledged follow " << pair.first << " -> " << pair.second << " was lost");
      }
      if (state == Ledger::State::kUnfollowed && follows) {
        FAIL("acknowledged unfollow " << pair.first << " -> " << pair.second << " was undone");
      }
      ++checked;
    }
    CHECK(checked > 400);
  }
  for (auto& n : nodes) {
    if (n.get() != &last) WaitCaughtUp(last, *n);
  }
  // Every node shows the group's setting; the primary keeps it across a restart without the flag.
  for (auto& n : nodes) CHECK(n->Info("sync_replicas") == 1);
  last.Stop();
  last.Start(kDurable);
  CHECK(last.Info("sync_replicas") == 1);
  for (auto& n : nodes) n->Stop();
  const std::string want = VerifyDigests(last);
  for (auto& n : nodes) CHECK(VerifyDigests(*n) == want);
}

TEST_CASE("failover: PROMOTE refuses a replica that another replica is ahead of, unless forced") {
  Node p, ahead, behind;
  p.Start(kDurable);
  ahead.Start(With(kDurable, {"--replica-of=" + p.address()}));
  behind.Start(With(kDurable, {"--replica-of=" + p.address()}));
  WaitPeersKnown(p, 2);
  {
    auto c = p.Connect();
    for (uint64_t i = 1; i <= 20; ++i) REQUIRE(c->Follow(i, i + 1).ok());
  }
  WaitCaughtUp(p, behind);
  // Let `behind` hear of `ahead` (its group poll runs every 2 s), then freeze it.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  behind.Signal(SIGSTOP);
  {
    auto c = p.Connect();
    for (uint64_t i = 1; i <= 20; ++i) REQUIRE(c->Follow(i + 1, i).ok());
  }
  WaitCaughtUp(p, ahead);
  p.Kill();
  behind.Signal(SIGCONT);
  auto refused = behind.Connect()->Promote();
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == Code::kInvalidArgument);
  CHECK(refused.status().message().find(ahead.address()) != std::string::npos);
  CHECK(refused.status().message().find("--force") != std::string::npos);
  CHECK(ReplicationOf(behind).role == net::ReplicationRole::kReplica);
  // The node ahead is the one to promote; once it leads, the other is refused again (a newer
  // primary), and --force overrides the check.
  REQUIRE(ahead.Connect()->Promote().ok());
  auto again = behind.Connect()->Promote();
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().message().find("already a primary") != std::string::npos);
  auto forced = behind.Connect()->Promote(/*force=*/true);
  CHECK_MESSAGE(forced.ok(), forced.status().ToString());
}

}  // namespace
}  // namespace relgraph
