// The command service's rows against the command table's client-side lists: a request a
// client may send to a replica (ReadsOnly) is served there as a read, and no request the
// service runs as a write is on that list (a GroupClient would send it to a replica).
#include "net/roles/service/command_service.h"

#include <doctest.h>

#include "net/protocol/command_table.h"

namespace relgraph {
namespace {

TEST_CASE("command service: ReadsOnly names exactly requests the service serves as reads") {
  CommandService service(nullptr, nullptr);  // Find reads the static rows only
  int reads = 0;
  for (const net::CommandInfo& c : net::kCommands) {
    if (c.direction != net::Direction::kRequest) continue;
    const net::CommandSpec* spec = service.Find(static_cast<uint8_t>(c.opcode));
    if (spec == nullptr) continue;  // HELLO: the server's own
    INFO(c.name);
    if (net::ReadsOnly(c.opcode)) {
      CHECK((spec->flags & (net::kCommandWrites | net::kCommandSubscribes)) == 0);
      ++reads;
    }
    if ((spec->flags & net::kCommandWrites) != 0) CHECK_FALSE(net::ReadsOnly(c.opcode));
    // A write may be sent again after an unknown outcome (docs/protocol.md, "Retrying").
    if ((spec->flags & net::kCommandWrites) != 0) CHECK(net::RetrySafe(c.opcode));
  }
  CHECK(reads == 19);  // PING and SLOWLOG are the server's own too
}

}  // namespace
}  // namespace relgraph
