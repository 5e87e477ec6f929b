// ShardNode's gate: which commands this shard answers, about which users (ClusterGate::Admit),
// and where a user is for it under a map (PlaceOf, the Db's placement).
#include "net/roles/cluster/shard_node.h"

#include <memory>
#include <string>

#include "net/protocol/command_table.h"

namespace relgraph {
namespace {

// Whether a cluster runs `op`: its row in the command table says so. The rest are about no
// user (INFO, SNAPSHOT, ...; answered by the shard asked, never routed here) or not
// cluster-aware yet: those are refused rather than answered from this shard's part of the data.
bool ClusterServes(net::Opcode op) {
  const net::CommandInfo* row = net::FindCommand(static_cast<uint8_t>(op));
  return row != nullptr && row->cluster;
}

}  // namespace

UserPlace ShardNode::PlaceOf(const net::ShardMap& m, uint64_t user) const {
  if (m.move && m.move->from == options_.shard_id && m.Moving(user)) {
    return m.move->phase == net::MovePhase::kCopy ? UserPlace::kHandedOver : UserPlace::kLeaving;
  }
  return m.OwnerOf(user) == options_.shard_id ? UserPlace::kHere : UserPlace::kElsewhere;
}

Status ShardNode::Admit(net::Opcode opcode, uint64_t user, uint64_t viewer) const {
  if (!ClusterServes(opcode)) {
    return Status(Code::kUnsupported, std::string(net::OpcodeName(opcode)) +
                                          " is not run by a cluster yet (docs/cluster.md lists "
                                          "the commands it runs)");
  }
  const std::shared_ptr<const net::ShardMap> m = map();
  if (m == nullptr) {
    return Status(Code::kUnavailable,
                  "shard " + std::to_string(options_.shard_id) +
                      " has not joined the cluster and has never seen its shard map, so it "
                      "cannot tell which users are its own; retry once NATS answers");
  }
  for (uint64_t u : {user, viewer}) {
    if (u == 0) continue;
    const uint32_t bucket = net::BucketOf(u, m->buckets);
    const uint32_t owner = m->owner[bucket];
    if (owner == options_.shard_id) {
      if (m->move && m->move->to == owner && m->move->Covers(bucket) &&
          imported_move_.load() != m->move->id) {
        return Status(Code::kMoving,
                      "user " + std::to_string(u) + " is in bucket " + std::to_string(bucket) +
                          ", which shard " + std::to_string(owner) + " is taking over from shard " +
                          std::to_string(m->move->from) + "; retry shortly",
                      m->move->from);
      }
      continue;
    }
    const net::ShardInfo* info = m->Find(owner);
    return Status(Code::kMoved,
                  "user " + std::to_string(u) + " is in bucket " + std::to_string(bucket) +
                      ", served by shard " + std::to_string(owner) + " at " +
                      (info != nullptr ? info->address : std::string("?")) +
                      " (shard map version " + std::to_string(m->version) + ")",
                  owner);
  }
  return Status::OK();
}

}  // namespace relgraph
