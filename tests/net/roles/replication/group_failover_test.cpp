// Automatic failover in the spirit of Jepsen, with real processes (docs/replication.md,
// "Automatic failover"): a three-node NATS cluster holding the lease (three replicas) and
// three relgraphd members of one group, --fsync=always and --sync-replicas=1, under writers
// that find the primary themselves (net::GroupClient). Faults, cycle after cycle, in a random
// order that covers each kind: kill -9 of the primary or of a replica, SIGSTOP/SIGCONT of
// either (a paused primary is a partitioned one), kill -9 of one NATS node, and all of NATS
// paused (no failover may follow either: every member still hears the primary, and writes
// go on meanwhile, the failsafe). After the last one: every acknowledged follow present and no
// acknowledged unfollow undone, every node's change stream identical from LSN 1 and its data
// directory verifying with the same digests, and each epoch led by one node only.
// RELGRAPH_GROUP_FAULT_CYCLES=N sets the number of cycles (6 by default).
#include <doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "net/client/group_client.h"
#include "net/group/group_store.h"
#include "tests/net/roles/replication/replication_node.h"
#include "tests/net/roles/replication/write_ledger.h"
#include "tests/tools/nats_cluster_process.h"

namespace relgraph {
namespace {

using testing::Ledger;
using testing::Node;
using testing::VerifyDigests;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Group {
  testing::TestDir dir;
  testing::NatsClusterProcess nats{dir.path()};
  std::vector<std::unique_ptr<Node>> nodes;
  std::vector<std::string> logs;  // each node's log over all its runs

  explicit Group(size_t n) {
    for (size_t i = 0; i < n; ++i) nodes.push_back(std::make_unique<Node>());
    logs.resize(n);
  }
  std::vector<std::string> Flags() const {
    return {"--fsync=always", "--sync-replicas=1", "--group=g", "--group-nats=" + nats.urls(),
            "--group-nats-replicas=3"};
  }
  void Start(size_t i) { nodes[i]->Start(Flags()); }
  void SaveLog(size_t i) { logs[i] += ReadText(nodes[i]->log); }
  // RELGRAPH_GROUP_LOGS=DIR: every node's log so far, for a look afterwards.
  void KeepLogs() {
    const char* keep = std::getenv("RELGRAPH_GROUP_LOGS");
    for (size_t i = 0; keep != nullptr && i < nodes.size(); ++i) {
      std::ofstream(std::string(keep) + "/node" + std::to_string(i) + ".log")
          << logs[i] << (nodes[i]->pid != 0 ? ReadText(nodes[i]->log) : "");
    }
  }
  void Kill(size_t i) {
    nodes[i]->Kill();
    SaveLog(i);
  }
  std::vector<std::string> Addresses() const {
    std::vector<std::string> out;
    for (const auto& n : nodes) out.push_back(n->address());
    return out;
  }
  // Whether the lease lists `count` members within 10 s.
  bool WaitMembersListed(size_t count) {
    net::GroupStoreOptions o;
    o.nats_urls = nats.urls();
    o.op_timeout = milliseconds(1000);
    auto store = net::GroupStore::Connect(o);
    for (int i = 0; store.ok() && i < 200; ++i) {
      auto lease = (*store)->ReadLease("g");
      if (lease.ok() && lease->value.members.size() >= count) return true;
      std::this_thread::sleep_for(milliseconds(50));
    }
    return false;
  }
  // The member the lease names, once it serves as primary; -1 after `wait`.
  int Primary(milliseconds wait = milliseconds(15000)) {
    net::GroupStoreOptions o;
    o.nats_urls = nats.urls();
    o.op_timeout = milliseconds(1000);
    const auto deadline = Clock::now() + wait;
    while (Clock::now() < deadline) {
      auto store = net::GroupStore::Connect(o);
      if (store.ok()) {
        auto lease = (*store)->ReadLease("g");
        for (size_t i = 0; lease.ok() && i < nodes.size(); ++i) {
          if (nodes[i]->address() != lease->value.holder || nodes[i]->pid == 0) continue;
          net::ClientOptions c;
          c.port = nodes[i]->port;
          c.io_timeout = milliseconds(500);
          auto client = net::Client::Connect(c);
          if (!client.ok()) continue;
          auto r = (*client)->Replication();
          if (r.ok() && r->role == net::ReplicationRole::kPrimary) return static_cast<int>(i);
        }
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
    return -1;
  }
};

// One writer: follows of fresh pairs and now and then an unfollow of one it followed, through
// a GroupClient that finds the primary after each fault.
void Write(std::vector<std::string> nodes, uint64_t writer, std::atomic<uint64_t>* next,
           Ledger* ledger, const std::atomic<bool>* stop) {
  net::GroupClientOptions o;
  o.nodes = std::move(nodes);
  o.connection.io_timeout = milliseconds(2000);
  o.connection.connect_timeout = milliseconds(500);
  o.failover_timeout = milliseconds(8000);
  auto c = net::GroupClient::Connect(o);
  REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  testing::WriteFreshPairs(
      **c, [writer](uint64_t n) { return 1 + (n + writer) % 40; }, next, ledger, stop);
}

// Every event of the node's change stream from LSN 1 up to its newest LSN.
std::vector<net::WireEvent> StreamOf(const Node& node) {
  auto c = node.Connect();
  const uint64_t newest = node.Info("last_lsn");
  auto started = c->StartSubscription({net::SubscribeFrom::kLsn, 1, 0, ""});
  REQUIRE_MESSAGE(started.ok(), started.status().ToString());
  std::vector<net::WireEvent> out;
  uint64_t next = 1;
  while (next <= newest) {
    auto batch = c->NextEvents(milliseconds(5000));
    REQUIRE_MESSAGE(batch.ok(), batch.status().ToString());
    for (net::WireEvent& e : batch->events) out.push_back(e);
    next = batch->next_lsn;
  }
  return out;
}

void WaitStreaming(const Node& primary, const Node& replica) {
  const uint64_t want = primary.Info("last_lsn");
  for (int i = 0; i < 1500; ++i) {
    auto link = replica.Connect()->Replication();
    if (link.ok() && link->state == "streaming" && replica.Info("last_lsn") >= want) return;
    std::this_thread::sleep_for(milliseconds(20));
  }
  auto link = replica.Connect()->Replication();
  FAIL("replica " << replica.address() << " never caught up with " << primary.address() << ": "
                  << (link.ok() ? link->state + " " + link->message + " following " + link->primary
                                : link.status().ToString())
                  << "\n--- its log:\n"
                  << ReadText(replica.log) << "\n--- the primary's log:\n"
                  << ReadText(primary.log));
}

TEST_CASE("group: faults on primaries, replicas and NATS lose no acknowledged write") {
  Group g(3);
  for (size_t i = 0; i < 3; ++i) g.Start(i);
  REQUIRE(g.Primary() >= 0);
  Ledger ledger;
  std::atomic<uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  testing::JoinWriters join_writers{stop, writers};
  for (uint64_t w = 0; w < 3; ++w) {
    writers.emplace_back([&, w] { Write(g.Addresses(), w, &next, &ledger, &stop); });
  }
  const char* env = std::getenv("RELGRAPH_GROUP_FAULT_CYCLES");
  const int cycles = env != nullptr ? std::atoi(env) : 6;
  std::mt19937 rng(static_cast<uint32_t>(std::random_device{}()));
  std::vector<int> kinds = {0, 1, 2, 3, 4, 5};
  std::shuffle(kinds.begin(), kinds.end(), rng);
  uint64_t failovers = 0;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    int kind = cycle < 6 ? kinds[cycle] : static_cast<int>(rng() % 6);
    if (const char* forced = std::getenv("RELGRAPH_GROUP_FAULTS")) {  // "1,0,4": these, in turn
      const std::string list = forced;
      size_t at = 0;
      for (int i = 0; i < cycle % (1 + static_cast<int>(std::count(list.begin(), list.end(), ',')));
           ++i) {
        at = list.find(',', at) + 1;
      }
      kind = std::atoi(list.c_str() + at);
    }
    const int p = g.Primary();
    REQUIRE_MESSAGE(p >= 0, "no primary before cycle " << cycle);
    const size_t replica = (static_cast<size_t>(p) + 1 + rng() % 2) % 3;
    const uint64_t epoch = g.nodes[p]->Info("epoch");
    const uint64_t before = ledger.Acked();
    CAPTURE(cycle);
    CAPTURE(kind);
    MESSAGE("cycle " << cycle << ": fault " << kind << ", primary " << g.nodes[p]->address()
                     << " in epoch " << epoch);
    switch (kind) {
      case 0:  // kill -9 of the primary, back once another took over (or resuming, if not)
        g.Kill(p);
        std::this_thread::sleep_for(milliseconds(1000 + rng() % 3000));
        g.Start(p);
        ++failovers;
        break;
      case 1:  // the primary frozen past its lease: partitioned
        g.nodes[p]->Signal(SIGSTOP);
        std::this_thread::sleep_for(milliseconds(3000));
        g.nodes[p]->Signal(SIGCONT);
        ++failovers;
        break;
      case 2:  // kill -9 of a replica
        g.Kill(replica);
        std::this_thread::sleep_for(milliseconds(1000 + rng() % 1000));
        g.Start(replica);
        break;
      case 3:  // a replica frozen for a while
        g.nodes[replica]->Signal(SIGSTOP);
        std::this_thread::sleep_for(milliseconds(2000));
        g.nodes[replica]->Signal(SIGCONT);
        break;
      case 4: {  // one NATS node dies and comes back: nothing changes
        // The node may lead the lease's stream: its election can outlast the lease's TTL, and
        // then only the failsafe keeps the primary, which needs both replicas listed in the
        // lease (right after the group forms they may not be yet, and a failover is right).
        REQUIRE(g.WaitMembersListed(2));
        const int n = static_cast<int>(rng() % 3);
        g.nats.Kill(n);
        std::this_thread::sleep_for(milliseconds(2500));  // past the lease's TTL
        g.nats.Restart(n);
        const int after = g.Primary();
        CHECK_MESSAGE(after == p, "losing one NATS node moved the primary");
        if (after >= 0) CHECK(g.nodes[after]->Info("epoch") == epoch);
        break;
      }
      case 5: {  // all of NATS hangs, every member is alive: no failover, writes go on
        // The failsafe needs both replicas listed in the lease (its renewals add them).
        REQUIRE(g.WaitMembersListed(2));
        for (int n = 0; n < 3; ++n) g.nats.Stop(n);
        const uint64_t during = ledger.Acked();
        std::this_thread::sleep_for(milliseconds(3000));  // twice the lease's TTL
        const uint64_t done = ledger.Acked() - during;
        for (int n = 0; n < 3; ++n) g.nats.Cont(n);
        CHECK_MESSAGE(done > 100, "writes stopped while NATS was away (the failsafe)");
        const int after = g.Primary();
        CHECK_MESSAGE(after == p, "a NATS outage moved the primary");
        if (after >= 0) CHECK(g.nodes[after]->Info("epoch") == epoch);
        break;
      }
    }
    // The group serves writes again.
    const auto deadline = Clock::now() + milliseconds(20000);
    while (ledger.Acked() < before + 200 && Clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(20));
    }
    g.KeepLogs();
    if (ledger.Acked() < before + 200) {
      for (size_t i = 0; i < 3; ++i) {
        net::ClientOptions c;
        c.port = g.nodes[i]->port;
        c.io_timeout = milliseconds(1000);
        auto client = net::Client::Connect(c);
        if (!client.ok()) continue;
        auto r = (*client)->Replication();
        if (!r.ok()) continue;
        std::string replicas;
        for (const auto& e : r->replicas) {
          replicas += " " + e.name + "@" + std::to_string(e.durable_lsn) + "/" +
                      std::to_string(e.ack_age_ms) + "ms";
        }
        MESSAGE("node " << i << " " << g.nodes[i]->address() << ": role "
                        << static_cast<int>(r->role) << " " << r->state << " epoch " << r->epoch
                        << " lsn " << r->applied_lsn << " sync " << r->sync_replicas << " replicas"
                        << replicas);
      }
      std::ostringstream o, e;
      admin::Run({"group", "status", "--group=g", "--nats=" + g.nats.urls()}, o, e);
      MESSAGE(o.str() << e.str());
    }
    REQUIRE_MESSAGE(ledger.Acked() >= before + 200, "writes did not resume after fault " << kind);
  }
  stop = true;
  for (auto& t : writers) t.join();

  const int p = g.Primary();
  REQUIRE(p >= 0);
  Node& primary = *g.nodes[p];
  for (size_t i = 0; i < 3; ++i) {
    if (static_cast<int>(i) != p) WaitStreaming(primary, *g.nodes[i]);
  }
  {
    auto c = primary.Connect();
    std::lock_guard lock(ledger.mu);
    uint64_t checked = 0;
    for (const auto& [pair, state] : ledger.pairs) {
      if (state == Ledger::State::kUnknown) continue;
      auto rel = c->Relation(pair.first, pair.second);
      REQUIRE(rel.ok());
      const bool follows =
          *rel == net::RelationCode::kFollowing || *rel == net::RelationCode::kMutual;
      if (state == Ledger::State::kFollowed && !follows) {
        for (size_t i = 0; i < 3; ++i) {
          auto r = g.nodes[i]->Connect()->Relation(pair.first, pair.second);
          MESSAGE("node " << i << ": " << (r.ok() ? static_cast<int>(*r) : -1));
        }
        g.KeepLogs();
        if (const char* keep = std::getenv("RELGRAPH_GROUP_LOGS")) {
          for (size_t i = 0; i < 3; ++i) {
            std::system(
                ("cp -r " + g.nodes[i]->data + " " + keep + "/data" + std::to_string(i)).c_str());
          }
        }
        FAIL("acknowledged follow " << pair.first << " -> " << pair.second << " was lost");
      }
      if (state == Ledger::State::kUnfollowed && follows) {
        FAIL("acknowledged unfollow " << pair.first << " -> " << pair.second << " was undone");
      }
      ++checked;
    }
    MESSAGE(checked << " acknowledged writes checked over " << failovers << " faults on primaries");
    CHECK(checked > 150 * static_cast<uint64_t>(cycles));
  }
  // One history: the same change stream from LSN 1 on every node.
  const std::vector<net::WireEvent> want = StreamOf(primary);
  for (size_t i = 0; i < 3; ++i) {
    if (static_cast<int>(i) == p) continue;
    const std::vector<net::WireEvent> got = StreamOf(*g.nodes[i]);
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      std::string a, b;
      net::WirePut(&a, got[k]);
      net::WirePut(&b, want[k]);
      if (a != b) {
        FAIL("node " << i << " differs at event " << k << " (LSN " << want[k].lsn << ")");
      }
    }
  }
  for (size_t i = 0; i < 3; ++i) {
    g.nodes[i]->Stop();
    g.SaveLog(i);
  }
  const std::string digests = VerifyDigests(primary);
  for (size_t i = 0; i < 3; ++i) CHECK(VerifyDigests(*g.nodes[i]) == digests);
  // Each epoch had one primary; every diverged tail was saved before it was dropped.
  std::map<uint64_t, std::set<size_t>> leaders;
  const std::regex started("primary in epoch ([0-9]+) from LSN");
  const std::regex saved("saved LSNs [0-9]+\\.\\.[0-9]+ \\([0-9]+ records\\) to (\\S+),");
  for (size_t i = 0; i < 3; ++i) {
    for (auto it = std::sregex_iterator(g.logs[i].begin(), g.logs[i].end(), started);
         it != std::sregex_iterator(); ++it) {
      leaders[std::stoull((*it)[1])].insert(i);
    }
    for (auto it = std::sregex_iterator(g.logs[i].begin(), g.logs[i].end(), saved);
         it != std::sregex_iterator(); ++it) {
      CHECK_MESSAGE(std::ifstream((*it)[1].str()).good(), "missing " << (*it)[1].str());
    }
  }
  for (const auto& [epoch, who] : leaders) {
    CHECK_MESSAGE(who.size() == 1, "epoch " << epoch);
    MESSAGE("epoch " << epoch << " led by node " << *who.begin());
  }
  MESSAGE(leaders.size() << " epochs");
}

}  // namespace
}  // namespace relgraph
