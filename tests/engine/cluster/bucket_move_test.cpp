// Bucket moves between shards played by Dbs (tests/engine/cluster/cluster_harness.h): Db::ExportUsers
// and Db::DropForeign on the old owner, Db::MoveIn on the new, in the order a move's phases give
// them (docs/cluster.md, "Moving a bucket"): the new owner's inbox held, the map flipped, the old
// owner drained, state handed over, the inbox released. Changes go on around it; after every
// drain each shard holds exactly the part of a single Db's state that touches its users, and
// the moved users' posts and mutes are on their new shard.
#include <doctest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/db.h"
#include "tests/engine/cluster/cluster_harness.h"
#include "tests/engine/graph_state_model.h"

namespace relgraph {
namespace {

using testing::GraphStateModel;

constexpr uint32_t kShards = 3;
constexpr UserId kUsers = 30;
constexpr uint32_t kBuckets = 6;  // a user's bucket: u % kBuckets
using Cluster = testing::ClusterHarness<kShards>;

struct Placement {
  uint32_t owner[kBuckets];
  Placement() {
    for (uint32_t b = 0; b < kBuckets; ++b) owner[b] = b % kShards;
  }
  uint32_t Of(UserId u) const { return owner[u % kBuckets]; }
};

GraphStateModel Held(Db& db) {
  return db.Read([](const Graph& g) { return GraphStateModel::Of(g); });
}

GraphStateModel Touching(const GraphStateModel& m, const Placement& p, uint32_t s) {
  GraphStateModel out;
  auto keep = [&](const auto& from, auto& to) {
    for (const auto& [pair, ts] : from) {
      if (p.Of(pair.first) == s || p.Of(pair.second) == s) to[pair] = ts;
    }
  };
  keep(m.edges, out.edges);
  keep(m.blocks, out.blocks);
  keep(m.requests, out.requests);
  out.private_users = m.private_users;
  return out;
}

// One random change by `a` about `b` on `db`; its outcome as text, to compare replies.
std::string RandomChange(Db& db, UserId a, UserId b, uint64_t pick, PostId* next_post) {
  auto code = [](const Status& s) { return "error " + std::to_string(static_cast<int>(s.code())); };
  if (pick < 30) {
    auto r = db.Follow(a, b);
    return r.ok() ? "follow " + std::to_string(r->created) : code(r.status());
  }
  if (pick < 42) {
    auto r = db.Unfollow(a, b);
    return r.ok() ? "unfollow " + std::to_string(*r) : code(r.status());
  }
  if (pick < 50) {
    auto r = db.Block(a, b);
    return r.ok() ? "block " + std::to_string(r->created) : code(r.status());
  }
  if (pick < 55) {
    auto r = db.Unblock(a, b);
    return r.ok() ? "unblock " + std::to_string(*r) : code(r.status());
  }
  if (pick < 60) {
    auto r = db.SetPrivate(a, pick % 2 == 0);
    return r.ok() ? "private" : code(r.status());
  }
  if (pick < 66) {
    auto r = db.Approve(a, b);
    return r.ok() ? "approve " + std::to_string(r->followed_at) : code(r.status());
  }
  if (pick < 69) {
    auto r = db.Withdraw(a, b);
    return r.ok() ? "withdraw " + std::to_string(*r) : code(r.status());
  }
  if (pick < 84) {
    auto r = db.Publish(a, (*next_post)++, 0, 0);
    return r.ok() ? "publish " + std::to_string(r->evicted) : code(r.status());
  }
  if (pick < 92) {
    auto r = db.Mute(a, b, pick % 3 != 0);
    return r.ok() ? "mute " + std::to_string(*r) : code(r.status());
  }
  auto r = db.Hide(a, b, pick % 3 != 0);
  return r.ok() ? "hide " + std::to_string(*r) : code(r.status());
}

// Few posts per author and a short timeline, so posts are trimmed; authors with more than 3
// fans on a shard are pulled there, and their posts go to every shard.
void FeedOptions(DbOptions& o) {
  o.feed.posts_per_author = 6;
  o.feed.timeline_length = 20;
  o.feed.celebrity_fans = 3;
}

struct World {
  Cluster c{31, FeedOptions};
  testing::TestDir one_dir;
  std::unique_ptr<Db> one;  // the single node every reply and state is checked against
  Placement map;
  std::mt19937_64 rng{32};
  PostId next_post = 1, one_next_post = 1;
  // The move in progress, as the map's move line says (kNone: none).
  enum class Phase { kNone, kFlip, kCopy } phase = Phase::kNone;
  uint32_t moving_bucket = 0, moving_from = 0;

