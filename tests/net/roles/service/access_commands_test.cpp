// Blocks, private accounts and follow requests over the wire (docs/access.md, docs/protocol.md
// 0x40-0x48): every command end to end through the client, with its errors, and a random run
// against the graph's reference model.
#include <doctest.h>

#include <random>

#include "tests/engine/graph/reference_model.h"
#include "tests/net/server/server_test_util.h"

namespace relgraph::net {
namespace {

using testing::TestServer;

TEST_CASE("access commands: block, private accounts and requests end to end, with errors") {
  TestServer ts;
  auto c = ts.Connect();
  REQUIRE(c->Follow(1, 2, int64_t{1000}).ok());
  REQUIRE(c->Follow(2, 1, int64_t{1001}).ok());

  // Block: both edges go, the follow back is refused, relations say who blocks.
  auto b = c->Block(1, 2);
  REQUIRE(b.ok());
  CHECK(b->created);
  CHECK(b->removed == 3);
  CHECK(!c->Block(1, 2)->created);
  auto refused = c->Follow(2, 1);
  CHECK(refused.status().code() == Code::kBlocked);
  CHECK(c->Follow(1, 2).status().code() == Code::kBlocked);
  CHECK(*c->Relation(1, 2) == RelationCode::kBlocking);
  CHECK(*c->Relation(2, 1) == RelationCode::kBlockedBy);
  auto blocks = c->Blocks(PageQuery{1, 10, 0, std::nullopt, uint64_t{2}});
  REQUIRE(blocks.ok());
  CHECK(blocks->total == 1);
  REQUIRE(blocks->entries.size() == 1);
  CHECK(blocks->entries[0].user == 2);
  CHECK(blocks->entries[0].viewer_relation == RelationCode::kNone);  // relation(2, 2)
  CHECK(c->Counts(1)->following == 0);
  CHECK(*c->Unblock(1, 2));
  CHECK(!*c->Unblock(1, 2));
  CHECK(*c->Relation(1, 2) == RelationCode::kNone);  // nothing restored

  // Private account: follows become requests; approve, reject, withdraw.
  auto p = c->SetPrivate(5, true);
  REQUIRE(p.ok());
  CHECK(p->changed);
  CHECK(*c->IsPrivate(5));
  CHECK(!*c->IsPrivate(6));
  auto asked = c->Follow(6, 5);
  REQUIRE(asked.ok());
  CHECK(asked->created);
  CHECK(asked->relation == RelationCode::kRequested);
  CHECK(!c->Follow(6, 5)->created);
  REQUIRE(c->Follow(7, 5).ok());
  REQUIRE(c->Follow(8, 5).ok());
  auto requests = c->Requests(PageQuery{5, 2, 0, std::nullopt, std::nullopt});
  REQUIRE(requests.ok());
  CHECK(requests->total == 3);
  CHECK(requests->entries.size() == 2);
  CHECK(requests->next.has_value());
  CHECK(*c->Relation(5, 6) == RelationCode::kRequestedBy);
  auto approved = c->Approve(5, 6);
  REQUIRE(approved.ok());
  CHECK(approved->relation == RelationCode::kFollowing);
  CHECK(*c->Relation(6, 5) == RelationCode::kFollowing);
  CHECK(c->Approve(5, 6).status().code() == Code::kNotFound);
  CHECK(*c->Reject(5, 7));
  CHECK(!*c->Reject(5, 7));
  CHECK(*c->Withdraw(8, 5));
  CHECK(!*c->Withdraw(8, 5));
  REQUIRE(c->Follow(8, 5).ok());
  auto open = c->SetPrivate(5, false);
  REQUIRE(open.ok());
  CHECK(open->approved == 1);
  CHECK(*c->Relation(8, 5) == RelationCode::kFollowing);
  CHECK(c->Counts(5)->fans == 2);

  // Errors keep the connection usable.
  CHECK(c->Block(3, 3).status().code() == Code::kInvalidArgument);
  CHECK(c->Block(0, 3).status().code() == Code::kInvalidUserId);
  CHECK(c->SetPrivate(0, true).status().code() == Code::kInvalidUserId);
  CHECK(c->Requests(PageQuery{5, 0, 0, std::nullopt, std::nullopt}).status().code() ==
        Code::kInvalidArgument);
  CHECK(c->Approve(0, 1).status().code() == Code::kInvalidUserId);
  CHECK(c->Ping().ok());
  CHECK(ts.db->CheckInvariants().ok());
}

TEST_CASE("access commands: a random run agrees with the reference model") {
  TestServer ts;
  auto c = ts.Connect();
  testing::ReferenceModel model(TestServer::NoRateLimit().graph);
  std::mt19937_64 rng(23);
  auto user = [&] { return 1 + rng() % 15; };
  for (int i = 0; i < 3000; ++i) {
    const uint64_t a = user(), b = user();
    const int op = static_cast<int>(rng() % 8);
    INFO("op ", op, " ", a, " ", b);
    if (op == 0) {
      const int64_t when = 1000 + i;
      auto want = model.Follow(a, b, 0, when, true);
      auto got = c->Follow(a, b, when);
      REQUIRE(got.status().code() == want.code);
      if (got.ok())
        CHECK(static_cast<int>(got->relation) == static_cast<int>(want.outcome.relation));
    } else if (op == 1) {
      REQUIRE(*c->Unfollow(a, b) == model.Unfollow(a, b));
    } else if (op == 2) {
      auto got = c->Block(a, b);
      auto want = model.Block(a, b, 0);
      REQUIRE(got.status().code() == want.code);
    } else if (op == 3) {
      REQUIRE(*c->Unblock(a, b) == model.Unblock(a, b));
    } else if (op == 4) {
      const bool on = rng() % 2 == 0;
      REQUIRE(c->SetPrivate(a, on)->approved == model.SetPrivate(a, on, 0).approved);
    } else if (op == 5) {
      REQUIRE(c->Approve(a, b).status().code() == model.Approve(a, b, 0).code);
    } else if (op == 6) {
      REQUIRE(*c->Withdraw(a, b) == model.RemoveRequest(a, b));
    } else {
      std::vector<uint64_t> others;
      for (int k = 0; k < 5; ++k) others.push_back(user());
      auto got = c->Relations(a, others);
      REQUIRE(got.ok());
      for (size_t k = 0; k < others.size(); ++k) {
        CHECK(static_cast<int>((*got)[k]) == static_cast<int>(model.Rel(a, others[k])));
      }
      auto blocks = c->Blocks(PageQuery{a, 100, 0, std::nullopt, std::nullopt});
      REQUIRE(blocks.ok());
      CHECK(blocks->total == model.CountsOf(a).blocks);
      auto requests = c->Requests(PageQuery{a, 100, 0, std::nullopt, std::nullopt});
      REQUIRE(requests.ok());
      CHECK(requests->total == model.CountsOf(a).requests);
    }
  }
  CHECK(ts.db->CheckInvariants().ok());
}

}  // namespace
}  // namespace relgraph::net
