// Replication with real processes: a primary and two replicas (relgraphd --replica-of) under
// random graph and feed operations from several clients answer every read alike at
// quiescence, byte for byte, and their data directories verify with equal digests; replicas
// survive SIGKILL and a primary restart; a fresh replica copies the primary's snapshot when
// the WAL no longer reaches back; under --sync-replicas=1 and fsync=always a failover to the
// replica loses no acknowledged write; the old primary then detects the divergence and
// follows again only after --resync.
#include <doctest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "net/client/client.h"
#include "net/client/group_client.h"
#include "storage/env/file_names.h"
#include "tests/net/roles/replication/replication_node.h"
#include "tests/storage/test_dir.h"
#include "tests/tools/relgraphd_process.h"
#include "tools/admin/admin_commands.h"

namespace relgraph {
namespace {

using testing::Node;
using testing::TestDir;
using testing::VerifyDigests;
using testing::WaitCaughtUp;

constexpr uint64_t kUsers = 80;

// Random writes on the primary, as one client would send them.
void Writer(const Node& primary, uint64_t seed, int ops, std::atomic<uint64_t>* next_post) {
  auto c = primary.Connect();
  std::mt19937_64 rng(seed);
  for (int i = 0; i < ops; ++i) {
    const uint64_t a = 1 + rng() % kUsers, b = 1 + rng() % kUsers;
    const int pick = static_cast<int>(rng() % 20);
    if (pick < 8) {
      (void)c->Follow(a, b);
    } else if (pick < 11) {
      (void)c->Unfollow(a, b);
    } else if (pick < 15) {
      (void)c->Publish(a, next_post->fetch_add(1), static_cast<uint8_t>(rng() % 3));
    } else if (pick < 16) {
      (void)c->DeletePost(a, 1 + rng() % next_post->load());
    } else if (pick < 17) {
      (void)c->Mute(a, b, rng() % 3 != 0);
    } else if (pick < 18) {
      (void)c->Hide(a, b, rng() % 3 != 0);
    } else if (pick < 19 && rng() % 10 == 0) {
      (void)c->RemoveUser(a);
    } else {
      (void)c->Ack("cursor" + std::to_string(rng() % 2), 1);
    }
  }
}

// Every read, for every user, as raw reply frames (status and body).
std::vector<std::string> AllReads(const Node& node) {
  auto c = node.Connect();
  for (uint64_t u = 1; u <= kUsers; ++u) {
    c->Queue(net::CountsRequest{u});
    net::FollowingRequest following;
    following.user = u;
    following.limit = 100;
    following.viewer = 1 + u % kUsers;
    c->Queue(following);
    net::FansRequest fans;
    fans.user = u;
    fans.limit = 100;
    fans.viewer = 1 + (u * 7) % kUsers;
    c->Queue(fans);
    net::FriendsRequest friends;
    friends.user = u;
    friends.limit = 100;
    c->Queue(friends);
    net::TimelineRequest timeline;
    timeline.user = u;
    timeline.limit = 100;
    c->Queue(timeline);
    net::UserPostsRequest posts;
    posts.user = u;
    posts.limit = 100;
    c->Queue(posts);
    c->Queue(net::MutesRequest{u});
    c->Queue(net::HidesRequest{u});
    std::vector<uint64_t> others;
    for (uint64_t o = 1; o <= kUsers; o += 3) others.push_back(o);
    c->Queue(net::RelationsRequest{u, others});
  }
  auto replies = c->Flush();
  REQUIRE(replies.ok());
  std::vector<std::string> out;
  for (const net::RawReply& r : *replies) out.push_back(r.status.ToString() + "|" + r.body);
  // Named cursors, without `expired`: each node's own WAL retention decides that.
  auto cursors = c->Cursors();
  REQUIRE(cursors.ok());
  for (const net::CursorEntry& k : *cursors) {
    out.push_back(k.name + " " + std::to_string(k.acked_lsn) + " " + std::to_string(k.acked_ms));
  }
  return out;
}

void CheckSameReads(const Node& primary, const Node& replica) {
  const auto want = AllReads(primary), got = AllReads(replica);
  REQUIRE(want.size() == got.size());
  size_t differ = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == got[i]) continue;
    if (differ++ == 0) {
      MESSAGE("read " << i << " (user " << 1 + i / 9 << ", request " << i % 9
                      << ") differs: " << want[i].size() << " bytes on the primary, "
                      << got[i].size() << " on the replica");
    }
  }
  CHECK_MESSAGE(differ == 0,
                differ << " of " << want.size() << " reads differ on " << replica.address());
}

