// A three-shard cluster on one machine, as docs/cluster.md starts it: a real nats-server with
// JetStream, the shard map created by relgraph-admin, three relgraphd shards on loopback.
// Random follows, unfollows, removals, publishes, deletes, mutes, hides, blocks, private
// switches and answered requests go through ClusterClient; after each round's barrier, every
// shard's answers about its users (lists, blocks, requests, private marks, counts, relations
// with every bit, a viewer's relations from another shard, timelines page by page, authors'
// posts) must equal a one-node model. The shards keep 6 posts per author and
// pull authors with more than 4 fans, so posts are trimmed, and celebrities' posts are
// broadcast to every shard while the others go to their fans' shards only. A shard killed with
// SIGKILL while the others keep sending it changes catches up from JetStream after its restart; a
// shard asked about a user it does not own answers `moved`, naming the owner; a client whose
// map predates a move asks the pairs the move parted (a page and its viewer, known_followers'
// two users) across their shards.
#include <doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <ranges>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "net/client/client.h"
#include "net/cluster/cluster_client.h"
#include "net/roles/cluster/pull_consumer.h"
#include "tests/engine/feed/feed_reference.h"
#include "tests/engine/graph_state_model.h"
#include "tests/storage/test_dir.h"
#include "tests/tools/free_port.h"
#include "tests/tools/nats_server_process.h"
#include "tests/tools/relgraphd_process.h"
#include "tools/admin/admin_commands.h"
#include "tools/cli/cli_commands.h"

namespace relgraph {
namespace {

using testing::GraphStateModel;
using testing::TestDir;

constexpr uint32_t kShards = 3;
constexpr uint64_t kUsers = 60;
constexpr uint32_t kPostsPerAuthor = 6;
constexpr uint32_t kTimelineLength = 40;

// The one-node model: the graph's edges with their times, and the feed's reference.
struct Model {
  GraphStateModel graph;
  testing::FeedReference feed{kPostsPerAuthor, kTimelineLength};
  uint64_t next_post = 1;
};

struct Cluster {
  TestDir dir;
  testing::NatsServerProcess nats{dir.path()};
  uint16_t port[kShards + 1] = {};
  pid_t pid[kShards + 1] = {};
  int starts[kShards + 1] = {};

  std::string DataDir(uint32_t id) const { return dir.path() + "/shard" + std::to_string(id); }

  void StartShard(uint32_t id) {
    const std::string log =
        dir.path() + "/shard" + std::to_string(id) + "." + std::to_string(++starts[id]) + ".log";
    pid[id] = Spawn(
        {"--data-dir=" + DataDir(id), "--listen=127.0.0.1:" + std::to_string(port[id]),
         "--cluster=" + nats.url(), "--shard-id=" + std::to_string(id), "--fsync=always",
         "--rate-limit=off", "--snapshot-interval-s=0",
         "--feed-posts-per-author=" + std::to_string(kPostsPerAuthor),
         "--feed-timeline-length=" + std::to_string(kTimelineLength), "--feed-celebrity-fans=4"},
        log);
    REQUIRE(WaitForPort(log, pid[id]) == port[id]);
  }
  void StopShard(uint32_t id) {  // SIGTERM: a clean stop
    ::kill(pid[id], SIGTERM);
    WaitExit(pid[id]);
    pid[id] = 0;
  }
  void KillShard(uint32_t id) {
    ::kill(pid[id], SIGKILL);
    WaitExit(pid[id]);
    pid[id] = 0;
  }

  Cluster() {
    std::string shards;
    for (uint32_t id = 1; id <= kShards; ++id) {
      port[id] = testing::FreeLoopbackPort();  // the map needs addresses first
      shards += (id > 1 ? "," : "") + std::to_string(id) + "=127.0.0.1:" + std::to_string(port[id]);
    }
    std::ostringstream out, err;
    REQUIRE_MESSAGE(admin::Run({"cluster", "init", "--nats=" + nats.url(), "--shards=" + shards},
                               out, err) == 0,
                    err.str());
    CHECK(out.str().find("shard 3 at 127.0.0.1:" + std::to_string(port[3])) != std::string::npos);
    for (uint32_t id = 1; id <= kShards; ++id) StartShard(id);
  }
  ~Cluster() {
    for (uint32_t id = 1; id <= kShards; ++id) {
      if (pid[id] > 0) {
        ::kill(pid[id], SIGTERM);
        WaitExit(pid[id]);
      }
    }
  }

