// ClusterGate: what a shard of a cluster (docs/cluster.md) lets CommandService answer. A
// shard answers only about users whose bucket it owns: for any other it replies `moved`,
// naming the owner, so that a client with an old shard map corrects itself. The shard's
// implementation is net/roles/cluster/shard_node.h; a node outside a cluster has none.
//
// Thread-safety: Admit and AddInfo are called from every io thread at once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "net/protocol/messages.h"
#include "net/protocol/protocol.h"
#include "storage/status.h"

namespace relgraph {

class ClusterGate {
 public:
  virtual ~ClusterGate() = default;
  // OK when this shard may run `opcode` about `user` (reading `viewer`'s state too; 0: none).
  // Else kMoved naming the owner of the first user it does not own, or kUnsupported for a
  // command a cluster does not run.
  virtual Status Admit(net::Opcode opcode, uint64_t user, uint64_t viewer) const = 0;
  // The shard's INFO fields (map version, outbox and inbox positions, lag).
  virtual void AddInfo(std::vector<net::InfoField>* fields) const = 0;
  // The shard map this shard holds, in its versioned text form (net/cluster/placement.h,
  // EncodeVersionedShardMap); kUnavailable before it has one.
  virtual Result<std::string> MapText() const = 0;
  // The server is stopping: stop sending and applying changes, before the Db closes.
  virtual void Stop() = 0;
};

}  // namespace relgraph