  World() {
    auto db = Db::Open(one_dir.path(), c.options);
    REQUIRE(db.ok());
    one = std::move(*db);
    c.owner = [this](UserId u) { return map.Of(u); };
    c.posts_by_fans = true;
    c.broadcast_fans = c.options.feed.celebrity_fans;
    c.leaving = [this](uint32_t s, UserId u) { return LeavingFrom(s, u); };
    for (uint32_t s = 0; s < kShards; ++s) SetPlacementOf(s);
  }

  bool LeavingFrom(uint32_t s, UserId u) const {
    return phase != Phase::kNone && s == moving_from && u % kBuckets == moving_bucket;
  }

  void SetPlacementOf(uint32_t s) {
    // As ShardNode::PlaceOf: the old owner decides for a moving bucket until the copy, the
    // new one from the flip on (map.owner changes at the flip).
    c.db[s]->SetPlacement([this, s](UserId u) {
      if (LeavingFrom(s, u)) {
        return phase == Phase::kFlip ? UserPlace::kLeaving : UserPlace::kHandedOver;
      }
      return map.Of(u) == s ? UserPlace::kHere : UserPlace::kElsewhere;
    });
  }

  // One change, made on its user's shard and on the single node; `skip` users make none.
  void Change(const std::function<bool(UserId)>& skip = nullptr) {
    c.clock.Advance(1);
    const UserId a = 1 + rng() % kUsers;
    UserId b = 1 + rng() % kUsers;
    if (b == a) b = a % kUsers + 1;
    const uint64_t pick = rng() % 100;
    if (skip != nullptr && skip(a)) return;
    const std::string got = RandomChange(*c.db[map.Of(a)], a, b, pick, &next_post);
    const std::string want = RandomChange(*one, a, b, pick, &one_next_post);
    REQUIRE_MESSAGE(got == want, a << " on " << b);
  }

  // During a move, one change by a user staying on the new owner `to` about a moving user,
  // made when the new owner's view of the pair (blocks, requests, the moving user's private
  // mark) is one node's: its inbox is held, so a difference would change the reply. What it
  // decides is newer than the moving user's state the old owner hands over.
  void ChangeByNewOwner(uint32_t to, const std::function<bool(UserId)>& moving) {
    c.clock.Advance(1);
    std::vector<UserId> staying, movers;
    for (UserId u = 1; u <= kUsers; ++u) {
      if (moving(u))
        movers.push_back(u);
      else if (map.Of(u) == to)
        staying.push_back(u);
    }
    if (staying.empty()) return;  // the new owner had no bucket before this one
    const UserId a = staying[rng() % staying.size()], b = movers[rng() % movers.size()];
    const uint64_t pick = rng() % 100;
    const GraphStateModel here = Held(*c.db[to]), all = Held(*one);
    for (const auto& pair : {std::pair{a, b}, std::pair{b, a}}) {
      if (here.blocks.contains(pair) != all.blocks.contains(pair) ||
          here.requests.contains(pair) != all.requests.contains(pair)) {
        return;
      }
    }
    if (here.private_users.contains(b) != all.private_users.contains(b)) return;
    const std::string got = RandomChange(*c.db[to], a, b, pick, &next_post);
    const std::string want = RandomChange(*one, a, b, pick, &one_next_post);
    REQUIRE_MESSAGE(got == want, a << " on " << b << " during a move");
    ++new_owner_changes;
  }
  int new_owner_changes = 0;

