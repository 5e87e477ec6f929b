#include "net/roles/replication/replication.h"

#include <algorithm>

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
  std::lock_guard lock(mu_);
  primary_ = std::move(primary);
  replica_.store(true, std::memory_order_release);
}

std::string Replication::primary() const {
  std::lock_guard lock(mu_);
  return primary_;
}

void Replication::SetFollowerStopper(std::function<void()> stop) {
  std::lock_guard lock(mu_);
  stop_follower_ = std::move(stop);
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

void Replication::StopFollowingAndBecomePrimary() {
  std::function<void()> stop;
  {
    std::lock_guard lock(mu_);
    stop = std::move(stop_follower_);
    stop_follower_ = nullptr;
  }
  if (stop) stop();  // outside the lock: the follower reports its link while it stops
  std::lock_guard lock(mu_);
  primary_.clear();
  link_ = Link{};
  link_.state = "primary";
  replica_.store(false, std::memory_order_release);
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

void Replication::Ack(const std::string& name, uint64_t applied_lsn, uint64_t durable_lsn) {
  {
    std::lock_guard lock(mu_);
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
  for (const auto& [handle, a] : attached_) holds[a.name] = holds[a.name] || a.durable_lsn >= lsn;
  uint64_t n = 0;
  for (const auto& [name, held] : holds) n += held ? 1 : 0;
  return n;
}

Status Replication::WaitReplicated(uint64_t lsn) {
  if (sync_replicas() == 0 || lsn == 0) return Status::OK();
  std::unique_lock lock(mu_);
  acked_.wait(lock, [&] { return stopped_ || ReplicatedLocked(lsn) >= sync_replicas(); });
  if (ReplicatedLocked(lsn) >= sync_replicas()) return Status::OK();
  return Status(Code::kUnavailable, "stopped before " + std::to_string(sync_replicas()) +
                                        " replica(s) confirmed LSN " + std::to_string(lsn));
}

void Replication::Stop() {
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
  }
  acked_.notify_all();
}

}  // namespace relgraph