// relgraph-admin verify's digest lines of a stopped node's data directory.
TEST_CASE("replication: a primary and two replicas agree after random load and faults") {
  Node primary, r1, r2;
  // Cursors hold no WAL here, so that snapshots' retention drops LSN 1.
  primary.Start({"--fsync=everysec", "--stream-retention=0"});
  r1.Start({"--fsync=always", "--replica-of=" + primary.address()});
  std::atomic<uint64_t> next_post{1};
  // Readers on the replica build inboxes the applied records must keep exact.
  std::atomic<bool> stop_reading{false};
  std::thread reader([&] {
    std::mt19937_64 rng(99);
    while (!stop_reading) {
      net::ClientOptions o;
      o.port = r1.port;
      auto c = net::Client::Connect(o);
      if (!c.ok()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        continue;
      }
      for (int i = 0; i < 200 && !stop_reading; ++i) {
        net::TimelineRequest t;
        t.user = 1 + rng() % kUsers;
        if (!(*c)->Timeline(t).ok()) break;  // r1 restarting
      }
    }
  });
  auto load = [&](int ops, uint64_t seed) {
    std::vector<std::thread> writers;
    for (uint64_t w = 0; w < 3; ++w) {
      writers.emplace_back([&, w] { Writer(primary, seed + w, ops, &next_post); });
    }
    for (auto& t : writers) t.join();
  };
  load(1500, 1);
  // Snapshots and WAL retention on the primary: LSN 1 is gone, so a new replica must start
  // from the snapshot.
  REQUIRE(primary.Connect()->Snapshot().ok());
  load(500, 10);
  REQUIRE(primary.Connect()->Snapshot().ok());
  r2.Start({"--fsync=everysec", "--replica-of=" + primary.address()});
  std::thread faults([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    r1.Kill();  // a replica dies mid-stream...
    r1.Start({"--fsync=always", "--replica-of=" + primary.address()});  // ...and resumes
  });
  load(1500, 20);
  faults.join();
  // The primary restarts: every replication link drops and is made again.
  primary.Stop();
  primary.Start({"--fsync=everysec", "--stream-retention=0"});
  load(800, 30);
  stop_reading = true;
  reader.join();
  WaitCaughtUp(primary, r1);
  WaitCaughtUp(primary, r2);
  CHECK(primary.Info("replicas") == 2);
  CHECK(r1.Info("role") == 1);
  CHECK(r1.Info("replica_lag_records") == 0);
  CheckSameReads(primary, r1);
  CheckSameReads(primary, r2);
  {
    auto r = r2.Connect()->Replication();
    REQUIRE(r.ok());
    CHECK(r->state == "streaming");
    CHECK(r->primary == primary.address());
  }
  {  // r2 started after retention dropped LSN 1: it copied the snapshot first
    std::ifstream in(r2.log);
    std::stringstream text;
    text << in.rdbuf();
    CHECK(text.str().find("replication snapshot: copying the primary's snapshot") !=
          std::string::npos);
  }
  // A write to a replica is refused, naming the primary.
  auto refused = r2.Connect()->Follow(1, 2);
  CHECK(refused.status().code() == Code::kReadOnly);
  CHECK(refused.status().message().find(primary.address()) != std::string::npos);
  // The data directories verify with equal digests.
  primary.Stop();
  r1.Stop();
  r2.Stop();
  const std::string want = VerifyDigests(primary);
  CHECK(VerifyDigests(r1) == want);
  CHECK(VerifyDigests(r2) == want);
}

