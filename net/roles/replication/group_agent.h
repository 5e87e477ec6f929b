// GroupAgent: automatic failover for a replication group (docs/replication.md, "Automatic
// failover"): this node's part in holding, renewing, and taking the group's lease in NATS
// JetStream key-value (net/group/), and the role changes that follow from it (role_control.h).
//
// Why this design (Patroni's, on JetStream): the lease is one key; its holder is the primary
// and renews it by compare-and-set on the key's revision every renew interval. Nodes need no
// shared clock: each measures the lease's age on its own steady clock from when it saw the
// revision change, and the holder counts from when it sent its last successful renewal, which
// is before any other node can have seen it. So the holder's fence (it releases replies only
// until that send time + TTL - margin, Replication::EnableFence) ends before any member can
// see the lease lapse. A member takes a lapsed lease only when it does not hear the primary
// itself or another counted member reports that it does not (while every counted member
// hears the primary, the primary may go on in failsafe: NATS alone is down), after every
// counted member's report written since the lapse that the election rule needs
// (net/group/election.h) names it the most advanced. The winner starts a new epoch; the
// others follow it, and a node whose records the new primary never had saves them aside
// and resynchronizes (replica_follower.h). A switchover hands the lease to a caught-up member
// without waiting: writes pause, the member catches up, the lease names it with `handover`.
//
// Timing (defaults): TTL 1500 ms, renew every 200 ms, each store call gives up after 500 ms,
// fence margin 300 ms: renew + 2 x call timeout <= TTL - margin, so one failed call and its
// retry do not cost the lease (Patroni's loop_wait + 2 x retry_timeout <= ttl): 200 + 2 x 500 =
// 1500 - 300.
//
// Thread-safety: Start and Stop from one thread; the RoleChanger calls from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/db.h"
#include "net/group/election.h"
#include "net/group/group_store.h"
#include "net/roles/replication/replication.h"
#include "net/roles/replication/role_control.h"

namespace relgraph {

struct GroupAgentOptions {
  std::string group;    // the group's name (net::CheckGroupName)
  std::string address;  // this node's address, as members and clients reach it
  net::GroupStoreOptions store;
  std::chrono::milliseconds lease_ttl{1500};
  std::chrono::milliseconds renew_interval{200};
  std::chrono::milliseconds poll_interval{20};  // how often the lease is read
  std::chrono::milliseconds fence_margin{300};
  std::function<void(const std::string&)> log;
};

// Checks the timing rule; kInvalidArgument says which part breaks it.
Status CheckGroupTiming(const GroupAgentOptions& o);

class GroupAgent final : public RoleChanger {
 public:
  // None is owned; all outlive the agent. The node starts as a replica of nobody: it takes
  // writes only once the lease is its own.
  GroupAgent(Db* db, Replication* replication, RoleControl* control, GroupAgentOptions options);
  ~GroupAgent() override;  // Stop(false)
  void Start();
  // Ends the agent. release: a primary marks its lease released so that a member takes over
  // at once (a clean shutdown) instead of after the TTL.
  void Stop(bool release);

  // REPLICA_OF is refused: the lease decides whom a member follows. PROMOTE without force
  // is refused (the election decides; a switchover hands over on purpose); with force, this
  // node takes the lease whatever its state and becomes the primary.
  Status ReplicaOf(const std::string& primary, bool resync) override;
  Result<Epoch> Promote(bool force) override;

  struct View {              // for INFO and logs
    bool connected = false;  // the store answers
    bool holding = false;    // this node holds the lease
    std::string holder;      // the lease's holder as last read
    uint64_t revision = 0;
    std::string election;  // the last election's outcome, when one ran
  };
  View view() const;

 private:
  void Loop();
  void Tick();
  bool Sleep(std::chrono::milliseconds d);  // false when stopping
  // The lease's record as this node would write it now (holder = this node).
  net::GroupLease OwnLease(const net::GroupLease& base) const;
  std::vector<std::string> CountedMembers(const net::GroupLease& current) const;
  // The replicas streaming from this node now, each with its durable LSN.
  std::map<std::string, uint64_t> AttachedDurable() const;
  void Report(uint64_t lapsed_revision);
  void Renew(std::chrono::steady_clock::time_point now);
  // Takes the lease at `expected` (0: creates it) and becomes the primary: in a new epoch, or
  // in its current one when `resume`.
  Result<Epoch> Claim(uint64_t expected, net::GroupLease from,
                      bool resume);  // from: a copy, lease_ changes
  // This node wrote `lease` at `revision`, having sent the write at `sent`: its fence moves on.
  void Hold(uint64_t revision, const net::GroupLease& lease,
            std::chrono::steady_clock::time_point sent);
  bool LinkAlive(std::chrono::steady_clock::time_point now) const;  // hears its primary
  void StepDown(const std::string& holder);
  void Elect(std::chrono::steady_clock::time_point now);
  void HandleSwitchover();
  void ServeForcedPromotion();
  void Note(const std::string& line);  // logs a line once until it changes
  void SetView(const std::function<void(View&)>& fn);

  Db* const db_;
  Replication* const replication_;
  RoleControl* const control_;
  const GroupAgentOptions options_;

  // The agent thread's own state.
  std::unique_ptr<net::GroupStore> store_;
  std::chrono::steady_clock::time_point next_connect_{};
  bool lease_exists_ = false;
  net::GroupLease lease_;  // as last read
  uint64_t seen_revision_ = 0;
  std::chrono::steady_clock::time_point seen_at_{};  // when seen_revision_ was first read
  bool holding_ = false;
  uint64_t own_revision_ = 0;  // the revision of this node's last write of the lease
  std::chrono::steady_clock::time_point last_renew_{};
  std::chrono::steady_clock::time_point last_report_{};
  uint64_t reported_lapse_ = UINT64_MAX;  // the lapsed revision last reported
  std::chrono::steady_clock::time_point lapse_seen_at_{};
  std::chrono::steady_clock::time_point started_at_{};
  std::chrono::steady_clock::time_point last_switchover_check_{};
  // When each member was last seen attached (CountedMembers keeps it).
  mutable std::map<std::string, std::chrono::steady_clock::time_point> last_attached_;
  std::string last_note_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;                          // guarded by mu_
  bool release_ = false;                       // guarded by mu_
  bool force_requested_ = false;               // guarded by mu_
  std::optional<Result<Epoch>> force_result_;  // guarded by mu_
  View view_;                                  // guarded by mu_
  std::thread thread_;
};

}  // namespace relgraph
