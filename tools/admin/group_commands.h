// relgraph-admin group: a replication group with automatic failover (docs/replication.md,
// "Automatic failover"), read from and asked through its NATS JetStream key-value store.
//   group status --group=NAME [--nats=URL] [--json]       who leads, epochs, each member's
//                                                         LSN and lag, the lease's age
//   group switchover --group=NAME [--to=HOST:PORT] [--nats=URL] [--timeout-ms=10000]
//                                                         hand the lease to a caught-up member
// With `help`, prints the usage and returns 0. Output to `out`, errors to `err`; returns the
// exit code (0, 1 failure, 2 usage).
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace relgraph::admin {

int GroupCommand(const std::vector<std::string>& positional,
                 const std::map<std::string, std::string>& flags, bool help, std::ostream& out,
                 std::ostream& err);

}  // namespace relgraph::admin
