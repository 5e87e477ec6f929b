// relgraph as a comparison design: each operation is one command of docs/protocol.md, the
// whole batch written at once and read back in order (net::Client's Queue and Flush).
//
// Thread-safety: one instance per thread.
#pragma once

#include <memory>

#include "net/client/client.h"
#include "tools/bench/designs/design.h"

namespace relgraph::bench {

Result<std::unique_ptr<Design>> ConnectRelgraphDesign(const net::ClientOptions& options);

}  // namespace relgraph::bench
