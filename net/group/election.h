// The election rule of a replication group (docs/replication.md, "Automatic failover"): who
// may take a lapsed lease, from the members' reports. A pure function, so that the rule is
// tested on its own against a model of acknowledged writes (tests/net/group/election_test.cpp).
//
// Why this rule: with sync_replicas = N, the primary acknowledges a write only once N members
// of the lease's `members` (S) hold it durably, so any |S| - N + 1 of those members include one
// that holds every acknowledged write; members follow one history, so the one with the newest
// (epoch, durable LSN) holds everything the others do. A report counts only when written after
// its member saw the same lease revision lapse: by then the old primary had stopped
// acknowledging (its fence, group_agent.h), so no acknowledged write is missing from it.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "net/group/group_records.h"

namespace relgraph::net {

struct ElectionInput {
  // The lapsed lease; `lease_exists` false when the group has none yet (its first start, or a
  // lost store): then every member that reported within `fresh_ms` is a candidate. A lease
  // that counts no member (a primary no replica had joined yet) lets every member that
  // reported its lapse run.
  GroupLease lease;
  bool lease_exists = true;
  uint64_t lapsed_revision = 0;      // the lease revision this node saw lapse
  std::string self;                  // this node's address
  std::vector<GroupMember> reports;  // the members' latest reports, this node's included
  // Since this node saw the lapse (or, without a lease, since it started), in ms.
  int64_t waited_ms = 0;
  // How long to wait for every candidate's report before electing among those that came.
  int64_t collect_ms = 0;
  int64_t now_ms = 0;    // wall clock, for reports' age without a lease
  int64_t fresh_ms = 0;  // without a lease: a report this recent counts
};

struct ElectionOutcome {
  enum class Kind {
    kTake,        // this node should take the lease
    kWait,        // not yet: reports are missing (reason names them) or another should win
    kIneligible,  // this node may not take it (not a counted member)
  };
  Kind kind = Kind::kWait;
  std::string winner;  // the candidate the reports name so far (may be empty)
  std::string reason;  // for logs and `group status`
};

ElectionOutcome Elect(const ElectionInput& in);

// The order of candidates: newer epoch first, then higher durable LSN, then the smaller
// address (a fixed tie-break all members agree on).
bool AheadOf(const GroupMember& a, const GroupMember& b);

}  // namespace relgraph::net
