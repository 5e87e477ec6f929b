// Randomized differential test: random follow / follow_at / import / unfollow / remove_user,
// block / unblock / set_private / approve / reject / withdraw operations, with an injected clock
// and rate limiter, applied to the Graph and to the ReferenceModel; after every batch every
// query type is compared: counts, relations (single and batch), full cursor walks and offset
// pages of all five lists (following, fans, friends, blocks, requests) with a random viewer,
// private marks and known followers. Graph::CheckInvariants then proves, among the rest, that
// no edge and no request joins a blocked pair.
//
// Sizes: RELGRAPH_DIFF_OPS (default 1,000,000) operations spread over the seeds.
#include <doctest.h>

#include <cstdlib>
#include <random>
#include <set>

#include "engine/graph/clock.h"
#include "engine/graph/graph.h"
#include "tests/engine/graph/reference_model.h"

namespace relgraph {
namespace {

using testing::ReferenceModel;
using List = ReferenceModel::List;

uint64_t TotalOps() {
  const char* env = std::getenv("RELGRAPH_DIFF_OPS");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : 1'000'000;
}

struct Harness {
  explicit Harness(uint64_t seed) : rng(seed) {
    // Each seed picks a configuration, so that caps, rate limits and chunked fan lists are all hit.
    const uint32_t caps[] = {3, 8, 1000};
    const uint32_t chunks[] = {4, 5, 8, 256};
    options.max_following = caps[rng() % 3];
    options.fan_chunk_entries = chunks[rng() % 4];
    options.rate_limit.enabled = rng() % 2 == 0;
    options.rate_limit.capacity = 1 + rng() % 6;
    options.rate_limit.refill_per_second = (rng() % 2 == 0) ? 2.0 : 0.5;
    const uint32_t block_caps[] = {2, 5, 100'000};
    options.max_blocks = block_caps[rng() % 3];
    options.hide_blocked_by = rng() % 4 == 0;
    options.time_resolution_ms = rng() % 3 == 0 ? 1000 : 1;  // whole seconds: rounded times
    options.clock = &clock;
    graph = std::make_unique<Graph>(options);
    model = std::make_unique<ReferenceModel>(options);
    // Ids are large random values, so id order differs from interning order.
    const size_t users = 12 + rng() % 40;
    std::set<UserId> ids;
    while (ids.size() < users) ids.insert(1 + rng() % 1'000'000'000'000ULL);
    pool.assign(ids.begin(), ids.end());
    std::shuffle(pool.begin(), pool.end(), rng);
  }

  UserId AnyUser() { return pool[rng() % pool.size()]; }
  // Followees are skewed: the first few users collect most fans (long, chunked fan lists).
  UserId Followee() { return rng() % 3 == 0 ? pool[rng() % 3] : AnyUser(); }

  void Step() {
    clock.Advance(static_cast<TimestampMs>(rng() % 400));
    if (rng() % 200 == 0) clock.Advance(-static_cast<TimestampMs>(rng() % 5000));  // skew
    const uint32_t dice = rng() % 1000;
    if (dice < 480) {
      Follow(AnyUser(), Followee(), std::nullopt);
    } else if (dice < 560) {
      // Few distinct times, so ties on ts are common and ordering falls back to user ids.
      const TimestampMs ts = rng() % 50 == 0 ? -5
                             : 1'600'000'000'000 + (rng() % 8) * 1000 +
                                   (options.time_resolution_ms > 1 ? rng() % 1000 : 0);
      Follow(AnyUser(), Followee(), ts);
    } else if (dice < 570) {
      Follow(rng() % 2 ? 0 : AnyUser(), rng() % 2 ? 0 : AnyUser(), std::nullopt);  // bad ids
    } else if (dice < 575) {
      const UserId u = AnyUser();
      Follow(u, u, std::nullopt);
    } else if (dice < 605) {
      Import();
    } else if (dice < 905) {
      const UserId a = AnyUser(), b = Followee();
      auto r = graph->Unfollow(a, b);
      REQUIRE(r.ok());
      REQUIRE(*r == model->Unfollow(a, b));
    } else if (dice < 995) {
      AccessOp(dice - 905);
    } else {
      const UserId a = AnyUser();
      auto r = graph->RemoveUser(a);
      REQUIRE(r.ok());
      REQUIRE(*r == model->RemoveUser(a));
    }
  }

  void Follow(UserId a, UserId b, std::optional<TimestampMs> ts) {
    const auto expected = model->Follow(a, b, clock.NowMs(), ts);
    auto r = ts ? graph->FollowAt(a, b, *ts) : graph->Follow(a, b);
    INFO("follow ", a, " -> ", b, ": ", r.status().ToString());
    REQUIRE(r.status().code() == expected.code);
    if (r.ok()) {
      CHECK(r->created == expected.outcome.created);
      CHECK(r->relation == expected.outcome.relation);
      CHECK(r->followed_at == expected.outcome.followed_at);
    } else if (expected.code == Code::kRateLimited) {
      CHECK(r.status().retry_after_ms() == expected.retry_after_ms);
    }
  }

  // Blocks, private accounts and requests: `dice` in [0, 90).
  void AccessOp(uint32_t dice) {
    const UserId a = AnyUser(), b = rng() % 2 ? Followee() : AnyUser();
    if (dice < 20) {
      const UserId blocked = rng() % 100 == 0 ? 0 : (rng() % 100 == 0 ? a : b);
      const auto want = model->Block(a, blocked, clock.NowMs());
      auto r = graph->Block(a, blocked);
      INFO("block ", a, " -> ", b, ": ", r.status().ToString());
      REQUIRE(r.status().code() == want.code);
      if (r.ok()) {
        CHECK(r->created == want.outcome.created);
        CHECK(r->ts == want.outcome.ts);
        CHECK(r->unfollowed == want.outcome.unfollowed);
        CHECK(r->lost_follower == want.outcome.lost_follower);
        CHECK(r->requests_removed == want.outcome.requests_removed);
      }
    } else if (dice < 32) {
      auto r = graph->Unblock(a, b);
      REQUIRE(r.ok());
      REQUIRE(*r == model->Unblock(a, b));
    } else if (dice < 50) {
      // Mostly the skewed followees go private, so their many followers make requests.
      const UserId u = rng() % 2 ? pool[rng() % 3] : a;
      const bool on = rng() % 3 != 0;
      const SetPrivateOutcome want = model->SetPrivate(u, on, clock.NowMs());
      auto r = graph->SetPrivate(u, on);
      REQUIRE(r.ok());
      CHECK(r->changed == want.changed);
      CHECK(r->approved == want.approved);
      if (want.changed) CHECK(r->ts == want.ts);
      REQUIRE(*graph->IsPrivate(u) == model->IsPrivate(u));
    } else if (dice < 70) {
      // Approve someone who asked (when anyone did), or anyone.
      const UserId t = rng() % 2 ? pool[rng() % 3] : a;
      UserId requester = AnyUser();
      auto asked = graph->Requests(t, PageRequest{.limit = 5});
      REQUIRE(asked.ok());
      if (!asked->entries.empty() && rng() % 4 != 0) {
        requester = asked->entries[rng() % asked->entries.size()].user;
      }
      const auto want = model->Approve(t, requester, clock.NowMs());
      auto r = graph->Approve(t, requester);
      INFO("approve ", requester, " -> ", t, ": ", r.status().ToString());
      REQUIRE(r.status().code() == want.code);
      if (r.ok()) {
        CHECK(r->created);
        CHECK(r->relation == want.outcome.relation);
        CHECK(r->followed_at == want.outcome.followed_at);
      }
    } else if (dice < 80) {
      const UserId t = rng() % 2 ? pool[rng() % 3] : b;
      auto r = graph->Reject(t, a);
      REQUIRE(r.ok());
      REQUIRE(*r == model->RemoveRequest(a, t));
    } else {
      const UserId t = rng() % 2 ? pool[rng() % 3] : b;
      auto r = graph->Withdraw(a, t);
      REQUIRE(r.ok());
      REQUIRE(*r == model->RemoveRequest(a, t));
    }
  }

  // A batch through Graph::Import: self-loops, duplicates, over-cap edges and (rarely) a bad
  // edge that stops the batch where it stands.
  void Import() {
    std::vector<ImportEdge> batch(1 + rng() % 40);
    for (ImportEdge& e : batch) {
      e = {AnyUser(), rng() % 10 == 0 ? 0 : Followee(),
           1'600'000'000'000 + static_cast<TimestampMs>(rng() % 8) * 1000 +
               (options.time_resolution_ms > 1 ? static_cast<TimestampMs>(rng() % 1000) : 0)};
      if (rng() % 10 == 0) e.followee = e.follower;
      if (rng() % 200 == 0) e.followee = 0;
    }
    ImportStats want;
    size_t failed_at = batch.size();
    for (size_t i = 0; i < batch.size(); ++i) {
      const ImportEdge& e = batch[i];
      if (e.follower == e.followee && e.follower != 0) {
        ++want.self_loops;
        continue;
      }
      const auto r = model->Follow(e.follower, e.followee, clock.NowMs(), e.ts, false);
      if (r.code == Code::kOk) {
        (r.outcome.created ? want.added : want.duplicates)++;
      } else if (r.code == Code::kFollowLimit) {
        ++want.over_cap;
      } else if (r.code == Code::kBlocked) {
        ++want.blocked;
      } else {
        failed_at = i;
        break;
      }
    }
    auto got = graph->Import(batch);
    if (failed_at < batch.size()) {
      REQUIRE(got.status().code() == Code::kInvalidUserId);
      REQUIRE(got.status().detail() == static_cast<int64_t>(failed_at));
      return;
    }
    REQUIRE(got.ok());
    CHECK(got->added == want.added);
    CHECK(got->duplicates == want.duplicates);
    CHECK(got->self_loops == want.self_loops);
    CHECK(got->over_cap == want.over_cap);
    CHECK(got->blocked == want.blocked);
  }

  Result<Page> Query(List kind, UserId a, const PageRequest& req) {
    switch (kind) {
      case List::kFollowing:
        return graph->Following(a, req);
      case List::kFans:
        return graph->Fans(a, req);
      case List::kFriends:
        return graph->Friends(a, req);
      case List::kBlocks:
        return graph->Blocks(a, req);
      case List::kRequests:
        return graph->Requests(a, req);
    }
    return Status::InvalidArgument("unreachable");
  }

  void CheckList(List kind, UserId a) {
    const std::optional<UserId> viewer =
        rng() % 3 == 0 ? std::nullopt : std::optional<UserId>(AnyUser());
    const std::vector<ListEntry> want = model->FullList(kind, a, viewer);
    INFO("list ", static_cast<int>(kind), " of ", a, " viewer ", viewer.value_or(0));

    // Full cursor walk.
    PageRequest req;
    req.viewer = viewer;
    req.limit = 1 + rng() % 6;
    std::vector<ListEntry> got;
    for (int pages = 0;; ++pages) {
      REQUIRE(pages <= 1000);
      auto page = Query(kind, a, req);
      REQUIRE(page.ok());
      REQUIRE(page->entries.size() <= req.limit);
      got.insert(got.end(), page->entries.begin(), page->entries.end());
      if (!page->next) break;
      REQUIRE(page->entries.size() == req.limit);
      CHECK(page->next->ts == page->entries.back().ts);
      CHECK(page->next->user == page->entries.back().user);
      req.after = page->next;
    }
    REQUIRE(got == want);

    // An offset page.
    PageRequest off;
    off.viewer = viewer;
    off.limit = 1 + rng() % 5;
    off.offset = static_cast<uint32_t>(rng() % (want.size() + 2));
    auto page = Query(kind, a, off);
    REQUIRE(page.ok());
    const size_t begin = std::min<size_t>(off.offset, want.size());
    const size_t end = std::min<size_t>(begin + off.limit, want.size());
    REQUIRE(page->entries == std::vector<ListEntry>(want.begin() + begin, want.begin() + end));
    CHECK(page->next.has_value() == (end < want.size() && end > begin));

    // A cursor page from an arbitrary key (not necessarily an entry's).
    PageRequest cur;
    cur.limit = 1 + rng() % 5;
    cur.after = Cursor{1'600'000'000'000 + static_cast<TimestampMs>(rng() % 9000),
                       rng() % 2 ? AnyUser() : rng()};
    if (!want.empty() && rng() % 2) cur.after = Cursor{want[rng() % want.size()].ts, AnyUser()};
    std::vector<ListEntry> tail;
    for (const ListEntry& e : want) {
      if (std::tie(e.ts, e.user) < std::tie(cur.after->ts, cur.after->user)) {
        tail.push_back({e.user, e.ts, Relation::kNone, e.mutual});
      }
    }
    tail.resize(std::min<size_t>(tail.size(), cur.limit));
    page = Query(kind, a, cur);
    REQUIRE(page.ok());
    REQUIRE(page->entries == tail);
  }

  void CheckAll() {
    auto counts_check = [&](UserId u) {
      auto c = graph->GetCounts(u);
      REQUIRE(c.ok());
      REQUIRE(*c == model->CountsOf(u));
    };
    for (UserId u : pool) {
      counts_check(u);
      CheckList(List::kFollowing, u);
      CheckList(List::kFans, u);
      CheckList(List::kFriends, u);
      CheckList(List::kBlocks, u);
      CheckList(List::kRequests, u);
      REQUIRE(*graph->IsPrivate(u) == model->IsPrivate(u));
      const UserId other = AnyUser();
      auto rel = graph->GetRelation(u, other);
      REQUIRE(rel.ok());
      REQUIRE(*rel == model->Rel(u, other));
      auto known = graph->GetKnownFollowers(u, other, static_cast<uint32_t>(rng() % 6));
      REQUIRE(known.ok());
      std::vector<UserId> want = model->KnownFollowers(u, other);
      CHECK(known->total == want.size());
      want.resize(std::min<size_t>(want.size(), known->users.size()));
      REQUIRE(known->users == want);
    }
    std::vector<UserId> batch(1 + rng() % 20);
    for (UserId& b : batch) b = AnyUser();
    const UserId a = AnyUser();
    auto rels = graph->GetRelations(a, batch);
    REQUIRE(rels.ok());
    for (size_t i = 0; i < batch.size(); ++i) REQUIRE((*rels)[i] == model->Rel(a, batch[i]));
    REQUIRE(graph->edge_count() == model->EdgeCount());
    const Status invariants = graph->CheckInvariants();
    REQUIRE_MESSAGE(invariants.ok(), invariants.ToString());
  }

  std::mt19937_64 rng;
  ManualClock clock;
  GraphOptions options;
  std::unique_ptr<Graph> graph;
  std::unique_ptr<ReferenceModel> model;
  std::vector<UserId> pool;
};

TEST_CASE("graph: random operations agree with the reference model on every query") {
  const uint64_t total = TotalOps();
  const uint64_t seeds = 48;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    CAPTURE(seed);
    Harness h(seed);
    const uint64_t ops = total / seeds;
    for (uint64_t i = 1; i <= ops; ++i) {
      h.Step();
      if (i % 500 == 0 || i == ops) h.CheckAll();
    }
  }
}

TEST_CASE("graph: a cursor walk returns every entry present throughout it exactly once") {
  for (uint64_t seed = 100; seed < 140; ++seed) {
    CAPTURE(seed);
    Harness h(seed);
    for (int i = 0; i < 3000; ++i) h.Step();
    for (List kind : {List::kFollowing, List::kFans, List::kFriends}) {
      const UserId a = h.pool[h.rng() % 3];
      const auto start = h.model->FullList(kind, a, std::nullopt);
      std::set<std::pair<TimestampMs, UserId>> present;
      for (const ListEntry& e : start) present.insert({e.ts, e.user});
      std::set<std::pair<TimestampMs, UserId>> returned;
      PageRequest req;
      req.limit = 1 + h.rng() % 4;
      for (;;) {
        auto page = h.Query(kind, a, req);
        REQUIRE(page.ok());
        for (const ListEntry& e : page->entries) {
          REQUIRE(returned.insert({e.ts, e.user}).second);  // never twice
        }
        if (!page->next) break;
        req.after = page->next;
        for (int k = 0; k < 5; ++k) h.Step();  // the list changes between pages
        // Keep only entries still present: those must all come back.
        const auto now = h.model->FullList(kind, a, std::nullopt);
        std::set<std::pair<TimestampMs, UserId>> still;
        for (const ListEntry& e : now) {
          if (present.count({e.ts, e.user})) still.insert({e.ts, e.user});
        }
        present = std::move(still);
      }
      for (const auto& p : present) CHECK(returned.count(p) == 1);
    }
  }
}

}  // namespace
}  // namespace relgraph
