// SnapshotTransfer: a net::Subscription that pushes one snapshot file as SNAPSHOT_DATA frames
// (docs/protocol.md, FETCH_SNAPSHOT), a chunk each time the connection's socket has room.
//
// Thread-safety: one thread at a time (net::Subscription's contract).
#pragma once

#include <memory>
#include <string>

#include "engine/db.h"
#include "net/protocol/messages.h"
#include "net/service.h"

namespace relgraph {

class SnapshotTransfer final : public net::Subscription {
 public:
  explicit SnapshotTransfer(Db::SnapshotFile snapshot) : snapshot_(std::move(snapshot)) {}
  uint8_t push_opcode() const override { return static_cast<uint8_t>(net::Opcode::kSnapshotData); }
  Result<size_t> Next(size_t max_body, std::string* body) override;
  bool done() const override { return offset_ == snapshot_.file_bytes; }

 private:
  Db::SnapshotFile snapshot_;
  uint64_t offset_ = 0;
};

}  // namespace relgraph
