// RecordSubscription: a net::Subscription over the WAL's raw records, for a replica's
// REPLICATE (docs/protocol.md, "Replication"). It pushes RECORDS frames with as many records as
// fit, each as logged, and an empty one (a heartbeat carrying the primary's newest LSN and
// clock) after half a second without records, so the replica can tell a quiet primary from a
// dead link. While it lives, the replica is attached to Replication (for REPLICATION and
// --sync-replicas); its destructor, when the connection drops, detaches it.
//
// A replica answers every frame with one REPLICA_ACK, in order (docs/protocol.md), so the k-th
// ack on the connection answers the k-th frame: the subscription keeps when it made each
// frame not yet answered, and an ack takes the oldest (a group's failsafe: Replication::Ack).
//
// Thread-safety: Next from one thread at a time (net::Subscription's contract);
// TakeAnsweredFrameTime from any thread.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "engine/db.h"
#include "engine/stream/change_reader.h"
#include "net/protocol/messages.h"
#include "net/roles/replication/replication.h"
#include "net/service.h"

namespace relgraph {

class RecordSubscription final : public net::Subscription {
 public:
  RecordSubscription(Db* db, std::unique_ptr<ChangeReader> reader, Replication* replication,
                     const std::string& name);
  ~RecordSubscription() override;
  uint8_t push_opcode() const override { return static_cast<uint8_t>(net::Opcode::kRecords); }
  Result<size_t> Next(size_t max_body, std::string* body) override;
  // When the frame a REPLICA_ACK just answered was made; nullopt when not known (more frames
  // were in flight than are remembered).
  std::optional<std::chrono::steady_clock::time_point> TakeAnsweredFrameTime();

 private:
  Db* const db_;
  std::unique_ptr<ChangeReader> reader_;
  Replication* const replication_;
  const uint64_t handle_;
  std::chrono::steady_clock::time_point last_push_;
  std::mutex sent_mu_;
  std::deque<std::chrono::steady_clock::time_point> sent_;  // guarded by sent_mu_
  bool sent_lost_ = false;                                  // guarded by sent_mu_
};

}  // namespace relgraph
