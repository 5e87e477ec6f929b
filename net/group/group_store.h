// GroupStore: a replication group's records (group_records.h) in a NATS JetStream key-value
// bucket, the group's consensus store (docs/replication.md, "Automatic failover").
//
// Why JetStream: a key-value bucket replicated by Raft over a NATS cluster gives each key a
// revision that only goes up and an update that succeeds only at an expected revision
// (compare-and-set); that is all a lease needs, and relgraph already runs on NATS. Nothing
// here keeps time: the lease's age is measured by each node on its own clock, from when it saw
// the key's revision change (group_agent.h), so nodes need no synchronized clocks.
//
// Every call gives up after `op_timeout` (kUnavailable naming what failed); the connection
// reconnects by itself.
//
// Thread-safety: thread-safe (the NATS C client is).
#pragma once

#include <nats/nats.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/group/group_records.h"
#include "storage/status.h"

namespace relgraph::net {

struct GroupStoreOptions {
  // NATS servers: "nats://host:port", several separated by commas (a NATS cluster).
  std::string nats_urls;
  std::string bucket = "relgraph_groups";  // one bucket serves every group
  int replicas = 1;  // the bucket's replicas when this node creates it (3 on a NATS cluster)
  std::chrono::milliseconds op_timeout{500};
};

template <typename T>
struct Versioned {
  T value;
  uint64_t revision = 0;  // the key's revision in the bucket
};

class GroupStore {
 public:
  // Connects and binds the bucket, creating it when missing. kUnavailable when NATS does not
  // answer.
  static Result<std::unique_ptr<GroupStore>> Connect(const GroupStoreOptions& options);
  ~GroupStore();
  GroupStore(const GroupStore&) = delete;
  GroupStore& operator=(const GroupStore&) = delete;

  // kNotFound when the group has no lease; kCorruption when it does not parse.
  Result<Versioned<GroupLease>> ReadLease(const std::string& group);
  // Stores a first lease; its revision. kAlreadyExists when one exists.
  Result<uint64_t> CreateLease(const std::string& group, const GroupLease& lease);
  // Replaces the lease if its revision is still `expected`; the new revision. kAlreadyExists
  // when it moved on (another node renewed or took it).
  Result<uint64_t> UpdateLease(const std::string& group, const GroupLease& lease,
                               uint64_t expected);

  Status PutMember(const std::string& group, const GroupMember& member);
  // Every member's latest report (reports that do not parse are skipped).
  Result<std::vector<Versioned<GroupMember>>> Members(const std::string& group);
  Status DeleteMember(const std::string& group, const std::string& address);

  // Waits up to `timeout` for the group's lease key to change, pushed by NATS (a watch, so a
  // member learns of a new holder at once instead of at its next poll). True when a change
  // came (the first call also sees the current value) or the watch failed (it is made again
  // next call); false on timeout. For one thread at a time (the group's agent).
  bool WaitLeaseChange(const std::string& group, std::chrono::milliseconds timeout);

  Result<std::optional<GroupSwitchover>> ReadSwitchover(const std::string& group);
  Status PutSwitchover(const std::string& group, const GroupSwitchover& request);
  Status DeleteSwitchover(const std::string& group);

 private:
  GroupStore() = default;
  Result<std::optional<Versioned<std::string>>> Get(const std::string& key);

  GroupStoreOptions options_;
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
  kvStore* kv_ = nullptr;
  kvWatcher* lease_watch_ = nullptr;  // WaitLeaseChange's, of watched_group_'s lease
  std::string watched_group_;
};

}  // namespace relgraph::net
