// The command table (net/protocol/command_table.h): its rows agree with the opcode list, and
// routing is what each row declares, never a field's name.
#include "net/protocol/command_table.h"

#include <doctest.h>

#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>

namespace relgraph::net {
namespace {

TEST_CASE("command table: one row per opcode the protocol defines, named as OpcodeName") {
  std::set<uint8_t> seen;
  for (const CommandInfo& c : kCommands) {
    INFO(c.name);
    CHECK(seen.insert(static_cast<uint8_t>(c.opcode)).second);
    CHECK(c.name == OpcodeName(c.opcode));
    CHECK(FindCommand(static_cast<uint8_t>(c.opcode)) == &c);
  }
  for (int v = 0; v < 256; ++v) {
    const bool defined = OpcodeName(static_cast<uint8_t>(v)) != "unknown";
    CHECK((FindCommand(static_cast<uint8_t>(v)) != nullptr) == defined);
  }
  // The server's own frames are pushes; nothing else is.
  std::set<std::string_view> pushes;
  for (const CommandInfo& c : kCommands) {
    if (c.direction == Direction::kPush) pushes.insert(c.name);
  }
  CHECK(pushes == std::set<std::string_view>{"notice", "events", "snapshot_data", "records"});
}

// Sets every user-id-shaped field of `m` (u64 or opt<u64>, at the top level) to 1000 + its
// position, so that a routing names the field it read.
template <typename Msg>
void FillIds(Msg* m) {
  uint64_t next = 1000;
  std::apply(
      [&](auto&... f) {
        [[maybe_unused]] auto set = [&](auto& field) {
          using F = std::remove_cvref_t<decltype(field)>;
          if constexpr (std::is_same_v<F, uint64_t>) field = next;
          if constexpr (std::is_same_v<F, std::optional<uint64_t>>) field = next;
          ++next;
        };
        (set(f), ...);
      },
      m->WireTie());
}

TEST_CASE("command table: a request routes by the fields its row declares, and by no other") {
  int routed = 0, unrouted = 0;
  ForEachCommand([&]<typename Row>() {
    if constexpr (Row::kDirection == Direction::kRequest) {
      typename Row::Body request;
      FillIds(&request);
      const Routing r = RoutingOf(request);
      INFO(OpcodeName(Row::kOpcode));
      if constexpr (Row::Routes::kRouted) {
        ++routed;
        CHECK(r.user >= 1000);
        CHECK((r.viewer != 0) == Row::Routes::kReadsViewer);
        CHECK(r.user != r.viewer);
      } else {
        ++unrouted;  // INFO, SUBSCRIBE, ...: ids in its fields or not, it is about no user
        CHECK(r.user == 0);
        CHECK(r.viewer == 0);
      }
    }
  });
  CHECK(routed == 29);
  CHECK(unrouted == 17);
}

TEST_CASE("command table: what a cluster runs is routed, and every family is named") {
  for (const CommandInfo& c : kCommands) {
    INFO(c.name);
    if (c.cluster) CHECK(c.routed);
    CHECK(!FamilyName(c.family).empty());
  }
  CHECK(CommandOf(Opcode::kFollow).family == Family::kGraph);
  CHECK(CommandOf(Opcode::kMute).family == Family::kFeed);
  CHECK(CommandOf(Opcode::kBlock).family == Family::kAccess);
  CHECK(CommandOf(Opcode::kAck).family == Family::kStream);
  CHECK(CommandOf(Opcode::kPromote).family == Family::kReplication);
  CHECK(FamilyName(Family::kReplication) == "replication");
}

// The requests that only read when the permission and read-only lists were merged into one
// (command_class.h), by OpcodeName; every other opcode value does not.
constexpr std::string_view kReadOnlyBefore =
    "ping info relation relations following fans friends counts known_followers timeline "
    "user_posts mutes hides blocks is_private requests cursors replication position shard_map";

TEST_CASE("command table: every opcode value 0..255 reads only as it did before the merge") {
  std::set<std::string> reads;
  std::istringstream words{std::string(kReadOnlyBefore)};
  for (std::string w; words >> w;) reads.insert(w);
  CHECK(reads.size() == 20);
  for (int v = 0; v < 256; ++v) {
    const auto op = static_cast<Opcode>(v);
    const bool want = reads.count(std::string(OpcodeName(op))) != 0;
    CHECK_MESSAGE(ReadsOnly(op) == want, "opcode ", v, " ", OpcodeName(op));
  }
}

}  // namespace
}  // namespace relgraph::net