  std::unique_ptr<net::ClusterClient> Client() {
    net::ClusterClientOptions o;
    o.nats_url = nats.url();
    auto c = net::ClusterClient::Connect(o);
    REQUIRE_MESSAGE(c.ok(), c.status().ToString());
    return std::move(*c);
  }
};

bool BlockStands(const GraphStateModel& m, uint64_t a, uint64_t b) {
  return m.blocks.contains({a, b}) || m.blocks.contains({b, a});
}

// relation(a, b) with every bit (docs/access.md, "Relations").
net::RelationCode ModelRelation(const GraphStateModel& m, uint64_t a, uint64_t b) {
  if (BlockStands(m, a, b)) {
    return static_cast<net::RelationCode>((m.blocks.contains({a, b}) ? 16 : 0) |
                                          (m.blocks.contains({b, a}) ? 32 : 0));
  }
  const bool out = m.edges.contains({a, b}), in = m.edges.contains({b, a});
  return static_cast<net::RelationCode>((out ? 1 : 0) | (in ? 2 : 0) |
                                        (m.requests.contains({a, b}) ? 4 : 0) |
                                        (m.requests.contains({b, a}) ? 8 : 0));
}

// Pages a user's timeline (or posts) to its end, 7 at a time, each page checked against the
// reference's.
template <typename Fetch, typename Expect>
void CheckFeedPages(Fetch&& fetch, Expect&& expect, uint64_t user, const char* what) {
  net::FeedQuery q;
  q.user = user;
  q.limit = 7;
  for (int page = 0; page < 100; ++page) {
    FeedPageRequest req;
    req.limit = q.limit;
    if (q.after) req.after = PostKey{q.after->ts, q.after->post};
    const FeedPage want = expect(req);
    auto got = fetch(q);
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    std::vector<net::FeedItem> want_items;
    for (const FeedEntry& e : want.entries) want_items.push_back({e.post, e.author, e.ts, e.kind});
    // post/author of each entry, to see which is missing
    std::string items;
    for (const net::FeedItem& e : got->entries)
      items += " " + std::to_string(e.post) + "/" + std::to_string(e.author);
    items += "; expected";
    for (const net::FeedItem& e : want_items)
      items += " " + std::to_string(e.post) + "/" + std::to_string(e.author);
    CHECK_MESSAGE(got->entries == want_items,
                  std::string(what) << " of " << user << ", page " << page << ":" << items);
    if (!want.next) {
      CHECK(!got->next);
      return;
    }
    REQUIRE(got->next);
    q.after = got->next;
  }
}

// Every list, count and relation of every user, through the cluster, against the model; and
// every timeline and author's posts.
void CheckAgainst(net::ClusterClient& c, const Model& m, std::mt19937_64& rng) {
  const GraphStateModel& model = m.graph;
  for (uint64_t u = 1; u <= kUsers; ++u) {
    CheckFeedPages([&](const net::FeedQuery& q) { return c.Timeline(q); },
                   [&](const FeedPageRequest& r) { return m.feed.Timeline(u, r); }, u, "timeline");
    CheckFeedPages([&](const net::FeedQuery& q) { return c.UserPosts(q); },
                   [&](const FeedPageRequest& r) { return m.feed.UserPosts(u, r); }, u, "posts");
  }
  std::vector<uint64_t> everyone;
  for (uint64_t u = 1; u <= kUsers; ++u) everyone.push_back(u);
  for (uint64_t u = 1; u <= kUsers; ++u) {
    std::set<std::pair<uint64_t, int64_t>> following, fans, got_following, got_fans;
    for (const auto& [e, ts] : model.edges) {
      if (e.first == u) following.insert({e.second, ts});
      if (e.second == u) fans.insert({e.first, ts});
    }
    net::PageQuery q;
    q.user = u;
    q.limit = 1000;
    q.viewer = 1 + rng() % kUsers;  // often on another shard: its relations come from there
    // What the page's viewer is to an entry (nothing to itself).
    auto viewer_relation = [&](uint64_t user) {
      return user == *q.viewer ? net::RelationCode::kNone : ModelRelation(model, *q.viewer, user);
    };
    auto f = c.Following(q);
    REQUIRE_MESSAGE(f.ok(), f.status().ToString());
    for (const net::PageEntry& e : f->entries) {
      got_following.insert({e.user, e.ts});
      CHECK(e.viewer_relation == viewer_relation(e.user));
      CHECK(e.mutual == model.edges.contains({e.user, u}));
    }
    auto fa = c.Fans(q);
    REQUIRE(fa.ok());
    for (const net::PageEntry& e : fa->entries) got_fans.insert({e.user, e.ts});
    CHECK(got_following == following);
    if (got_fans != fans) {
      std::string d;
      for (auto& x : got_fans) {
        if (!fans.contains(x)) d += " extra " + std::to_string(x.first);
      }
      for (auto& x : fans) {
        if (!got_fans.contains(x)) d += " missing " + std::to_string(x.first);
      }
      FAIL_CHECK("fans of " << u << " (shard " << c.map().OwnerOf(u) << "):" << d);
    }
    // Whom u blocks and who asks to follow u, with their times, and u's private mark.
    std::set<std::pair<uint64_t, int64_t>> blocks, requests, got_blocks, got_requests;
    for (const auto& [p, ts] : model.blocks) {
      if (p.first == u) blocks.insert({p.second, ts});
    }
    for (const auto& [p, ts] : model.requests) {
      if (p.second == u) requests.insert({p.first, ts});
    }
    auto bl = c.Blocks(q);
    REQUIRE_MESSAGE(bl.ok(), bl.status().ToString());
    for (const net::PageEntry& e : bl->entries) got_blocks.insert({e.user, e.ts});
    CHECK_MESSAGE(got_blocks == blocks, "blocks of " << u);
    CHECK(bl->total == blocks.size());
    auto rq = c.Requests(q);
    REQUIRE_MESSAGE(rq.ok(), rq.status().ToString());
    for (const net::PageEntry& e : rq->entries) {
      got_requests.insert({e.user, e.ts});
      CHECK(e.viewer_relation == viewer_relation(e.user));
    }
    CHECK_MESSAGE(got_requests == requests, "requests to " << u);
    auto priv = c.IsPrivate(u);
    REQUIRE(priv.ok());
    CHECK_MESSAGE(*priv == model.private_users.contains(u), "private mark of " << u);
    auto counts = c.Counts(u);
    REQUIRE(counts.ok());
    CHECK(counts->following == following.size());
    CHECK(counts->fans == fans.size());
    std::vector<uint64_t> others;
    for (uint64_t v : everyone) {
      if (v != u) others.push_back(v);
    }
    // Known followers of a random target: whom u follows that follow it, newest first.
    const uint64_t target = 1 + rng() % kUsers;
    std::map<uint64_t, int64_t> known;
    for (const auto& [e, ts] : model.edges) {
      if (e.first == u && model.edges.contains({e.second, target})) known[e.second] = ts;
    }
    auto kf = c.KnownFollowers(u, target, 1000);
    REQUIRE_MESSAGE(kf.ok(), kf.status().ToString());
    CHECK(kf->total == known.size());
    CHECK(std::set<uint64_t>(kf->users.begin(), kf->users.end()).size() == known.size());
    for (size_t i = 0; i < kf->users.size(); ++i) {
      CHECK(known.contains(kf->users[i]));
      if (i > 0 && known.contains(kf->users[i]) && known.contains(kf->users[i - 1]))
        CHECK(known[kf->users[i - 1]] >= known[kf->users[i]]);
    }
    auto kf2 = c.KnownFollowers(u, target, 2);
    REQUIRE(kf2.ok());
    CHECK(kf2->total == known.size());
    CHECK(kf2->users.size() == std::min<size_t>(2, known.size()));
    auto rel = c.Relations(u, others);
    REQUIRE(rel.ok());
    for (size_t i = 0; i < others.size(); ++i) {
      CHECK_MESSAGE((*rel)[i] == ModelRelation(model, u, others[i]),
                    "relation(" << u << ", " << others[i] << ")");
    }
  }
}

// One block, unblock, private switch, approval, rejection or withdrawal, between barriers:
// the deciding shard then knows every earlier change, so its reply is one node's, and every
// later decision knows this one (changes that cross on the way are
// tests/engine/cluster/remote_access_test's).
void AccessChange(net::ClusterClient& c, Model& m, std::mt19937_64& rng, uint64_t a, uint64_t b) {
  GraphStateModel& model = m.graph;
  REQUIRE(c.Barrier().ok());
  // Requests to answer: a random pending one, when there is any.
  std::vector<GraphStateModel::Pair> pending(std::views::keys(model.requests).begin(),
                                             std::views::keys(model.requests).end());
  const uint64_t pick = rng() % 100;
  if (pick < 25) {
    auto r = c.Block(a, b);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    CHECK(r->created == !model.blocks.contains({a, b}));
    if (r->created) {
      const GraphStateModel::Severed s = model.Block(a, b, r->ts);
      CHECK(r->removed ==
            ((s.unfollowed ? 1 : 0) | (s.lost_follower ? 2 : 0) | (s.request ? 4 : 0)));
      m.feed.Unfollow(a, b);
      m.feed.Unfollow(b, a);
    } else {
      CHECK(r->ts == model.blocks.at({a, b}));
    }
  } else if (pick < 40) {
    auto r = c.Unblock(a, b);
    REQUIRE(r.ok());
    CHECK(*r == model.blocks.contains({a, b}));
    model.Unblock(a, b);
  } else if (pick < 65) {
    const bool on = rng() % 3 != 0;
    std::vector<uint64_t> requesters;
    for (const auto& [p, ts] : model.requests) {
      if (p.second == a) requesters.push_back(p.first);
    }
    auto r = c.SetPrivate(a, on);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    CHECK(r->changed == (on != model.private_users.contains(a)));
    if (r->changed) {
      CHECK(r->approved == (on ? 0 : requesters.size()));
      model.SetPrivate(a, on, r->ts);
      if (!on) {
        for (uint64_t q : requesters) m.feed.Follow(q, a);
      }
    }
  } else if (!pending.empty()) {
    const auto [requester, target] = pending[rng() % pending.size()];
    if (pick < 85) {
      auto r = c.Approve(target, requester);
      REQUIRE_MESSAGE(r.ok(), r.status().ToString());
      CHECK(r->created);
      model.Approve(target, requester, r->followed_at);
      m.feed.Follow(requester, target);
    } else if (pick < 93) {
      auto r = c.Reject(target, requester);
      REQUIRE(r.ok());
      CHECK(*r);
      model.RemoveRequest(requester, target);
    } else {
      auto r = c.Withdraw(requester, target);
      REQUIRE(r.ok());
      CHECK(*r);
      model.RemoveRequest(requester, target);
    }
  }
  REQUIRE(c.Barrier().ok());
}

// What a round of random changes does.
struct RoundOptions {
  int ops = 300;
  uint64_t access_percent = 8;  // of the changes, AccessChange's (between barriers)
  std::set<uint32_t> skip;      // no change is decided on these shards (they are down)
  bool removals = true;         // at the round's end
};

// One round of random changes, all acknowledged, removals last (a follow decided after a
// removal but before it reached the follower's shard is ordered before it: docs/cluster.md,
// "Removals"), so a round that follows another without a barrier must come after one
// without removals.
void RandomRound(net::ClusterClient& c, Model& m, std::mt19937_64& rng, const RoundOptions& o) {
  GraphStateModel& model = m.graph;
  std::vector<uint64_t> removed;
  for (int i = 0; i < o.ops; ++i) {
    const uint64_t a = 1 + rng() % kUsers;
    uint64_t b = 1 + rng() % kUsers;
    if (b == a) b = a % kUsers + 1;
    if (o.skip.contains(c.map().OwnerOf(a))) continue;
    const uint64_t pick = rng() % 100;
    if (rng() % 100 < o.access_percent) {
      AccessChange(c, m, rng, a, b);
      continue;
    }
    if (pick < 45) {
      const int64_t ts = 1'700'000'000'000 + static_cast<int64_t>(rng() % 1'000'000);
      auto r = c.Follow(a, b, ts);
      if (BlockStands(model, a, b)) {
        CHECK(r.status().code() == Code::kBlocked);
        continue;
      }
      REQUIRE_MESSAGE(r.ok(), r.status().ToString());
      if (model.private_users.contains(b) && !model.edges.contains({a, b})) {
        // b is private: a request, on b's shard once it arrives.
        CHECK((static_cast<int>(r->relation) & 4) != 0);
        CHECK(r->created == !model.requests.contains({a, b}));
        if (r->created) model.Request(a, b, r->followed_at);
        continue;
      }
      CHECK(r->created == !model.edges.contains({a, b}));
      if (r->created) model.Follow(a, b, ts);
      m.feed.Follow(a, b);
    } else if (pick < 65) {
      auto r = c.Unfollow(a, b);
      REQUIRE(r.ok());
      CHECK(*r == model.edges.contains({a, b}));
      model.Unfollow(a, b);
      m.feed.Unfollow(a, b);
    } else if (pick < 85) {
      // Times collide often, so that posts of one time order by id on every shard.
      const int64_t ts = 1'700'000'000'000 + static_cast<int64_t>(rng() % 500);
      const uint64_t post = m.next_post++;
      const uint8_t kind = static_cast<uint8_t>(rng() % 3);
      auto r = c.Publish(a, post, kind, ts);
      REQUIRE_MESSAGE(r.ok(), r.status().ToString());
      const PublishOutcome want = m.feed.Publish(a, post, kind, ts);
      CHECK(r->retained == want.retained);
      CHECK(r->evicted == want.evicted);
    } else if (pick < 90) {
      std::vector<PostId> mine;
      for (const auto& [author, id] : m.feed.AllPosts()) {
        if (author == a) mine.push_back(id);
      }
      if (mine.empty()) continue;
      const PostId post = mine[rng() % mine.size()];
      REQUIRE(c.DeletePost(a, post).ok());
      CHECK(m.feed.Delete(a, post));
    } else if (pick < 94) {
      const bool on = rng() % 3 != 0;
      auto r = c.Mute(a, b, on);
      REQUIRE_MESSAGE(r.ok(), r.status().ToString());
      CHECK(*r == m.feed.SetMute(a, b, on));
    } else if (pick < 98) {
      const bool on = rng() % 3 != 0;
      auto r = c.Hide(a, b, on);
      REQUIRE_MESSAGE(r.ok(), r.status().ToString());
      CHECK(*r == m.feed.SetHide(a, b, on));
    } else if (o.removals) {
      removed.push_back(a);  // at the round's end: see docs/cluster.md, "Removals"
    }
  }
  for (uint64_t a : removed) {
    REQUIRE(c.RemoveUser(a).ok());
    model.RemoveUser(a);
    m.feed.RemoveUser(a);
  }
}

TEST_CASE("a three-shard cluster answers like one node, through a shard's SIGKILL") {
  Cluster cluster;
  auto client = cluster.Client();
  Model model;
  std::mt19937_64 rng(25);
  for (int round = 0; round < 6; ++round) {
    RandomRound(*client, model, rng, {});
    REQUIRE_MESSAGE(client->Barrier().ok(), "round " << round);
    CheckAgainst(*client, model, rng);
  }
  // Shard 3 dies with changes in flight both ways (no barrier after the round); shards 1 and
  // 2 go on deciding changes it must apply, which wait in JetStream; restarted, it recovers
  // its WAL, resends what it had not sent, and drains its consumer.
  RandomRound(*client, model, rng, {.access_percent = 0, .removals = false});
  cluster.KillShard(3);
  RandomRound(*client, model, rng, {.access_percent = 0, .skip = {3}});
  cluster.StartShard(3);
  auto fresh = cluster.Client();
  REQUIRE(fresh->Barrier().ok());
  CheckAgainst(*fresh, model, rng);
  auto infos = fresh->ShardInfos();
  REQUIRE(infos.ok());
  uint64_t applied = 0;
  for (auto& [id, f] : *infos) applied += f["cluster_records_applied"];
  CHECK(applied > 0);
}

TEST_CASE("messages handed to a shard that died unacknowledged are applied, before newer ones") {
  Cluster cluster;
  auto client = cluster.Client();
  Model model;
  std::mt19937_64 rng(27);
  cluster.KillShard(3);
  RandomRound(*client, model, rng,
              {.ops = 200, .access_percent = 0, .skip = {3}, .removals = false});
  // Shard 3's consumer hands those changes to a process that dies before acknowledging them
  // (here the test itself, pulling without acknowledging). JetStream would redeliver them
  // only after the ack wait, and hand out newer ones meanwhile.
  auto link = net::NatsLink::Connect(cluster.nats.url());
  REQUIRE(link.ok());
  auto pull = PullConsumer::Bind((*link)->connection(), (*link)->names().stream,
                                 (*link)->ConsumerOf(3));
  REQUIRE(pull.ok());
  size_t taken = 0;
  for (;;) {  // until the other shards have sent everything
    auto fetched = (*pull)->Fetch(1024, 1000);
    if (!fetched.ok() || fetched->empty()) break;
    taken += fetched->size();
  }
  pull->reset();
  REQUIRE(taken > 0);
  RandomRound(*client, model, rng, {.ops = 200, .access_percent = 0, .skip = {3}});
  cluster.StartShard(3);
  // Unless the inbox read the older ones from the stream first (its consumer delivers the
  // newer ones), they would raise shard 3's inbound positions past the older ones, which
  // would then be skipped unapplied.
  REQUIRE(client->Barrier().ok());
  CheckAgainst(*client, model, rng);
}

TEST_CASE("nats-server killed under traffic and restarted: every change still arrives") {
  Cluster cluster;
  auto client = cluster.Client();
  Model model;
  std::mt19937_64 rng(26);
  RandomRound(*client, model, rng, {.ops = 200, .access_percent = 0, .removals = false});
  // JetStream dies while the outboxes are still sending that round. The shards go on
  // deciding and acknowledging changes; each outbox keeps what it could not send (its
  // cursor holds the WAL) and retries.
  cluster.nats.Kill();
  RandomRound(*client, model, rng, {.ops = 300, .access_percent = 0});
  auto infos = client->ShardInfos();
  REQUIRE(infos.ok());
  for (auto& [id, f] : *infos) {
    CHECK_MESSAGE(f["cluster_inbound_pending"] == UINT64_MAX, "shard " << id);  // unknown
  }
  cluster.nats.Restart();
  // Messages JetStream handed an inbox just before it died come again first (ack floor).
  REQUIRE(client->Barrier(std::chrono::milliseconds(60'000)).ok());
  CheckAgainst(*client, model, rng);
}

// Moves buckets [first, last] to shard `to` with relgraph-admin, while `load` runs on this
// thread until the move is over; returns the tool's output.
std::string MoveUnderLoad(Cluster& cluster, uint32_t first, uint32_t last, uint32_t to,
                          const std::function<void()>& load) {
  std::atomic<bool> moved{false};
  std::ostringstream out, err;
  int code = -1;
  std::thread mover([&] {
    code = admin::Run({"cluster", "move-bucket", "--nats=" + cluster.nats.url(),
                       "--buckets=" + std::to_string(first) + "-" + std::to_string(last),
                       "--to=" + std::to_string(to), "--timeout-ms=60000"},
                      out, err);
    moved = true;
  });
  int rounds = 0;
  try {
    while (!moved.load() || rounds < 2) {
      load();
      ++rounds;
    }
  } catch (...) {  // a failed REQUIRE: the tool's thread ends first
    mover.join();
    throw;
  }
  mover.join();
  REQUIRE_MESSAGE(code == 0, err.str());
  MESSAGE(out.str() << rounds << " load rounds");
  return out.str();
}

TEST_CASE("buckets moved under load lose no write; a stale client gets moved and recovers") {
  Cluster cluster;
  auto client = cluster.Client();
  auto stale = cluster.Client();  // keeps the map from before the moves
  Model model;
  std::mt19937_64 rng(28);
  for (int round = 0; round < 3; ++round) {
    RandomRound(*client, model, rng, {});
    REQUIRE(client->Barrier().ok());
  }
  // Shard 1 owns buckets 0-1365: a third of its users go to shard 2, while the users of
  // every shard, the moving ones too, go on following, publishing, muting, hiding (their
  // commands wait out the pause, answered `moving` and retried). Blocks, private switches
  // and removals, whose effects on other shards' users lag, stay between barriers.
  const uint32_t first = 0, last = 1023;
  std::vector<uint64_t> moving;
  for (uint64_t u = 1; u <= kUsers; ++u) {
    if (net::BucketOf(u, client->map().buckets) <= last) moving.push_back(u);
  }
  REQUIRE(moving.size() >= 5);
  const uint64_t version_before = stale->map().version;
  const std::string out = MoveUnderLoad(cluster, first, last, 2, [&] {
    RandomRound(*client, model, rng, {.ops = 40, .access_percent = 0, .removals = false});
  });
  CHECK(out.find("are on shard 2") != std::string::npos);
  CHECK(out.find("paused") != std::string::npos);
  REQUIRE(client->Barrier().ok());
  REQUIRE(client->RefreshMap().ok());
  for (uint64_t u : moving) CHECK(client->map().OwnerOf(u) == 2);
  CHECK(!client->map().move.has_value());
  // The stale client asks shard 1 first, is told `moved`, reads the map, and goes on.
  CHECK(stale->map().version == version_before);
  REQUIRE(stale->Counts(moving[0]).ok());
  CHECK(stale->map().version > version_before);
  CheckAgainst(*stale, model, rng);
  // And back, and on to a third shard, with removals and access changes around them.
  for (uint32_t to : {1u, 3u}) {
    MoveUnderLoad(cluster, first, last, to, [&] {
      RandomRound(*client, model, rng, {.ops = 40, .access_percent = 0, .removals = false});
    });
    RandomRound(*client, model, rng, {});
    REQUIRE(client->Barrier().ok());
    CheckAgainst(*client, model, rng);
  }
  // Who did what: 1 -> 2 -> 1 -> 3. The old owners drop what only the moved users needed
  // once the move line is gone (the drops change nothing a read about their users sees).
  std::map<uint32_t, std::map<std::string, uint64_t>> infos;
  for (int i = 0; i < 1000; ++i) {
    auto got = client->ShardInfos();
    REQUIRE(got.ok());
    infos = *got;
    if (infos[1]["cluster_foreign_dropped"] > 0 && infos[2]["cluster_foreign_dropped"] > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(infos[1]["cluster_moves_exported"] == 2);
  CHECK(infos[1]["cluster_moves_imported"] == 1);
  CHECK(infos[2]["cluster_moves_exported"] == 1);
  CHECK(infos[2]["cluster_moves_imported"] == 1);
  CHECK(infos[3]["cluster_moves_imported"] == 1);
  CHECK(infos[1]["cluster_foreign_dropped"] > 0);
  CHECK(infos[2]["cluster_foreign_dropped"] > 0);
  CheckAgainst(*client, model, rng);
}

// Waits until shard `id`'s INFO field `name` is `value` (asking that shard only: another
// may be stopped).
void WaitInfo(Cluster& cluster, uint32_t id, const std::string& name, uint64_t value) {
  net::ClientOptions o;
  o.port = cluster.port[id];
  for (int i = 0; i < 2000; ++i) {
    if (auto c = net::Client::Connect(o); c.ok()) {
      if (auto info = (*c)->Info(); info.ok()) {
        for (const net::InfoField& f : info->fields) {
          if (f.name == name && f.value == value) return;
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL("shard " << id << " never showed " << name << " = " << value);
}

// A client whose map predates a move holds two users on one shard, and so sends a page with
// its viewer, or a known_followers, there whole; the move took only one of the two away, so
// that shard (or, when the page's user moved, its new one) answers `moved` about the other.
// The map the client then reads parts the two: it must ask across the two shards, as a client
// holding the new map would have from the start, not take the refusal for the shard's own map
// lagging and ask again until moving_wait (short here: a wait fails the question).
TEST_CASE("pairs a move parted are asked across shards by a client whose map predates it") {
  Cluster cluster;
  auto client = cluster.Client();
  Model model;
  std::mt19937_64 rng(30);
  for (int round = 0; round < 2; ++round) {
    RandomRound(*client, model, rng, {.removals = false});
    REQUIRE(client->Barrier().ok());
  }
  // Shard 1 owns buckets 0-1365: 0-1023 go to shard 2, the rest stay. The pair: the users of
  // either part with the most edges.
  const net::ShardMap before = client->map();
  auto degree = [&](uint64_t u) {
    return std::ranges::count_if(model.graph.edges, [&](const auto& e) {
      return e.first.first == u || e.first.second == u;
    });
  };
  uint64_t stayed = 0, moved = 0;
  for (uint64_t u = 1; u <= kUsers; ++u) {
    if (before.OwnerOf(u) != 1) continue;
    uint64_t& pick = net::BucketOf(u, before.buckets) <= 1023 ? moved : stayed;
    if (pick == 0 || degree(u) > degree(pick)) pick = u;
  }
  REQUIRE(stayed != 0);
  REQUIRE(moved != 0);
  // One client per question, each with the map from before the move (the first `moved` it
  // gets brings it the new one).
  constexpr int kQuestions = 12;  // five pages and known_followers, each pair both ways
  std::vector<std::unique_ptr<net::ClusterClient>> stale;
  for (int i = 0; i < kQuestions; ++i) {
    net::ClusterClientOptions o;
    o.nats_url = cluster.nats.url();
    o.moving_wait = std::chrono::milliseconds(2000);
    auto c = net::ClusterClient::Connect(o);
    REQUIRE_MESSAGE(c.ok(), c.status().ToString());
    stale.push_back(std::move(*c));
  }
  std::ostringstream out, err;
  REQUIRE_MESSAGE(admin::Run({"cluster", "move-bucket", "--nats=" + cluster.nats.url(),
                              "--buckets=0-1023", "--to=2", "--timeout-ms=60000"},
                             out, err) == 0,
                  err.str());
  REQUIRE(client->Barrier().ok());
  REQUIRE(client->RefreshMap().ok());
  REQUIRE(client->map().OwnerOf(stayed) == 1);
  REQUIRE(client->map().OwnerOf(moved) == 2);

  int asked = 0;
  for (const auto& [user, viewer] : {std::pair{stayed, moved}, std::pair{moved, stayed}}) {
    net::PageQuery q;
    q.user = user;
    q.limit = 1000;
    q.viewer = viewer;
    // Each page through a stale client equals the page through the client holding the new
    // map; the entries, or nothing when the stale client failed.
    auto same_page = [&](const std::string& what, auto&& ask) -> std::vector<net::PageEntry> {
      net::ClusterClient& c = *stale[asked++];
      REQUIRE(c.map().version == before.version);
      auto got = ask(c);
      CHECK_MESSAGE(got.ok(),
                    what << " of " << user << " viewer " << viewer
                         << " through a map from before the move: " << got.status().ToString());
      CHECK(c.map().version > before.version);  // it was told `moved`
      if (!got.ok()) return {};
      auto want = ask(*client);
      REQUIRE(want.ok());
      CHECK_MESSAGE(got->entries == want->entries, what << " of " << user << " viewer " << viewer);
      return got->entries;
    };
    // The following and fans pages are the one-node model's, with the viewer's relations.
    auto check_model = [&](const std::vector<net::PageEntry>& entries, bool fans,
                           const std::string& what) {
      std::set<std::pair<uint64_t, int64_t>> want, got;
      for (const auto& [e, ts] : model.graph.edges) {
        if ((fans ? e.second : e.first) == user) want.insert({fans ? e.first : e.second, ts});
      }
      for (const net::PageEntry& e : entries) {
        got.insert({e.user, e.ts});
        const net::RelationCode r = e.user == viewer ? net::RelationCode::kNone
                                                     : ModelRelation(model.graph, viewer, e.user);
        CHECK_MESSAGE(e.viewer_relation == r,
                      what << " of " << user << ": viewer " << viewer << " to " << e.user);
      }
      CHECK_MESSAGE(got == want, what << " of " << user);
    };
    const auto following =
        same_page("following", [&](net::ClusterClient& c) { return c.Following(q); });
    const auto fans = same_page("fans", [&](net::ClusterClient& c) { return c.Fans(q); });
    same_page("friends", [&](net::ClusterClient& c) { return c.Friends(q); });
    same_page("blocks", [&](net::ClusterClient& c) { return c.Blocks(q); });
    same_page("requests", [&](net::ClusterClient& c) { return c.Requests(q); });
    check_model(following, false, "following");
    check_model(fans, true, "fans");
    // Known followers of the page's user among whom the viewer follows.
    net::ClusterClient& c = *stale[asked++];
    REQUIRE(c.map().version == before.version);
    auto got = c.KnownFollowers(viewer, user, 1000);
    CHECK_MESSAGE(got.ok(), "known_followers " << viewer << " " << user
                                               << " through a map from before the move: "
                                               << got.status().ToString());
    CHECK(c.map().version > before.version);
    if (!got.ok()) continue;
    std::set<uint64_t> known;
    for (const auto& [e, ts] : model.graph.edges) {
      if (e.first == viewer && model.graph.edges.contains({e.second, user})) known.insert(e.second);
    }
    CHECK(got->total == known.size());
    CHECK(std::set<uint64_t>(got->users.begin(), got->users.end()) == known);
    auto want = client->KnownFollowers(viewer, user, 1000);
    REQUIRE(want.ok());
    CHECK(got->users == want->users);
  }
  CHECK(asked == kQuestions);
}

TEST_CASE("a move stopped between phases, its shards killed, is finished by running it again") {
  Cluster cluster;
  auto client = cluster.Client();
  Model model;
  std::mt19937_64 rng(29);
  for (int round = 0; round < 2; ++round) {
    RandomRound(*client, model, rng, {});
    REQUIRE(client->Barrier().ok());
  }
  auto link = net::NatsLink::Connect(cluster.nats.url());
  REQUIRE(link.ok());
  // The tool's first step by hand: buckets 0-1023 of shard 1 are to go to shard 2.
  net::ShardMap map = (*link)->ReadMap().value();
  map.move = net::BucketMove{0, 1023, 1, 2, net::MovePhase::kPrepare, 77};
  map.version = (*link)->ReplaceMap(map, map.version).value();
  WaitInfo(cluster, 2, "cluster_inbox_held", 1);
  // The new owner restarts: its inbox waits from the start.
  cluster.KillShard(2);
  cluster.StartShard(2);
  WaitInfo(cluster, 2, "cluster_inbox_held", 1);
  // The old owner stops (SIGSTOP) while the others' users change things, many about moving
  // users: routed to it by the old map, they wait in its consumer.
  ::kill(cluster.pid[1], SIGSTOP);
  RandomRound(*client, model, rng,
              {.ops = 400, .access_percent = 0, .skip = {1}, .removals = false});
  // The flip, by hand: changes about the moving users now go to shard 2, and wait there.
  for (uint32_t b = 0; b <= 1023; ++b) map.owner[b] = 2;
  map.move->phase = net::MovePhase::kFlip;
  // As a tool that flipped an hour ago and was killed would have left it: the pause the
  // resumed run prints counts from here.
  const uint64_t hour_ms = 3'600'000;
  map.move->flipped_ms =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count()) -
      hour_ms;
  map.version = (*link)->ReplaceMap(map, map.version).value();
  REQUIRE(client->RefreshMap().ok());
  uint64_t mover_user = 0;  // a moving user
  for (uint64_t u = 1; u <= kUsers && mover_user == 0; ++u) {
    if (net::BucketOf(u, map.buckets) <= 1023) mover_user = u;
  }
  REQUIRE(mover_user != 0);
  WaitInfo(cluster, 2, "cluster_map_version", map.version);
  WaitInfo(cluster, 3, "cluster_map_version", map.version);
  net::ClientOptions o;
  o.port = cluster.port[2];
  auto shard2 = net::Client::Connect(o);
  REQUIRE(shard2.ok());
  auto refused = (*shard2)->Counts(mover_user);
  CHECK(refused.status().code() == Code::kMoving);
  CHECK(refused.status().message().find("from shard 1; retry shortly") != std::string::npos);
  RandomRound(*client, model, rng,
              {.ops = 200, .access_percent = 0, .skip = {1, 2}, .removals = false});
  // The old owner dies with everything undone, and the tool is run again to finish the move
  // while it is down. Restarted, the old owner has a backlog routed to it by the old map to
  // apply before it may hand the users over. A command about a moving user waits meanwhile.
  cluster.KillShard(1);
  std::ostringstream out, err;
  int code = -1;
  std::thread mover([&] {
    code = admin::Run(
        {"cluster", "move-bucket", "--nats=" + cluster.nats.url(), "--buckets=0-1023", "--to=2"},
        out, err);
  });
  std::atomic<bool> answered{false};
  std::thread waiting([&] {
    auto c = cluster.Client();
    auto r = c->Counts(mover_user);
    CHECK_MESSAGE(r.ok(), r.status().ToString());
    answered = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(!answered.load());
  cluster.StartShard(1);
  mover.join();
  waiting.join();
  REQUIRE_MESSAGE(code == 0, err.str());
  CHECK(out.str().find("resuming move 77 of buckets 0-1023 in phase flip") != std::string::npos);
  {
    const size_t at = out.str().find("commands about the buckets paused ");
    REQUIRE_MESSAGE(at != std::string::npos, out.str());
    const double paused = std::stod(out.str().substr(at + 34));
    CHECK_MESSAGE(paused >= hour_ms, out.str());
    CHECK(out.str().find("at least") == std::string::npos);
  }
  CHECK(answered.load());
  o.port = cluster.port[1];
  auto shard1 = net::Client::Connect(o);
  REQUIRE(shard1.ok());
  CHECK((*shard1)->Counts(mover_user).status().code() == Code::kMoved);
  std::ostringstream out2, err2;
  CHECK(admin::Run({"cluster", "move-bucket", "--nats=" + cluster.nats.url(), "--buckets=0-1023",
                    "--to=2"},
                   out2, err2) == 1);
  CHECK_MESSAGE(err2.str().find("are on shard 2 already") != std::string::npos, err2.str());
  REQUIRE(client->Barrier().ok());
  CheckAgainst(*client, model, rng);
  RandomRound(*client, model, rng, {});
  REQUIRE(client->Barrier().ok());
  CheckAgainst(*client, model, rng);
}

TEST_CASE("move-bucket reconnects to a new owner restarted during the prepare") {
  Cluster cluster;
  auto client = cluster.Client();
  Model model;
  std::mt19937_64 rng(31);
  RandomRound(*client, model, rng, {});
  REQUIRE(client->Barrier().ok());
  // With the old owner down the tool stays in the prepare, polling the new owner's INFO over
  // the connection it opened to it.
  cluster.KillShard(1);
  std::ostringstream out, err;
  int code = -1;
  std::thread mover([&] {
    code = admin::Run({"cluster", "move-bucket", "--nats=" + cluster.nats.url(),
                       "--buckets=0-1023", "--to=2", "--timeout-ms=60000"},
                      out, err);
  });
  WaitInfo(cluster, 2, "cluster_inbox_held", 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the tool has asked it
  // The new owner restarts: the tool's connection to it is broken.
  cluster.KillShard(2);
  cluster.StartShard(2);
  WaitInfo(cluster, 2, "cluster_inbox_held", 1);
  cluster.StartShard(1);
  mover.join();
  // Without dialing the new owner again, the tool waits out its timeout on the dead
  // connection and fails, and the new owner's inbox stays held.
  REQUIRE_MESSAGE(code == 0, err.str());
  CHECK(out.str().find("buckets 0-1023 are on shard 2") != std::string::npos);
  WaitInfo(cluster, 2, "cluster_inbox_held", 0);
  REQUIRE(client->Barrier().ok());  // it also drops the client's connections to the restarted
  RandomRound(*client, model, rng, {});
  REQUIRE(client->Barrier().ok());
  CheckAgainst(*client, model, rng);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE("a shard started while nats-server is down serves its users, then joins") {
  Cluster cluster;
  auto client = cluster.Client();
  Model model;
  std::mt19937_64 rng(37);
  RandomRound(*client, model, rng, {});
  REQUIRE(client->Barrier().ok());
  for (uint32_t id = 1; id <= kShards; ++id) cluster.StopShard(id);
  cluster.nats.Kill();

  // A shard that never saw a map (a new data directory) starts, but refuses every command,
  // saying why, and keeps trying to join.
  const std::string fresh_log = cluster.dir.path() + "/fresh.log";
  const pid_t fresh = Spawn({"--data-dir=" + cluster.dir.path() + "/fresh", "--listen=127.0.0.1:0",
                             "--cluster=" + cluster.nats.url(), "--shard-id=3"},
                            fresh_log);
  {
    net::ClientOptions o;
    o.port = WaitForPort(fresh_log, fresh);
    auto c = net::Client::Connect(o);
    REQUIRE_MESSAGE(c.ok(), c.status().ToString());
    const auto refused = (*c)->Counts(1);
    CHECK(refused.status().code() == Code::kUnavailable);
    CHECK_MESSAGE(refused.status().message().find("never seen its shard map") != std::string::npos,
                  refused.status().message());
    CHECK(ReadAll(fresh_log).find("this shard has never seen the shard map") != std::string::npos);
  }
  ::kill(fresh, SIGTERM);
  WaitExit(fresh);

  // Shard 1 starts with nats-server down: it serves its users by the map it saved, and
  // decides their changes, also those about other shards' users (they wait in its WAL).
  cluster.StartShard(1);
  WaitInfo(cluster, 1, "cluster_joined", 0);
  RandomRound(*client, model, rng,
              {.ops = 300, .access_percent = 0, .skip = {2, 3}, .removals = false});
  for (uint64_t u = 1; u <= kUsers; ++u) {
    if (client->map().OwnerOf(u) != 1) continue;
    net::PageQuery q;
    q.user = u;
    q.limit = 1000;
    auto page = client->Following(q);
    REQUIRE_MESSAGE(page.ok(), page.status().ToString());
    std::set<uint64_t> got, want;
    for (const net::PageEntry& e : page->entries) got.insert(e.user);
    for (const auto& [edge, ts] : model.graph.edges) {
      if (edge.first == u) want.insert(edge.second);
    }
    CHECK(got == want);
  }
  // nats-server comes back, and the others start: shard 1 joins, and what it decided
  // meanwhile reaches them.
  cluster.nats.Restart();
  cluster.StartShard(2);
  cluster.StartShard(3);
  WaitInfo(cluster, 1, "cluster_joined", 1);
  REQUIRE(client->Barrier().ok());
  CheckAgainst(*client, model, rng);
  CHECK(ReadAll(cluster.dir.path() + "/shard1.2.log").find("joined the cluster") !=
        std::string::npos);
}

TEST_CASE("a shard refuses users of other buckets with moved") {
  Cluster cluster;
  auto client = cluster.Client();
  const net::ShardMap& map = client->map();
  uint64_t elsewhere = 1;
  while (map.OwnerOf(elsewhere) == 1) ++elsewhere;
  net::ClientOptions o;
  o.port = cluster.port[1];
  auto shard1 = net::Client::Connect(o);
  REQUIRE(shard1.ok());
  auto counts = (*shard1)->Counts(elsewhere);
  REQUIRE(counts.status().code() == Code::kMoved);
  const uint32_t owner = map.OwnerOf(elsewhere);
  CHECK(counts.status().detail() == owner);
  CHECK(counts.status().message().find("127.0.0.1:" + std::to_string(cluster.port[owner])) !=
        std::string::npos);
  CHECK((*shard1)->Follow(elsewhere, 7).status().code() == Code::kMoved);
  uint64_t here = 1;
  while (map.OwnerOf(here) != 1) ++here;
  CHECK((*shard1)->Block(elsewhere, here).status().code() == Code::kMoved);
  CHECK((*shard1)->Counts(here).ok());
  // The cluster client routes both.
  CHECK(client->Counts(elsewhere).ok());
  CHECK(client->Follow(elsewhere, here).ok());
  // A block decided here reaches the blocked user's shard, which then refuses its follow.
  CHECK((*shard1)->Block(here, elsewhere).ok());
  REQUIRE(client->Barrier().ok());
  CHECK(client->Follow(elsewhere, here).status().code() == Code::kBlocked);
  CHECK(client->Relation(elsewhere, here).value() == net::RelationCode::kBlockedBy);
}

TEST_CASE("relgraph-cli --cluster routes each command to its user's shard") {
  Cluster cluster;
  auto client = cluster.Client();
  const net::ShardMap& map = client->map();
  // Two users on different shards, neither on shard 1.
  uint64_t a = 1, b = 1;
  while (map.OwnerOf(a) == 1) ++a;
  b = a + 1;
  while (map.OwnerOf(b) == 1 || map.OwnerOf(b) == map.OwnerOf(a)) ++b;
  auto run = [&](std::vector<std::string> words, bool json = false) {
    return cli::RunClusterCommand(*client, words, json);
  };
  auto f = run({"follow", std::to_string(a), std::to_string(b)});
  REQUIRE_MESSAGE(f.ok(), f.status().ToString());
  CHECK(f->find("created: true") != std::string::npos);
  REQUIRE(run({"follow", std::to_string(b), std::to_string(a)}).ok());
  REQUIRE(run({"publish", std::to_string(b), "500", "0", "1700000000000"}).ok());
  auto q = run({"barrier"});
  REQUIRE_MESSAGE(q.ok(), q.status().ToString());
  // a's fans live on a's shard; the page's viewer b is elsewhere.
  auto fans = run({"fans", std::to_string(a), "--viewer=" + std::to_string(b)}, true);
  REQUIRE_MESSAGE(fans.ok(), fans.status().ToString());
  CHECK(fans->find("\"user\":" + std::to_string(b)) != std::string::npos);
  auto timeline = run({"timeline", std::to_string(a)});
  REQUIRE_MESSAGE(timeline.ok(), timeline.status().ToString());
  CHECK(timeline->find("500") != std::string::npos);
  auto known = run({"known-followers", std::to_string(a), std::to_string(a)}, true);
  REQUIRE_MESSAGE(known.ok(), known.status().ToString());
  CHECK(known->find("\"total\":1") != std::string::npos);
  auto shards = run({"map"});
  REQUIRE(shards.ok());
  CHECK(shards->find("shard 3 127.0.0.1:" + std::to_string(cluster.port[3])) != std::string::npos);
  CHECK(run({"info"}).status().message().find("ask a shard") != std::string::npos);
  CHECK(run({"nonsense", "1"}).status().message().find("unknown command") != std::string::npos);
  CHECK(run({"counts", "0"}).status().code() == Code::kInvalidUserId);
}

TEST_CASE("relgraph-bench --target=cluster runs every cluster row") {
  Cluster cluster;
  const std::string out = cluster.dir.path() + "/bench.out";
  const std::string cmd = std::string(RELGRAPH_BENCH_PATH) +
                          " --target=cluster --nats=" + cluster.nats.url() +
                          " --ops=6000 --latency-ops=200 --connections=2 --pipeline=32"
                          " --propagation-seconds=0.5 --format=csv > " +
                          out + " 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* row :
       {"cluster_follow_same_unpipelined", "cluster_follow_cross_unpipelined",
        "cluster_relation_unpipelined", "cluster_follows", "cluster_propagation"}) {
    CHECK_MESSAGE(text.find(std::string(row) + ",") != std::string::npos, row << " in " << text);
  }
  // Every follow made it to its followee's shard: the barrier ran inside cluster_follows.
  auto client = cluster.Client();
  auto infos = client->ShardInfos();
  REQUIRE(infos.ok());
  uint64_t applied = 0;
  for (auto& [id, f] : *infos) applied += f["cluster_records_applied"];
  CHECK(applied > 6000 / 2);
}

}  // namespace
}  // namespace relgraph