TEST_CASE("replication: failover under --sync-replicas=1 loses no acknowledged write") {
  Node primary, replica;
  primary.Start({"--fsync=always", "--sync-replicas=1"});
  replica.Start({"--fsync=always", "--replica-of=" + primary.address()});
  for (int i = 0; i < 500 && primary.Info("replicas") == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::mutex mu;
  std::set<std::pair<uint64_t, uint64_t>> acked;
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (uint64_t w = 0; w < 3; ++w) {
    writers.emplace_back([&, w] {
      auto c = primary.Connect();
      for (uint64_t i = 0; !stop; ++i) {
        const uint64_t a = 1000 * (w + 1) + i % 997, b = 1 + i % 50;
        auto r = c->Follow(a, b);
        if (!r.ok()) return;  // the primary died: this write's outcome is unknown
        std::lock_guard lock(mu);
        acked.insert({a, b});
      }
    });
  }
  // Kill the primary mid-stream, once a few hundred writes were acknowledged.
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard lock(mu);
      if (acked.size() >= 300) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  primary.Kill();
  stop = true;
  for (auto& t : writers) t.join();
  REQUIRE(acked.size() > 100);
  // Promote the replica: epoch 2, and it takes writes.
  auto promoted = replica.Connect()->Promote();
  REQUIRE_MESSAGE(promoted.ok(), promoted.status().ToString());
  CHECK(promoted->epoch == 2);
  auto c = replica.Connect();
  for (const auto& [a, b] : acked) {
    auto rel = c->Relation(a, b);
    REQUIRE(rel.ok());
    CHECK_MESSAGE(rel.ok(), a << " -> " << b);
    if (*rel != net::RelationCode::kFollowing && *rel != net::RelationCode::kMutual) {
      FAIL("acknowledged follow " << a << " -> " << b << " is missing after the failover");
    }
  }
  // It is the primary now, and keeps the group's sync_replicas: its writes wait for a replica
  // (tests/net/roles/replication/failover_test.cpp runs the whole recipe, with replicas
  // re-pointed).
  CHECK(replica.Info("role") == 0);
  CHECK(replica.Info("sync_replicas") == 1);
}

TEST_CASE(
    "replication: an old primary with records the new one never had diverges until --resync") {
  Node a, b;
  a.Start({"--fsync=always"});
  b.Start({"--fsync=always", "--replica-of=" + a.address()});
  {
    auto c = a.Connect();
    for (uint64_t i = 1; i <= 50; ++i) REQUIRE(c->Follow(i, i + 1).ok());
  }
  WaitCaughtUp(a, b);
  b.Kill();
  {
    auto c = a.Connect();  // logged on a only: b is down
    for (uint64_t i = 1; i <= 5; ++i) REQUIRE(c->Follow(900, i).ok());
  }
  a.Kill();
  b.Start({"--fsync=always", "--replica-of=" + a.address()});  // its primary is gone
  auto promoted = b.Connect()->Promote();
  REQUIRE_MESSAGE(promoted.ok(), promoted.status().ToString());
  REQUIRE(b.Connect()->Follow(700, 1).ok());
  // a comes back as a replica of b: it holds five records of epoch 1 that b never had.
  a.Start({"--fsync=always", "--replica-of=" + b.address()});
  net::ReplicationReply r;
  for (int i = 0; i < 250; ++i) {
    auto got = a.Connect()->Replication();
    REQUIRE(got.ok());
    r = *got;
    if (r.state == "diverged") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(r.state == "diverged");
  CHECK(r.message.find("never had") != std::string::npos);
  CHECK(r.message.find("--resync") != std::string::npos);
  CHECK(a.Connect()->Relation(700, 1).value() == net::RelationCode::kNone);  // not following
  // Told to resynchronize, a drops those records and copies b.
  a.Stop();
  a.Start({"--fsync=always", "--replica-of=" + b.address(), "--resync"});
  WaitCaughtUp(b, a);
  CHECK(a.Connect()->Relation(700, 1).value() == net::RelationCode::kFollowing);
  CHECK(a.Connect()->Relation(900, 1).value() == net::RelationCode::kNone);
  CheckSameReads(b, a);
  CHECK(a.Connect()->Replication().value().epoch == 2);
}

}  // namespace
}  // namespace relgraph

