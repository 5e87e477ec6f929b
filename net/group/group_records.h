// A replication group's records in the consensus store (docs/replication.md, "Automatic
// failover"): the lease that names the primary, each member's report, and an operator's
// switchover request. Each is stored as the value of one key of a NATS JetStream key-value
// bucket (group_store.h); this file is their text form, readable with any NATS tool:
// one `key=value` per line, '\n' separated, keys in any order, unknown keys ignored (a newer
// node may add some), a missing key takes its default.
//
//   lease:   holder=HOST:PORT  epoch=N  epoch_id=N  sync_replicas=N  members=A,B,...
//            renewals=N  renewed_ms=N  handover=0|1  released=0|1
//   member:  address=HOST:PORT  role=primary|replica  epoch=N  epoch_id=N  applied_lsn=N
//            durable_lsn=N  state=TEXT  link_alive=0|1  lapsed_revision=N  reported_ms=N
//   switchover: to=HOST:PORT (empty: any caught-up member)  requested_ms=N
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/status.h"

namespace relgraph::net {

// The lease: who is the primary, and what an election must respect. Its key's revision
// (the store's, not in the text) is what a renewal or a takeover compares and sets.
struct GroupLease {
  std::string holder;          // the primary's address, as its members reach it
  uint64_t epoch = 0;          // the holder's epoch (0 while a takeover is starting it)
  uint64_t epoch_id = 0;       //
  uint32_t sync_replicas = 0;  // the group's setting: replies wait for this many members
  // The replicas the holder counts toward sync_replicas, and the only ones that may take the
  // lease when it lapses. With sync_replicas = N, every acknowledged write is durable on N of
  // them, so among any members.size() - N + 1 of their reports one holds every such write.
  std::vector<std::string> members;
  uint64_t renewals = 0;   // counts the holder's renewals (each makes a new revision)
  int64_t renewed_ms = 0;  // the holder's wall clock then (shown by `group status` only)
  bool handover = false;   // a switchover named `holder`: it takes over without waiting
  bool released = false;   // the holder stopped cleanly: the lease may be taken at once
  friend bool operator==(const GroupLease&, const GroupLease&) = default;
};

// A member's report of itself, which it rewrites each renewal interval and at once when it
// sees the lease lapse.
struct GroupMember {
  std::string address;
  std::string role = "replica";  // "primary" or "replica"
  uint64_t epoch = 0;            // the epoch of the member's newest record
  uint64_t epoch_id = 0;
  uint64_t applied_lsn = 0;
  uint64_t durable_lsn = 0;
  std::string state;        // the replication link's state, or "primary"
  bool link_alive = false;  // a replica: it heard its primary within the lease's TTL
  // The lease revision this member saw lapse (0: it sees the lease held). A report carrying
  // the lapsed revision was written after the old primary stopped acknowledging writes.
  uint64_t lapsed_revision = 0;
  int64_t reported_ms = 0;  // the member's wall clock when it wrote this
  friend bool operator==(const GroupMember&, const GroupMember&) = default;
};

struct GroupSwitchover {
  std::string to;  // the member to hand the lease to; empty: the most caught-up one
  int64_t requested_ms = 0;
  friend bool operator==(const GroupSwitchover&, const GroupSwitchover&) = default;
};

std::string FormatGroupLease(const GroupLease& lease);
Result<GroupLease> ParseGroupLease(std::string_view text);
std::string FormatGroupMember(const GroupMember& member);
Result<GroupMember> ParseGroupMember(std::string_view text);
std::string FormatGroupSwitchover(const GroupSwitchover& request);
Result<GroupSwitchover> ParseGroupSwitchover(std::string_view text);

// A group name: 1..64 of [A-Za-z0-9_-] (it is part of key-value keys).
Status CheckGroupName(std::string_view name);
// The key-value keys of group `group`'s records. A member's key is made from its address
// (`.` and `:` become `-` and `_`, which keys allow).
std::string LeaseKey(std::string_view group);
std::string SwitchoverKey(std::string_view group);
std::string MemberKey(std::string_view group, std::string_view address);
std::string MemberKeyPrefix(std::string_view group);  // every member's key starts with it

}  // namespace relgraph::net
