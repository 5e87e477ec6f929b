// ChangeMessage: the changes one shard sends another in one JetStream message (docs/cluster.md,
// "Messages"), as the sender's WAL records:
//   message := version:u8=2 origin:u32 count:u32 record{count}
//   record  := lsn:u64 type:u8 len:u32 payload:u8[len]          (little-endian)
// LSNs increase strictly within a message; a record's type and payload are the sender's WAL
// record's (docs/wal-format.md), checked by the receiver's Db::ApplyRemote.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/db.h"
#include "storage/status.h"

namespace relgraph {

struct ChangeMessage {
  uint32_t origin = 0;
  std::vector<Db::ReplicatedRecord> records;  // payloads point into the decoded bytes
};

// Appends one record to a message being built by StartChangeMessage.
void StartChangeMessage(uint32_t origin, std::string* out);
void AppendChangeRecord(uint64_t lsn, uint8_t type, std::string_view payload, std::string* out);
// Sets the record count of a message built so. REQUIRES: StartChangeMessage(out).
void FinishChangeMessage(uint32_t count, std::string* out);

// kInvalidArgument naming what is wrong (version, length, count, LSN order, a payload cut short).
// The records' payloads point into `bytes`, which must outlive the result.
Result<ChangeMessage> DecodeChangeMessage(std::string_view bytes);

}  // namespace relgraph
