// The permissions a client may hold, and which one each command needs (docs/security.md).
//
// Why this design: the command table already says what every command is; the permission it
// needs follows from its class (net/protocol/command_class.h), the one place every opcode is
// placed, which also says whether a replica answers it. A request left out of ClassOf fails to
// compile (command_table.h), so no command can slip in unguarded; a class without its row in
// kNeededByClass below fails to compile here.
//
// Thread-safety: constants and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

#include "net/protocol/command_class.h"
#include "net/protocol/command_table.h"
#include "storage/status.h"

namespace relgraph::net {

// A set of permissions, as bits.
using Permissions = uint8_t;
inline constexpr Permissions kPermRead = 1;          // queries and pages
inline constexpr Permissions kPermWrite = 2;         // graph, feed and access changes
inline constexpr Permissions kPermStream = 4;        // subscribe, cursors, snapshot transfer
inline constexpr Permissions kPermAdmin = 8;         // snapshot, promote, cursor deletion, ...
inline constexpr Permissions kPermReplication = 16;  // a replica's link to its primary
inline constexpr Permissions kPermAll = 31;
inline constexpr Permissions kPermNone = 0;

namespace permissions_internal {
// The permission each class of command needs (net/protocol/command_class.h), a row per class in
// CommandClass's order. A client holding any one of a row's bits may run the command;
// kPermNone: every authenticated client may; kPermAll: nobody sends it.
inline constexpr std::pair<CommandClass, Permissions> kNeededByClass[] = {
    {CommandClass::kServerOnly, kPermAll},
    {CommandClass::kOpen, kPermNone},
    {CommandClass::kProbe, kPermNone},
    {CommandClass::kRead, kPermRead},
    {CommandClass::kReadReplication, kPermRead | kPermReplication},
    {CommandClass::kWrite, kPermWrite},
    {CommandClass::kStream, kPermStream},
    {CommandClass::kStreamRead, kPermStream},
    {CommandClass::kStreamReplication, kPermStream | kPermReplication},
    {CommandClass::kReplicaLink, kPermReplication},
    {CommandClass::kAdmin, kPermAdmin},
};
// True when row i is class i, and the class of every opcode value has its row.
constexpr bool EveryClassHasItsRow() {
  for (size_t i = 0; i < std::size(kNeededByClass); ++i) {
    if (static_cast<size_t>(kNeededByClass[i].first) != i) return false;
  }
  for (unsigned v = 0; v < 256; ++v) {
    const auto row = static_cast<size_t>(ClassOf(static_cast<Opcode>(v)));
    if (row >= std::size(kNeededByClass)) return false;
  }
  return true;
}
}  // namespace permissions_internal
static_assert(permissions_internal::EveryClassHasItsRow(),
              "a command class has no permission: give it its row in kNeededByClass, in order");

// What `opcode` needs, by its class (net/protocol/command_class.h): a client holding any one
// of these bits may run it. kPermNone: every authenticated client may (HELLO, PING). A push
// opcode or one the protocol does not define needs kPermAll (nobody sends them).
constexpr Permissions RequiredPermissions(Opcode op) {
  return permissions_internal::kNeededByClass[static_cast<size_t>(ClassOf(op))].second;
}

// "read,write", "all" or "none", in the bit order above.
std::string PermissionsText(Permissions p);
// The one permission named (read, write, stream, admin, replication) or "all"; a list
// "read,write". kInvalidArgument naming the unknown word.
Result<Permissions> ParsePermissions(std::string_view text);

// The refusal of `op` for `client` holding `held`: kPermissionDenied naming the command, the
// client and what it lacks.
Status PermissionDenied(Opcode op, std::string_view client, Permissions held);

}  // namespace relgraph::net
