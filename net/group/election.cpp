#include "net/group/election.h"

#include <algorithm>
#include <set>

namespace relgraph::net {

bool AheadOf(const GroupMember& a, const GroupMember& b) {
  if (a.epoch != b.epoch) return a.epoch > b.epoch;
  if (a.durable_lsn != b.durable_lsn) return a.durable_lsn > b.durable_lsn;
  return a.address < b.address;
}

ElectionOutcome Elect(const ElectionInput& in) {
  using Kind = ElectionOutcome::Kind;
  ElectionOutcome out;
  // The candidates, and the reports that count.
  std::set<std::string> candidates;
  std::vector<const GroupMember*> fresh;
  if (in.lease_exists && in.lease.members.empty()) {
    // No member was counted: no write was acknowledged under this lease with sync_replicas
    // above 0 (and none is promised with 0), so every member that saw it lapse may run.
    for (const GroupMember& r : in.reports) {
      if (r.lapsed_revision == in.lapsed_revision && r.address != in.lease.holder) {
        candidates.insert(r.address);
        fresh.push_back(&r);
      }
    }
    if (!candidates.contains(in.self)) {
      out.reason = "this node's own report after the lapse is not stored yet";
      return out;
    }
  } else if (in.lease_exists) {
    candidates.insert(in.lease.members.begin(), in.lease.members.end());
    if (!candidates.contains(in.self)) {
      out.kind = Kind::kIneligible;
      out.reason = in.self + " is not among the members the primary counted (" +
                   std::to_string(candidates.size()) + ")";
      return out;
    }
    for (const GroupMember& r : in.reports) {
      if (candidates.contains(r.address) && r.lapsed_revision == in.lapsed_revision) {
        fresh.push_back(&r);
      }
    }
  } else {
    for (const GroupMember& r : in.reports) {
      if (in.now_ms - r.reported_ms <= in.fresh_ms || r.address == in.self) {
        candidates.insert(r.address);
        fresh.push_back(&r);
      }
    }
  }
  bool self_reported = false;
  for (const GroupMember* r : fresh) self_reported = self_reported || r->address == in.self;
  if (!self_reported) {
    out.reason = "this node's own report after the lapse is not stored yet";
    return out;
  }
  std::sort(fresh.begin(), fresh.end(),
            [](const GroupMember* a, const GroupMember* b) { return AheadOf(*a, *b); });
  out.winner = fresh.front()->address;
  // How many reports must come: every candidate's while collect_ms runs; after it, with
  // sync_replicas = N > 0, |S| - N + 1 of them (one of which holds every acknowledged write).
  const size_t all = candidates.size();
  const uint32_t n = in.lease_exists && !in.lease.members.empty() ? in.lease.sync_replicas : 0;
  size_t needed = all;
  if (in.waited_ms >= in.collect_ms) needed = n == 0 ? 1 : (n > all ? all : all - n + 1);
  if (fresh.size() < needed) {
    std::string missing;
    for (const std::string& c : candidates) {
      bool seen = false;
      for (const GroupMember* r : fresh) seen = seen || r->address == c;
      if (!seen) missing += (missing.empty() ? "" : ", ") + c;
    }
    out.reason = "waiting for reports: " + std::to_string(fresh.size()) + " of " +
                 std::to_string(needed) + " needed (missing: " + missing + ")";
    return out;
  }
  if (out.winner != in.self) {
    out.reason = out.winner + " is further ahead";
    return out;
  }
  out.kind = Kind::kTake;
  out.reason =
      "this node holds the newest history among " + std::to_string(fresh.size()) + " report(s)";
  return out;
}

}  // namespace relgraph::net