  // During a move's copy phase, before the export: a user staying on the old owner `from`
  // follows a moving user with posts. The old owner no longer decides for the moving user,
  // but still holds its state, as one node does (nothing about the pair can change
  // elsewhere meanwhile): the follow is decided there, and the posts it holds are the
  // user's own, which the export is about to list.
  void FollowByOldOwner(uint32_t from, const std::function<bool(UserId)>& moving) {
    c.clock.Advance(1);
    std::vector<UserId> staying, movers;
    for (UserId u = 1; u <= kUsers; ++u) {
      if (moving(u) && !c.db[from]->RetainedPosts(u).empty())
        movers.push_back(u);
      else if (!moving(u) && map.Of(u) == from)
        staying.push_back(u);
    }
    if (staying.empty() || movers.empty()) return;
    const UserId a = staying[rng() % staying.size()], b = movers[rng() % movers.size()];
    const std::string got = RandomChange(*c.db[from], a, b, 0, &next_post);
    const std::string want = RandomChange(*one, a, b, 0, &one_next_post);
    REQUIRE_MESSAGE(got == want, a << " on " << b << " before the export");
    ++old_owner_follows;
  }
  int old_owner_follows = 0;

  void Restart(uint32_t s, bool snapshot) {
    c.Restart(s, snapshot);
    SetPlacementOf(s);
  }

  // u's timeline on its shard, page by page, against the single node's: the copies of other
  // shards' authors' posts there are whole, with back-fills wherever they were wanted.
  void CheckTimeline(UserId u, const std::string& when) {
    FeedPageRequest req;
    req.limit = 7;
    for (int page = 0; page < 10; ++page) {
      auto got = c.db[map.Of(u)]->Timeline(u, req);
      auto want = one->Timeline(u, req);
      REQUIRE(got.ok());
      REQUIRE(want.ok());
      std::string diff;
      for (const FeedEntry& e : got->entries) diff += " " + std::to_string(e.post);
      diff += "; want";
      for (const FeedEntry& e : want->entries) diff += " " + std::to_string(e.post);
      CHECK_MESSAGE(got->entries == want->entries,
                    "timeline of " << u << " page " << page << " " << when << ":" << diff);
      if (!want->next || got->entries != want->entries) break;
      req.after = want->next;
    }
  }

  void CheckShards(const std::string& when) {
    one->DrainFanout();
    for (uint32_t s = 0; s < kShards; ++s) c.db[s]->DrainFanout();
    const GraphStateModel all = Held(*one);
    for (uint32_t s = 0; s < kShards; ++s) {
      REQUIRE_MESSAGE(c.db[s]->CheckInvariants().ok(), c.db[s]->CheckInvariants().ToString());
      const GraphStateModel held = Held(*c.db[s]), want = Touching(all, map, s);
      CHECK_MESSAGE(held.edges == want.edges, "edges of shard " << s << " " << when);
      CHECK_MESSAGE(held.blocks == want.blocks, "blocks of shard " << s << " " << when);
      CHECK_MESSAGE(held.requests == want.requests, "requests of shard " << s << " " << when);
      CHECK_MESSAGE(held.private_users == want.private_users, "private of shard " << s);
    }
    for (UserId u = 1; u <= kUsers; ++u) {
      Db& home = *c.db[map.Of(u)];
      CHECK_MESSAGE(home.RetainedPosts(u) == one->RetainedPosts(u),
                    "posts of " << u << " " << when);
      CHECK_MESSAGE(home.Mutes(u).value() == one->Mutes(u).value(), "mutes of " << u);
      CheckTimeline(u, when);
      CHECK_MESSAGE(home.Hides(u).value() == one->Hides(u).value(), "hides of " << u);
      // Elsewhere: the hides from that shard's users (its timelines read them), no mutes.
      for (uint32_t s = 0; s < kShards; ++s) {
        if (s == map.Of(u)) continue;
        std::vector<UserId> want;
        const std::vector<UserId> all_hides = one->Hides(u).value();
        for (UserId f : all_hides) {
          if (map.Of(f) == s) want.push_back(f);
        }
        const std::vector<UserId> held = c.db[s]->Hides(u).value();
        CHECK_MESSAGE(held == want, "hides of " << u << " on shard " << s << " " << when);
        CHECK_MESSAGE(c.db[s]->Mutes(u).value().empty(), "mutes of " << u << " on " << s);
      }
    }
  }

