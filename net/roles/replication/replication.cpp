#include "net/roles/replication/replication.h"

#include <algorithm>
#include <optional>

namespace relgraph {

void Replication::SetSyncReplicasFloor(uint32_t floor) {
  std::lock_guard lock(mu_);
  floor_ = floor;
  if (sync_replicas_.load() < floor) sync_replicas_.store(floor, std::memory_order_release);
}

void Replication::SetOnGroupChange(std::function<void(uint32_t)> persist) {
  std::lock_guard lock(mu_);
  on_group_change_ = std::move(persist);
}

void Replication::LearnGroupSyncReplicas(uint32_t value) {
  std::function<void(uint32_t)> persist;
  uint32_t now = 0;
  {
    std::lock_guard lock(mu_);
    now = std::max(floor_, value);
    if (now == sync_replicas_.load()) return;
    sync_replicas_.store(now, std::memory_order_release);
    persist = on_group_change_;
  }
  acked_.notify_all();  // a lower requirement may release waiting writes
  if (persist) persist(now);
}

void Replication::SetPeers(std::vector<std::string> peers) {
  std::lock_guard lock(mu_);
  peers_ = std::move(peers);
}

std::vector<std::string> Replication::peers() const {
  std::lock_guard lock(mu_);
  return peers_;
}

void Replication::SetReplicaOf(std::string primary) {
  {
    std::lock_guard lock(mu_);
    primary_ = std::move(primary);
    replica_.store(true, std::memory_order_release);
    paused_.store(false, std::memory_order_release);
    hold_after_.store(UINT64_MAX, std::memory_order_release);
    ++role_changes_;
  }
  acked_.notify_all();  // a primary's waiting replies fail
}

void Replication::BecomePrimary() {
  {
    std::lock_guard lock(mu_);
    primary_.clear();
    link_ = Link{};
    link_.state = "primary";
    confirmed_.clear();
    paused_.store(false, std::memory_order_release);
    hold_after_.store(UINT64_MAX, std::memory_order_release);
    replica_.store(false, std::memory_order_release);
    ++role_changes_;
  }
  acked_.notify_all();
}

std::string Replication::primary() const {
  std::lock_guard lock(mu_);
  return !replica_.load() && paused_.load() ? pause_target_ : primary_;
}

void Replication::PauseWrites(std::string to) {
  std::lock_guard lock(mu_);
  pause_target_ = std::move(to);
  paused_.store(true, std::memory_order_release);
}

void Replication::ResumeWrites() {
  {
    std::lock_guard lock(mu_);
    paused_.store(false, std::memory_order_release);
    hold_after_.store(UINT64_MAX, std::memory_order_release);
  }
  acked_.notify_all();
}

void Replication::HoldAcknowledgementsAfter(uint64_t lsn) {
  std::lock_guard lock(mu_);
  if (paused_.load()) hold_after_.store(lsn, std::memory_order_release);
}

void Replication::SetPromotionCheck(std::function<Status()> check) {
  std::lock_guard lock(mu_);
  promotion_check_ = std::move(check);
}

Status Replication::CheckPromotion() const {
  std::function<Status()> check;
  {
    std::lock_guard lock(mu_);
    check = promotion_check_;
  }
  return check ? check() : Status::OK();  // outside the lock: it asks other nodes
}

void Replication::EnableFence(std::chrono::milliseconds failsafe_window) {
  std::lock_guard lock(mu_);
  failsafe_window_ = failsafe_window;
  fenced_.store(true, std::memory_order_release);
}

void Replication::SetLeaseValidUntil(std::chrono::steady_clock::time_point until) {
  {
    std::lock_guard lock(mu_);
    lease_until_ns_.store(until.time_since_epoch().count(), std::memory_order_release);
  }
  acked_.notify_all();
}

void Replication::SetCountedMembers(std::vector<std::string> members) {
  {
    std::lock_guard lock(mu_);
    counted_ = std::move(members);
    counted_set_ = true;
  }
  acked_.notify_all();
}

bool Replication::MayAcknowledge(std::chrono::steady_clock::time_point now) const {
  std::lock_guard lock(mu_);
  return MayAcknowledgeLocked(now);
}

bool Replication::MayAcknowledgeLocked(std::chrono::steady_clock::time_point now) const {
  if (!fenced_.load(std::memory_order_acquire)) return true;
  if (now.time_since_epoch().count() < lease_until_ns_.load(std::memory_order_acquire)) return true;
  // The failsafe: no counted member may take the lease while it hears this node, and a member
  // that answered a frame sent at `sent` hears it until at least sent + its link timeout.
  if (counted_.empty()) return false;
  for (const std::string& m : counted_) {
    auto it = confirmed_.find(m);
    if (it == confirmed_.end() || it->second + failsafe_window_ <= now) return false;
  }
  return true;
}

void Replication::NoteAcked(uint64_t lsn) {
  uint64_t seen = acked_lsn_.load(std::memory_order_relaxed);
  while (seen < lsn && !acked_lsn_.compare_exchange_weak(seen, lsn, std::memory_order_acq_rel)) {
  }
}

void Replication::SetLink(const Link& link) {
  std::lock_guard lock(mu_);
  link_ = link;
}

Replication::Link Replication::link() const {
  std::lock_guard lock(mu_);
  return link_;
}

uint64_t Replication::Attach(const std::string& name) {
  std::lock_guard lock(mu_);
  const uint64_t handle = next_handle_++;
  attached_[handle] = Attached{name, 0, 0, std::chrono::steady_clock::now()};
  return handle;
}

void Replication::Detach(uint64_t handle) {
  std::lock_guard lock(mu_);
  attached_.erase(handle);
}

void Replication::Ack(const std::string& name, uint64_t applied_lsn, uint64_t durable_lsn,
                      std::optional<std::chrono::steady_clock::time_point> frame_sent) {
  {
    std::lock_guard lock(mu_);
    if (frame_sent) {
      auto& c = confirmed_[name];
      c = std::max(c, *frame_sent);
    }
    for (auto& [handle, a] : attached_) {
      if (a.name != name) continue;
      a.applied_lsn = std::max(a.applied_lsn, applied_lsn);
      a.durable_lsn = std::max(a.durable_lsn, durable_lsn);
      a.acked = std::chrono::steady_clock::now();
    }
  }
  acked_.notify_all();
}

std::vector<net::ReplicaEntry> Replication::Replicas() const {
  std::lock_guard lock(mu_);
  std::vector<net::ReplicaEntry> out;
  const auto now = std::chrono::steady_clock::now();
  for (const auto& [handle, a] : attached_) {
    const auto age = std::chrono::duration_cast<std::chrono::milliseconds>(now - a.acked);
    out.push_back({a.name, a.applied_lsn, a.durable_lsn, static_cast<uint64_t>(age.count())});
  }
  return out;
}

uint64_t Replication::ReplicatedLocked(uint64_t lsn) const {
  // One count per replica name: a replica that reconnected may briefly be attached twice.
  std::map<std::string_view, bool> holds;
  for (const auto& [handle, a] : attached_) {
    if (counted_set_ && std::find(counted_.begin(), counted_.end(), a.name) == counted_.end()) {
      continue;
    }
    holds[a.name] = holds[a.name] || a.durable_lsn >= lsn;
  }
  uint64_t n = 0;
  for (const auto& [name, held] : holds) n += held ? 1 : 0;
  return n;
}

Status Replication::WaitReplicated(uint64_t lsn) {
  if (lsn == 0) return Status::OK();
  const bool fenced = fenced_.load(std::memory_order_acquire);
  if (!fenced && sync_replicas() == 0) return Status::OK();
  if (fenced && sync_replicas() == 0 && !is_replica() && !paused_.load() &&
      std::chrono::steady_clock::now().time_since_epoch().count() <
          lease_until_ns_.load(std::memory_order_acquire)) {
    NoteAcked(lsn);  // the common case in a group without synchronous replicas: no lock
    return Status::OK();
  }
  std::unique_lock lock(mu_);
  const uint64_t role_changes = role_changes_;
  for (;;) {
    if (stopped_) {
      return Status(Code::kUnavailable, "stopped before " + std::to_string(sync_replicas()) +
                                            " replica(s) confirmed LSN " + std::to_string(lsn));
    }
    if (role_changes_ != role_changes || replica_.load()) {
      return Status(Code::kUnavailable,
                    "this node stopped being the primary before LSN " + std::to_string(lsn) +
                        " was acknowledged (the primary is now " +
                        (primary_.empty() ? std::string("being elected") : primary_) +
                        "): the write's outcome is unknown");
    }
    const auto now = std::chrono::steady_clock::now();
    const bool fence_ok = MayAcknowledgeLocked(now) &&
                          !(paused_.load() && lsn > hold_after_.load(std::memory_order_acquire));
    if (fence_ok && ReplicatedLocked(lsn) >= sync_replicas()) {
      NoteAcked(lsn);
      return Status::OK();
    }
    // The lease and the failsafe also end by time alone: look again soon.
    if (fence_ok) {
      acked_.wait(lock);
    } else {
      acked_.wait_for(lock, std::chrono::milliseconds(20));
    }
  }
}

void Replication::Stop() {
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
  }
  acked_.notify_all();
}

}  // namespace relgraph
