// relgraph-bench --target=group: writers through a replication group (docs/replication.md,
// "Automatic failover") while something else fails, kills or switches its primary
// (tools/bench/failover_bench.sh). Each writer follows fresh pairs through a GroupClient for
// --seconds and prints one line per change of primary it sees:
//   primary_change writer=W to=HOST:PORT first_ack_unix_us=T gap_ms=G
// (the wall-clock time of its first acknowledged write on the new primary, and the time since
// its last one on the old), then a summary line with the acknowledged writes, retries and
// writes whose outcome stayed unknown.
//
// Thread-safety: RunGroupWriters runs its own threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "net/client/client.h"

namespace relgraph::bench {

struct GroupWriterFlags {
  std::vector<std::string> nodes;  // the members' addresses
  net::ClientOptions connection;   // the token
  uint32_t writers = 4;
  std::chrono::seconds duration{60};
};

// Returns 0, or 1 when no write was acknowledged at all.
int RunGroupWriters(const GroupWriterFlags& flags, std::ostream& out);

}  // namespace relgraph::bench
