// GroupAgent's hand-overs asked of it from outside (group_agent.h): an operator's switchover
// (the lease handed to a caught-up member), PROMOTE --force (the lease taken), and REPLICA_OF
// (refused: the lease decides).
#include <algorithm>
#include <map>
#include <set>

#include "net/roles/replication/group_agent.h"

namespace relgraph {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How long a switchover waits for its target to hold every record.
constexpr auto kSwitchoverCatchUp = milliseconds(1000);

}  // namespace

void GroupAgent::HandleSwitchover() {
  auto request = store_->ReadSwitchover(options_.group);
  if (!request.ok() || !request->has_value()) return;
  const std::string asked = (*request)->to;
  // The target: the member named, or the most caught-up counted member streaming from here.
  std::string to = asked;
  uint64_t best = 0;
  const std::map<std::string, uint64_t> attached = AttachedDurable();
  const std::vector<std::string>& counted = lease_.members;  // as this node last wrote it
  if (to.empty()) {
    for (const std::string& m : counted) {
      auto it = attached.find(m);
      if (it != attached.end() && (to.empty() || it->second > best)) {
        to = m;
        best = it->second;
      }
    }
  }
  const bool listed = std::find(counted.begin(), counted.end(), to) != counted.end();
  if (to.empty() || to == options_.address || !attached.contains(to) || !listed) {
    store_->DeleteSwitchover(options_.group).IgnoreError();
    Note("switchover refused: " +
         (to.empty() ? std::string("no member streams from this primary")
                     : to + " is not a counted member streaming from this primary"));
    return;
  }
  replication_->PauseWrites(to);
  // No client write is taken from here on; records written by no client (a shard's inbox, a
  // move) go on, but none past `through` is acknowledged until the pause ends, so the target
  // needs everything up to `through` and whatever was acknowledged before the hold began.
  const uint64_t through = db_->last_lsn();
  replication_->HoldAcknowledgementsAfter(through);
  const auto deadline = SteadyClock::now() + kSwitchoverCatchUp;
  bool caught_up = false;
  while (!caught_up && SteadyClock::now() < deadline) {
    const auto held = AttachedDurable();
    auto it = held.find(to);
    caught_up = it != held.end() && it->second >= std::max(through, replication_->acked_lsn());
    if (!caught_up) std::this_thread::sleep_for(milliseconds(1));
  }
  net::GroupLease l = OwnLease(lease_);
  l.holder = to;
  l.handover = true;
  std::set<std::string> members(l.members.begin(), l.members.end());
  members.erase(to);
  members.insert(options_.address);
  l.members.assign(members.begin(), members.end());
  Result<uint64_t> rev = Status(Code::kTimeout, to + " did not catch up within 1 s");
  if (caught_up) rev = store_->UpdateLease(options_.group, l, own_revision_);
  store_->DeleteSwitchover(options_.group).IgnoreError();
  if (!rev.ok()) {
    replication_->ResumeWrites();
    Note("switchover to " + to + " abandoned: " + rev.status().ToString());
    return;
  }
  holding_ = false;
  own_revision_ = 0;
  seen_revision_ = *rev;
  seen_at_ = SteadyClock::now();
  lease_ = l;
  replication_->SetLeaseValidUntil(SteadyClock::time_point{});
  if (options_.log) options_.log("switchover: handed the lease to " + to);
  control_->Follow(to, false).IgnoreError();
  SetView([&](View& v) {
    v.holding = false;
    v.holder = to;
  });
}

void GroupAgent::ServeForcedPromotion() {
  {
    std::lock_guard lock(mu_);
    if (!force_requested_) return;
  }
  Result<Epoch> result = Status(Code::kUnavailable, "the group's store does not answer");
  if (holding_) {
    result = Status::InvalidArgument("this node already holds the lease");
  } else if (store_) {
    auto read = store_->ReadLease(options_.group);
    if (read.ok()) {
      result = Claim(read->revision, read->value, false);
    } else if (read.status().code() == Code::kNotFound) {
      result = Claim(0, net::GroupLease{}, false);
    } else {
      result = read.status();
    }
  }
  std::lock_guard lock(mu_);
  force_requested_ = false;
  force_result_ = std::move(result);
  wake_.notify_all();
}

Status GroupAgent::ReplicaOf(const std::string&, bool) {
  const std::string holder = view().holder;  // lease_ is the agent thread's
  return Status::InvalidArgument("this node is a member of group " + options_.group +
                                 ": the group's lease decides whom it follows (now " +
                                 (holder.empty() ? std::string("nobody") : holder) + ")");
}

Result<Epoch> GroupAgent::Promote(bool force) {
  if (!force) {
    return Status::InvalidArgument(
        "this node is a member of group " + options_.group +
        ", whose election picks the primary: hand the lease over with `relgraph-admin group "
        "switchover`, or take it now with promote --force");
  }
  std::unique_lock lock(mu_);
  force_requested_ = true;
  force_result_.reset();
  wake_.notify_all();
  if (!wake_.wait_for(lock, std::chrono::seconds(10),
                      [&] { return force_result_.has_value() || stop_; }) ||
      !force_result_) {
    return Status(Code::kTimeout, "promote --force: the group's agent did not answer");
  }
  return std::move(*force_result_);
}

}  // namespace relgraph