  // Moves `bucket` to shard `to`, with `during` changes made in each phase (none by its
  // users, which are refused then) and handed over in random batches.
  void Move(uint32_t bucket, uint32_t to, int during) {
    const uint32_t from = map.owner[bucket];
    auto moving = [bucket](UserId u) { return u % kBuckets == bucket; };
    // prepare: the new owner's inbox waits. flip: records are routed by the new map; the
    // old owner decides for the bucket until it hands it over.
    c.Drain();
    phase = Phase::kFlip;
    moving_bucket = bucket;
    moving_from = from;
    map.owner[bucket] = to;
    // Changes go on meanwhile, each handed over everywhere but to the new owner: by users
    // neither moving nor on the new owner, and by the new owner's users about moving users
    // (ChangeByNewOwner).
    for (int i = 0; i < during; ++i) {
      Change([&](UserId u) { return moving(u) || map.Of(u) == to; });
      if (i % 2 == 0) ChangeByNewOwner(to, moving);
      c.Drain({to});
    }
    // drain: the old owner applies everything routed to it. copy: it stops deciding for the
    // bucket (its users' follows of the moving users are decided on, about users handed
    // over), sends all it logged, and exports; the new owner brings the state in.
    c.Drain({to});
    phase = Phase::kCopy;
    for (int i = 0; i < during / 2; ++i) {
      Change([&](UserId u) { return moving(u) || map.Of(u) == to; });
      if (i % 3 == 0) FollowByOldOwner(from, moving);
      c.Drain({to});
    }
    c.Drain({to});
    auto state = c.db[from]->ExportUsers(moving);
    REQUIRE_MESSAGE(state.ok(), state.status().ToString());
    REQUIRE(c.db[to]->MoveIn(from + 1, *state, moving).ok());
    c.Drain();  // the inbox released
    // The old owner keeps its copy of the moved users' state until it drops it, and changes
    // go on meanwhile, the moved users' on their new shard: first while the move line stays,
    // then after it is gone.
    for (int i = 0; i < during; ++i) {
      if (i == during / 2) phase = Phase::kNone;
      Change();
      c.Drain();
    }
    phase = Phase::kNone;
    // done: the old owner drops what only the moved users needed.
    auto dropped = c.db[from]->DropForeign(to + 1, [&](UserId u) { return map.Of(u) == from; });
    REQUIRE_MESSAGE(dropped.ok(), dropped.status().ToString());
    auto again = c.db[from]->DropForeign(to + 1, [&](UserId u) { return map.Of(u) == from; });
    CHECK(again.value() == 0);
  }
};

TEST_CASE("an export lists in slices, writes go on between them, and it lists each item once") {
  // A moving user with 40k fans and a moving private account with 20k requests: their
  // lists span several slices of 4,096 entries, resumed by their cursors.
  constexpr UserId kStar = 8, kPrivate = 16, kFans = 40'000, kAskers = 20'000;
  int slices = 0;
  Db* live = nullptr;
  UserId writer = 1;
  DbOptions o;
  o.graph.rate_limit.enabled = false;
  o.background_fanout = false;
  o.between_steps = [&] {
    ++slices;
    if (live == nullptr) return;
    // A staying user's write runs between two slices: the lock is not held.
    REQUIRE(live->Follow(1'000'001 + writer, 1'000'001 + writer + 1).ok());
    ++writer;
  };
  auto db = Db::Open("", o);
  REQUIRE(db.ok());
  REQUIRE((*db)->SetPrivate(kPrivate, true).ok());
  std::vector<Db::BatchWrite> writes;
  for (UserId u = 1; u <= kFans; ++u) {
    const UserId fan = 100 + u * 8 + 1;  // never moving
    writes.push_back({Db::BatchWrite::Kind::kFollow, fan, kStar, std::nullopt});
    if (u <= kAskers)
      writes.push_back({Db::BatchWrite::Kind::kFollow, fan, kPrivate, std::nullopt});
  }
  writes.push_back({Db::BatchWrite::Kind::kFollow, kStar, 24, std::nullopt});
  writes.push_back({Db::BatchWrite::Kind::kFollow, kStar, 3, std::nullopt});
  std::vector<Db::BatchWriteResult> results(writes.size());
  (*db)->WriteBatch(writes, results);
  for (const auto& r : results) REQUIRE(r.status.ok());
  REQUIRE((*db)->Block(5, kStar).ok());
  REQUIRE((*db)->Block(kPrivate, 7).ok());
  auto moving = [](UserId u) { return u % 8 == 0 && u < 100; };
  const GraphStateModel before = Held(**db);
  live = db->get();
  auto state = (*db)->ExportUsers(moving);
  live = nullptr;
  REQUIRE(state.ok());
  CHECK(slices >= 4);  // the fans in three slices, the requests in two
  GraphStateModel listed;
  size_t follows = 0, requests = 0, blocks = 0;
  for (const Db::MovedState& m : *state) {
    if (m.type != WalRecordType::kFollow && m.type != WalRecordType::kRequest &&
        m.type != WalRecordType::kBlock) {
      continue;
    }
    auto op = DecodeWalRecord(static_cast<uint8_t>(m.type), m.payload);
    REQUIRE_MESSAGE(op.ok(), op.status().ToString());
    if (m.type == WalRecordType::kFollow) {
      ++follows;
      listed.edges[{op->a, op->b}] = op->ts;
    } else if (m.type == WalRecordType::kRequest) {
      ++requests;
      listed.requests[{op->a, op->b}] = op->ts;
    } else if (m.type == WalRecordType::kBlock) {
      ++blocks;
      listed.blocks[{op->a, op->b}] = op->ts;
    }
  }
  auto touching = [&](const auto& from) {
    std::map<GraphStateModel::Pair, TimestampMs> out;
    for (const auto& [pair, ts] : from) {
      if (moving(pair.first) || moving(pair.second)) out[pair] = ts;
    }
    return out;
  };
  CHECK(listed.edges == touching(before.edges));
  CHECK(listed.requests == touching(before.requests));
  CHECK(listed.blocks == touching(before.blocks));
  CHECK(follows == listed.edges.size());  // each once
  CHECK(requests == listed.requests.size());
  CHECK(blocks == listed.blocks.size());
  CHECK(listed.requests.size() == kAskers);
  CHECK(listed.edges.size() == kFans + 2);
}

TEST_CASE("a bucket moved between quiet shards: every shard holds what one node would") {
  World w;
  for (int i = 0; i < 600; ++i) {
    w.Change();
    w.c.Drain();
  }
  w.CheckShards("before the move");
  w.Move(1, 2, 0);
  w.CheckShards("after the move");
  for (int i = 0; i < 300; ++i) {
    w.Change();
    w.c.Drain();
  }
  w.CheckShards("after changes on the new owner");
  for (uint32_t s = 0; s < kShards; ++s) w.Restart(s, s == 0);
  w.CheckShards("after restarts");
  w.Move(1, 0, 0);  // and on to a third shard
  w.Move(4, 0, 0);
  w.CheckShards("after two more moves");
}

TEST_CASE("buckets moved while changes go on around them") {
  World w;
  for (int i = 0; i < 400; ++i) {
    w.Change();
    w.c.Drain();
  }
  for (int round = 0; round < 6; ++round) {
    const uint32_t bucket = static_cast<uint32_t>(w.rng() % kBuckets);
    const uint32_t to = (w.map.owner[bucket] + 1 + w.rng() % (kShards - 1)) % kShards;
    w.Move(bucket, to, 60);
    w.CheckShards("after move " + std::to_string(round));
    for (int i = 0; i < 100; ++i) {
      w.Change();
      w.c.Drain();
    }
  }
  for (uint32_t s = 0; s < kShards; ++s) w.Restart(s, s == 1);
  w.CheckShards("after restarts");
  CHECK(w.new_owner_changes > 60);
  CHECK(w.old_owner_follows > 20);
}

}  // namespace
}  // namespace relgraph
