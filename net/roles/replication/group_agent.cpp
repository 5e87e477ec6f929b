#include "net/roles/replication/group_agent.h"

#include <algorithm>
#include <map>
#include <set>

namespace relgraph {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

int64_t WallMs() {
  return std::chrono::duration_cast<milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t Ms(SteadyClock::duration d) {
  return std::chrono::duration_cast<milliseconds>(d).count();
}

// How long a member may be detached before the primary stops counting it (when the rest
// still hold every acknowledged write): a restart or a short outage keeps its place.
constexpr int kDetachedTtls = 5;

}  // namespace

Status CheckGroupTiming(const GroupAgentOptions& o) {
  RELGRAPH_RETURN_IF_ERROR(net::CheckGroupName(o.group));
  if (o.address.empty()) return Status::InvalidArgument("a group member needs its address");
  if (o.fence_margin.count() <= 0 || o.fence_margin >= o.lease_ttl) {
    return Status::InvalidArgument("group timing: the fence margin (" +
                                   std::to_string(o.fence_margin.count()) +
                                   " ms) must be positive and below the lease TTL");
  }
  const auto budget = o.lease_ttl - o.fence_margin;
  if (o.renew_interval + 2 * o.store.op_timeout > budget) {
    return Status::InvalidArgument(
        "group timing: renew interval (" + std::to_string(o.renew_interval.count()) +
        " ms) + 2 x store timeout (" + std::to_string(o.store.op_timeout.count()) +
        " ms) must not exceed the lease TTL (" + std::to_string(o.lease_ttl.count()) +
        " ms) less the fence margin (" + std::to_string(o.fence_margin.count()) + " ms)");
  }
  if (o.poll_interval > o.renew_interval || o.poll_interval.count() <= 0) {
    return Status::InvalidArgument(
        "group timing: the poll interval must be positive and at "
        "most the renew interval");
  }
  return Status::OK();
}

GroupAgent::GroupAgent(Db* db, Replication* replication, RoleControl* control,
                       GroupAgentOptions options)
    : db_(db), replication_(replication), control_(control), options_(std::move(options)) {}

GroupAgent::~GroupAgent() {
  Stop(false);
}

void GroupAgent::Start() {
  started_at_ = SteadyClock::now();
  replication_->EnableFence(options_.lease_ttl - options_.fence_margin);
  thread_ = std::thread([this] { Loop(); });
}

void GroupAgent::Stop(bool release) {
  {
    std::lock_guard lock(mu_);
    if (stop_ && !thread_.joinable()) return;
    stop_ = true;
    release_ = release;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool GroupAgent::Sleep(milliseconds d) {
  std::unique_lock lock(mu_);
  wake_.wait_for(lock, d, [&] { return stop_ || force_requested_; });
  return !stop_;
}

void GroupAgent::Note(const std::string& line) {
  if (line == last_note_) return;
  last_note_ = line;
  if (options_.log) options_.log(line);
}

void GroupAgent::SetView(const std::function<void(View&)>& fn) {
  std::lock_guard lock(mu_);
  fn(view_);
}

GroupAgent::View GroupAgent::view() const {
  std::lock_guard lock(mu_);
  return view_;
}

void GroupAgent::Loop() {
  for (;;) {
    if (store_ && !holding_) {
      // A member waits on a watch of the lease: a new holder (a switchover's target, a
      // primary elected elsewhere) is seen at once; the poll interval bounds the wait.
      store_->WaitLeaseChange(options_.group, options_.poll_interval);
      std::lock_guard lock(mu_);
      if (stop_) break;
    } else if (!Sleep(options_.poll_interval)) {
      break;
    }
    Tick();
  }
  bool release = false;
  {
    std::lock_guard lock(mu_);
    release = release_;
  }
  if (holding_ && release && store_) {
    replication_->SetLeaseValidUntil(SteadyClock::time_point{});  // no reply after this
    net::GroupLease l = OwnLease(lease_);
    l.released = true;
    auto rev = store_->UpdateLease(options_.group, l, own_revision_);
    if (options_.log) {
      options_.log(rev.ok() ? "released the lease: a member takes over now"
                            : "could not release the lease (" + rev.status().ToString() +
                                  "): a member takes over once it lapses");
    }
  }
}

std::map<std::string, uint64_t> GroupAgent::AttachedDurable() const {
  std::map<std::string, uint64_t> attached;
  for (const net::ReplicaEntry& r : replication_->Replicas()) {
    attached[r.name] = std::max(attached[r.name], r.durable_lsn);  // attached twice: reconnecting
  }
  return attached;
}

std::vector<std::string> GroupAgent::CountedMembers(const net::GroupLease& current) const {
  std::set<std::string> s(current.members.begin(), current.members.end());
  if (!current.holder.empty()) s.insert(current.holder);
  s.erase(options_.address);
  const std::map<std::string, uint64_t> attached = AttachedDurable();
  for (const auto& [name, durable] : attached) s.insert(name);
  // A member long detached leaves the count when the others still hold every acknowledged
  // write (the election rule's invariant: sync_replicas of the members hold each one).
  const auto now = SteadyClock::now();
  auto& seen = last_attached_;
  for (const auto& [name, durable] : attached) seen[name] = now;
  const uint64_t floor = std::max(replication_->acked_lsn(), db_->epoch().first_lsn - 1);
  const uint32_t n = replication_->sync_replicas();
  for (const std::string& m : std::vector<std::string>(s.begin(), s.end())) {
    if (attached.contains(m)) continue;
    auto it = seen.find(m);
    if (it == seen.end()) it = seen.emplace(m, now).first;  // first noticed missing now
    if (now - it->second < kDetachedTtls * options_.lease_ttl) continue;
    uint32_t holders = 0;
    for (const std::string& x : s) {
      auto a = attached.find(x);
      if (x != m && a != attached.end() && a->second >= floor) ++holders;
    }
    if (n == 0 || holders >= n) {
      s.erase(m);
      seen.erase(m);
    }
  }
  return {s.begin(), s.end()};
}

net::GroupLease GroupAgent::OwnLease(const net::GroupLease& base) const {
  net::GroupLease l = base;
  const Epoch epoch = db_->epoch();
  l.holder = options_.address;
  l.epoch = epoch.number;
  l.epoch_id = epoch.id;
  l.sync_replicas = replication_->sync_replicas();
  l.members = CountedMembers(base);
  l.renewals = base.renewals + 1;
  l.renewed_ms = WallMs();
  l.handover = false;
  l.released = false;
  return l;
}

bool GroupAgent::LinkAlive(SteadyClock::time_point now) const {
  const Replication::Link link = replication_->link();
  return link.last_frame != SteadyClock::time_point{} && now - link.last_frame < options_.lease_ttl;
}

void GroupAgent::Report(uint64_t lapsed_revision) {
  const auto now = SteadyClock::now();
  net::GroupMember m;
  m.address = options_.address;
  m.role = holding_ ? "primary" : "replica";
  const Epoch epoch = db_->epoch();
  m.epoch = epoch.number;
  m.epoch_id = epoch.id;
  m.applied_lsn = db_->last_lsn();
  m.durable_lsn = db_->durable_lsn();
  m.state = holding_ ? "primary" : replication_->link().state;
  m.link_alive = !holding_ && LinkAlive(now);
  m.lapsed_revision = lapsed_revision;
  m.reported_ms = WallMs();
  if (Status s = store_->PutMember(options_.group, m); !s.ok()) {
    Note("reporting this member: " + s.ToString());
    return;
  }
  last_report_ = now;
}

void GroupAgent::Renew(SteadyClock::time_point now) {
  net::GroupLease l = OwnLease(lease_);
  const auto sent = SteadyClock::now();
  auto rev = own_revision_ == 0 ? store_->CreateLease(options_.group, l)
                                : store_->UpdateLease(options_.group, l, own_revision_);
  if (!rev.ok()) {
    // kAlreadyExists: the lease moved on; the next read says to whom.
    Note("renewing the lease: " + rev.status().ToString() +
         (rev.status().code() == Code::kAlreadyExists
              ? ""
              : "; replies go on while the lease lasts, then while every member hears this "
                "node"));
    return;
  }
  Hold(*rev, l, sent);
  last_renew_ = now;
  last_note_.clear();
  SetView([&](View& v) {
    v.connected = true;
    v.holding = true;
    v.holder = l.holder;
    v.revision = *rev;
  });
}

void GroupAgent::Hold(uint64_t revision, const net::GroupLease& lease,
                      SteadyClock::time_point sent) {
  own_revision_ = seen_revision_ = revision;
  seen_at_ = sent;
  lease_ = lease;
  lease_exists_ = true;
  replication_->SetCountedMembers(lease.members);
  // No other node can see this revision lapse before sent + TTL: stop acknowledging earlier.
  replication_->SetLeaseValidUntil(sent + options_.lease_ttl - options_.fence_margin);
}

Result<Epoch> GroupAgent::Claim(uint64_t expected, net::GroupLease from, bool resume) {
  last_attached_.clear();              // a new tenure: every member absent is absent from now
  net::GroupLease l = OwnLease(from);  // the old holder becomes a member to count
  l.sync_replicas = std::max(from.sync_replicas, l.sync_replicas);
  const Epoch mine = db_->epoch();
  if (!resume) l.epoch = l.epoch_id = 0;  // being started
  const auto sent = SteadyClock::now();
  auto rev = expected == 0 ? store_->CreateLease(options_.group, l)
                           : store_->UpdateLease(options_.group, l, expected);
  if (!rev.ok()) {
    Note("taking the lease: " + rev.status().ToString());
    return rev.status();
  }
  Hold(*rev, l, sent);
  holding_ = true;
  Result<Epoch> epoch = mine;
  if (resume) {
    control_->ResumeAsPrimary();
  } else {
    epoch = control_->BecomePrimary(from.epoch + 1);
  }
  if (!epoch.ok()) {
    // This node cannot take writes (its WAL refuses them): give the lease back at once.
    holding_ = false;
    replication_->SetLeaseValidUntil(SteadyClock::time_point{});
    net::GroupLease back = l;
    back.released = true;
    store_->UpdateLease(options_.group, back, own_revision_).status().IgnoreError();
    own_revision_ = 0;
    control_->Follow("", false).IgnoreError();
    Note("took the lease but could not start an epoch (" + epoch.status().ToString() +
         "): released it");
    return epoch.status();
  }
  if (options_.log) {
    options_.log("took the lease (revision " + std::to_string(*rev) + ", " +
                 (resume          ? "resuming"
                  : from.handover ? "handed over"
                                  : "elected") +
                 "): primary in epoch " + std::to_string(epoch->number));
  }
  Renew(SteadyClock::now());  // publishes the epoch
  return epoch;
}

void GroupAgent::StepDown(const std::string& holder) {
  holding_ = false;
  own_revision_ = 0;
  replication_->SetLeaseValidUntil(SteadyClock::time_point{});
  if (Status s = control_->Follow(holder, false); !s.ok()) Note("stepping down: " + s.ToString());
  if (options_.log) options_.log("the lease is " + holder + "'s now: this node follows it");
  SetView([&](View& v) { v.holding = false; });
}

void GroupAgent::Elect(SteadyClock::time_point now) {
  const uint64_t lapsed = lease_exists_ ? seen_revision_ : 0;
  if (reported_lapse_ != lapsed) {
    lapse_seen_at_ = now;
    reported_lapse_ = lapsed;
    Report(lapsed);
  } else if (now - last_report_ >= options_.renew_interval) {
    Report(lapsed);
  }
  auto members = store_->Members(options_.group);
  if (!members.ok()) {
    Note("election: " + members.status().ToString());
    return;
  }
  net::ElectionInput in;
  in.lease = lease_;
  in.lease_exists = lease_exists_;
  in.lapsed_revision = lapsed;
  in.self = options_.address;
  for (auto& m : *members) in.reports.push_back(std::move(m.value));
  in.waited_ms = Ms(now - (lease_exists_ ? lapse_seen_at_ : started_at_));
  in.collect_ms = lease_exists_ ? options_.lease_ttl.count() / 2 : 2 * options_.lease_ttl.count();
  in.now_ms = WallMs();
  in.fresh_ms = 2 * options_.lease_ttl.count();
  net::ElectionOutcome out = net::Elect(in);
  if (out.kind == net::ElectionOutcome::Kind::kTake && lease_exists_) {
    // While every counted member hears the primary, it may be going on without NATS.
    bool someone_deaf = false;
    for (const net::GroupMember& r : in.reports) {
      const bool counted = std::find(lease_.members.begin(), lease_.members.end(), r.address) !=
                           lease_.members.end();
      if (counted && r.lapsed_revision == lapsed && !r.link_alive) someone_deaf = true;
    }
    // A lease that counts no member has no failsafe (Replication::MayAcknowledge).
    if (!someone_deaf && !lease_.released && !lease_.members.empty()) {
      out.kind = net::ElectionOutcome::Kind::kWait;
      out.reason = "every counted member still hears " + lease_.holder +
                   ": no failover while it may go on without NATS";
    }
  }
  SetView([&](View& v) { v.election = out.reason; });
  Note("election after revision " + std::to_string(lapsed) + ": " + out.reason);
  if (out.kind == net::ElectionOutcome::Kind::kTake) {
    Claim(lapsed, lease_exists_ ? lease_ : net::GroupLease{}, false).status().IgnoreError();
  }
}

void GroupAgent::Tick() {
  const auto now = SteadyClock::now();
  if (!store_) {
    if (now < next_connect_) {
      ServeForcedPromotion();  // answers "unreachable" rather than spinning until the retry
      return;
    }
    auto s = net::GroupStore::Connect(options_.store);
    if (!s.ok()) {
      next_connect_ = now + milliseconds(500);
      Note("cannot reach the group's store: " + s.status().ToString());
      SetView([](View& v) { v.connected = false; });
      ServeForcedPromotion();
      return;
    }
    store_ = std::move(*s);
  }
  ServeForcedPromotion();
  auto read = store_->ReadLease(options_.group);
  if (!read.ok() && read.status().code() != Code::kNotFound) {
    Note("reading the lease: " + read.status().ToString() +
         (holding_ ? "; replies go on while the lease lasts, then while every member hears "
                     "this node"
                   : ""));
    SetView([](View& v) { v.connected = false; });
    if (holding_ && now - last_renew_ >= options_.renew_interval) Renew(now);
    return;
  }
  const bool exists = read.ok();
  if (exists && read->revision != seen_revision_) {
    seen_revision_ = read->revision;
    seen_at_ = now;
    lease_ = read->value;
  }
  if (!exists && lease_exists_) {
    seen_revision_ = 0;
    seen_at_ = now;
  }
  lease_exists_ = exists;
  SetView([&](View& v) {
    v.connected = true;
    v.holder = exists ? lease_.holder : "";
    v.revision = seen_revision_;
    v.holding = holding_;
  });

  if (holding_) {
    if (!exists) own_revision_ = 0;  // the store lost it: create it again as it was
    if (exists && seen_revision_ != own_revision_) {
      if (lease_.holder != options_.address) {
        StepDown(lease_.holder);
        return;
      }
      own_revision_ = seen_revision_;  // this node's write whose answer was lost
    }
    if (!exists || now - last_renew_ >= options_.renew_interval) Renew(now);
    if (holding_ && now - last_switchover_check_ >= options_.renew_interval) {
      last_switchover_check_ = now;
      HandleSwitchover();
    }
    if (holding_ && now - last_report_ >= options_.renew_interval) Report(0);
    return;
  }

  if (exists && lease_.holder == options_.address) {
    // The lease names this node: a switchover's handover, a restart while it held it, or a
    // claim cut short. Its history is the lease's when the epochs match: resume.
    const Epoch mine = db_->epoch();
    const bool resume =
        !lease_.handover && lease_.epoch == mine.number && lease_.epoch_id == mine.id;
    Claim(seen_revision_, lease_, resume).status().IgnoreError();
    return;
  }
  if (exists && !lease_.released && control_->following() != lease_.holder) {
    if (Status s = control_->Follow(lease_.holder, false); !s.ok()) {
      Note("following " + lease_.holder + ": " + s.ToString());
    }
  }
  const bool lapsed = !exists || lease_.released || now - seen_at_ >= options_.lease_ttl;
  if (!lapsed) {
    reported_lapse_ = UINT64_MAX;
    if (now - last_report_ >= options_.renew_interval) Report(0);
    return;
  }
  if (!exists && now - started_at_ < options_.lease_ttl) {
    // No lease yet: give the other members a moment to report before electing.
    if (now - last_report_ >= options_.renew_interval) Report(0);
    return;
  }
  Elect(now);
}

}  // namespace relgraph