namespace relgraph {
namespace {

TEST_CASE("replication: REPLICA_OF re-points nodes at run time, a primary stepping down too") {
  Node a, b;
  a.Start({"--fsync=always"});
  b.Start({"--fsync=always", "--replica-of=" + a.address()});
  {
    auto c = a.Connect();
    for (uint64_t i = 1; i <= 30; ++i) REQUIRE(c->Follow(i, i + 1).ok());
  }
  WaitCaughtUp(a, b);
  // Hand over by hand: promote b, then tell a (still a primary) to follow it. a's history is
  // a prefix of b's, so it follows without a resync; a write sent to a names b.
  REQUIRE(b.Connect()->Promote().ok());
  auto repoint = a.Connect()->Call(net::ReplicaOfRequest{b.address(), false});
  REQUIRE_MESSAGE(repoint.ok(), repoint.status().ToString());
  auto refused = a.Connect()->Follow(100, 101);
  CHECK(refused.status().code() == Code::kReadOnly);
  CHECK(refused.status().message() == b.address());
  {
    auto c = b.Connect();
    for (uint64_t i = 1; i <= 30; ++i) REQUIRE(c->Follow(i + 1, i).ok());
  }
  WaitCaughtUp(b, a);
  CHECK(a.Connect()->Replication()->role == net::ReplicationRole::kReplica);
  // Bad requests are refused, naming what is wrong; the node keeps following.
  CHECK(a.Connect()->Call(net::ReplicaOfRequest{"nowhere", false}).status().code() ==
        Code::kInvalidArgument);
  CHECK(a.Connect()->Call(net::ReplicaOfRequest{a.address(), false}).status().code() ==
        Code::kInvalidArgument);
  // A node with its own history copies the primary's with resync.
  Node other;
  other.Start({"--fsync=always"});
  REQUIRE(other.Connect()->Follow(700, 800).ok());
  REQUIRE(other.Connect()->Call(net::ReplicaOfRequest{b.address(), true}).ok());
  WaitCaughtUp(b, other);
  CHECK(*other.Connect()->Relation(700, 800) == net::RelationCode::kNone);  // discarded
  a.Stop();
  b.Stop();
  other.Stop();
  CHECK(VerifyDigests(a) == VerifyDigests(b));
  CHECK(VerifyDigests(other) == VerifyDigests(b));
}

TEST_CASE("replication: POSITION, and a client reading its own writes from a lagging replica") {
  Node a, b;
  a.Start({"--fsync=always"});
  b.Start({"--fsync=always", "--replica-of=" + a.address()});
  {
    auto c = a.Connect();
    for (uint64_t i = 1; i <= 10; ++i) REQUIRE(c->Follow(i, i + 1).ok());
  }
  WaitCaughtUp(a, b);
  auto pa = a.Connect()->Call(net::PositionRequest{});
  REQUIRE(pa.ok());
  CHECK(pa->role == net::ReplicationRole::kPrimary);
  CHECK(pa->applied_lsn == a.Info("last_lsn"));
  CHECK(pa->durable_lsn == pa->applied_lsn);  // --fsync=always, nothing in flight
  // Outside a cluster there is no shard map to hand out.
  CHECK(a.Connect()->Call(net::ShardMapRequest{}).status().code() == Code::kUnsupported);
  auto pb = b.Connect()->Call(net::PositionRequest{});
  REQUIRE(pb.ok());
  CHECK(pb->role == net::ReplicationRole::kReplica);
  CHECK(pb->applied_lsn == pa->applied_lsn);
  CHECK(pb->epoch == pa->epoch);
  // b stops hearing a (it follows an address nobody answers at): it still serves reads, from a
  // state that no longer moves, the worst a lagging replica can do.
  REQUIRE(b.Connect()->Call(net::ReplicaOfRequest{"127.0.0.1:1", false}).ok());
  for (const bool own : {false, true}) {
    net::GroupClientOptions o;
    o.nodes = {a.address(), b.address()};  // writes find a first; reads then go to b
    o.replica_reads = true;
    o.read_your_writes = own;
    o.read_wait = std::chrono::milliseconds(20);
    auto c = net::GroupClient::Connect(o);
    REQUIRE(c.ok());
    int seen = 0;
    for (uint64_t i = 0; i < 20; ++i) {
      const uint64_t follower = (own ? 2000 : 1000) + i;
      REQUIRE((*c)->Follow(follower, 5).ok());
      auto rel = (*c)->Relation(follower, 5);
      REQUIRE(rel.ok());
      seen += *rel == net::RelationCode::kFollowing;
    }
    CAPTURE(own);
    CHECK(seen == (own ? 20 : 0));  // without the floor, the replica's stale answer
    if (own) CHECK((*c)->read_floor() >= pa->applied_lsn + 20);
  }
}

}  // namespace
}  // namespace relgraph
