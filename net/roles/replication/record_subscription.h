// RecordSubscription: a net::Subscription over the WAL's raw records, for a replica's
// REPLICATE (docs/protocol.md, "Replication"). It pushes RECORDS frames with as many records as
// fit, each as logged, and an empty one (a heartbeat carrying the primary's newest LSN and
// clock) after half a second without records, so the replica can tell a quiet primary from a
// dead link. While it lives, the replica is attached to Replication (for REPLICATION and
// --sync-replicas); its destructor, when the connection drops, detaches it.
//
// Thread-safety: one thread at a time (net::Subscription's contract).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "engine/db.h"
#include "engine/stream/change_reader.h"
#include "net/protocol/messages.h"
#include "net/service.h"
#include "net/roles/replication/replication.h"

namespace relgraph {

class RecordSubscription final : public net::Subscription {
 public:
  RecordSubscription(Db* db, std::unique_ptr<ChangeReader> reader, Replication* replication,
                     const std::string& name);
  ~RecordSubscription() override;
  uint8_t push_opcode() const override { return static_cast<uint8_t>(net::Opcode::kRecords); }
  Result<size_t> Next(size_t max_body, std::string* body) override;

 private:
  Db* const db_;
  std::unique_ptr<ChangeReader> reader_;
  Replication* const replication_;
  const uint64_t handle_;
  std::chrono::steady_clock::time_point last_push_;
};

}  // namespace relgraph
