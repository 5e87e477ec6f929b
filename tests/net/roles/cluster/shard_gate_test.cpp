// The shard's gate (ShardNode::Admit): which commands a cluster runs. A shard that never saw
// a map refuses a command it runs as `unavailable` (it cannot tell whose users are its own)
// and one a cluster does not run as `unsupported`, so the two sets can be told apart without
// NATS.
#include <doctest.h>

#include <set>

#include "engine/db.h"
#include "net/roles/cluster/shard_node.h"

namespace relgraph {
namespace {

TEST_CASE("shard gate: a cluster runs exactly the commands it ran before, by opcode") {
  using net::Opcode;
  const std::set<Opcode> runs = {
      Opcode::kFollow,     Opcode::kUnfollow,  Opcode::kRelation,   Opcode::kRelations,
      Opcode::kFollowing,  Opcode::kFans,      Opcode::kFriends,    Opcode::kCounts,
      Opcode::kKnownFollowers, Opcode::kRemoveUser, Opcode::kPublish, Opcode::kDeletePost,
      Opcode::kTimeline,   Opcode::kUserPosts, Opcode::kMute,       Opcode::kUnmute,
      Opcode::kHide,       Opcode::kUnhide,    Opcode::kMutes,      Opcode::kHides,
      Opcode::kBlock,      Opcode::kUnblock,   Opcode::kBlocks,     Opcode::kSetPrivate,
      Opcode::kIsPrivate,  Opcode::kRequests,  Opcode::kApprove,    Opcode::kReject,
      Opcode::kWithdraw};
  auto db = Db::Open("", DbOptions{});
  REQUIRE(db.ok());
  ShardNode node(db->get(), ShardNodeOptions{});  // never started: no map
  int defined = 0;
  for (int v = 0; v < 256; ++v) {
    if (net::OpcodeName(static_cast<uint8_t>(v)) == "unknown") continue;
    ++defined;
    const auto op = static_cast<Opcode>(v);
    INFO(net::OpcodeName(op));
    const Status s = node.Admit(op, 1, 0);
    CHECK(s.code() == (runs.contains(op) ? Code::kUnavailable : Code::kUnsupported));
  }
  CHECK(defined == 50);
}

}  // namespace
}  // namespace relgraph
