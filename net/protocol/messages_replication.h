// Replication's messages (docs/replication.md, docs/protocol.md 0x37-0x3b): REPLICATE and
// its RECORDS, acknowledgements, promotion, the group's status. Field order is wire order.
//
// Thread-safety: plain data; ForEachWireRecord is a pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "net/protocol/messages_common.h"

namespace relgraph::net {

// REPLICATE: a replica asks for every WAL record from from_lsn on, raw, as the primary logged
// them; the primary first checks that the replica's history is its own (epoch and id of the
// replica's newest record, which is from_lsn - 1).
struct ReplicateReply {
  uint64_t epoch = 0;  // the primary's current epoch
  uint64_t epoch_id = 0;
  uint64_t newest_lsn = 0;  // the primary's newest LSN when replication started
  RELGRAPH_WIRE_FIELDS(epoch, epoch_id, newest_lsn)
};
struct ReplicateRequest {
  static constexpr Opcode kOpcode = Opcode::kReplicate;
  using Reply = ReplicateReply;
  uint64_t from_lsn = 0;  // the replica's newest LSN + 1
  uint64_t epoch = 0;     // the epoch of the replica's newest record (1 when it has none)
  uint64_t epoch_id = 0;
  std::string name;  // how the replica calls itself (its address), for REPLICATION and acks
  RELGRAPH_WIRE_FIELDS(from_lsn, epoch, epoch_id, name)
};
// One WAL record as logged (docs/wal-format.md, "Record types").
struct WireRecord {
  uint8_t type = 0;
  std::string payload;
  RELGRAPH_WIRE_FIELDS(type, payload)
};
// A RECORDS frame's body: records first_lsn, first_lsn + 1, ...; none in a heartbeat, sent when
// nothing was sent for half a second.
struct RecordsBody {
  uint64_t first_lsn = 0;
  uint64_t newest_lsn = 0;  // the primary's newest LSN logged when the frame was made
  int64_t sent_us = 0;      // the primary's clock (µs since the Unix epoch) then
  std::vector<WireRecord> records;
  RELGRAPH_WIRE_FIELDS(first_lsn, newest_lsn, sent_us, records)
};
// The fixed start of a RECORDS body: first_lsn:u64 newest_lsn:u64 sent_us:i64 and the
// records' count (the list's u16), before the records.
constexpr size_t kRecordsHeaderBytes = 26;
// Writes that start at p (kRecordsHeaderBytes bytes): for a sender that appends the records
// in place and knows their count only at the end.
void EncodeRecordsHeader(char* p, uint64_t first_lsn, uint64_t newest_lsn, int64_t sent_us,
                         size_t count);
// The clock of sent_us: the wall clock, in µs since the Unix epoch (a replica's lag in ms is
// its own reading minus the primary's).
int64_t RecordsClockUs();
// RecordsBody without a copy per record: header fields into *header (records left empty),
// then fn(lsn, type, payload) for each record, the views pointing into `body`.
template <typename Fn>
Status ForEachWireRecord(std::string_view body, RecordsBody* header, Fn&& fn);

struct ReplicaAckRequest {
  static constexpr Opcode kOpcode = Opcode::kReplicaAck;
  using Reply = Empty;
  std::string name;          // as in its REPLICATE
  uint64_t applied_lsn = 0;  // applied (readable on the replica)
  uint64_t durable_lsn = 0;  // fsynced in the replica's WAL
  RELGRAPH_WIRE_FIELDS(name, applied_lsn, durable_lsn)
};

struct PromoteReply {
  uint64_t epoch = 0;  // the new epoch
  uint64_t epoch_id = 0;
  uint64_t first_lsn = 0;  // its epoch record's LSN
  RELGRAPH_WIRE_FIELDS(epoch, epoch_id, first_lsn)
};
struct PromoteRequest {
  static constexpr Opcode kOpcode = Opcode::kPromote;
  using Reply = PromoteReply;
  // false: refused while another replica this node knows of is further ahead (or a primary of
  // a newer epoch); true: promote anyway.
  bool force = false;
  RELGRAPH_WIRE_FIELDS(force)
};

// REPLICA_OF: follow `primary` from now on, without a restart (a primary steps down: its
// replies still waiting fail, their outcome unknown). Refused on a member of a group with
// automatic failover, whose lease decides whom it follows.
struct ReplicaOfRequest {
  static constexpr Opcode kOpcode = Opcode::kReplicaOf;
  using Reply = Empty;
  std::string primary;  // "host:port"
  bool resync = false;  // first copy the primary's snapshot, discarding this node's data
  RELGRAPH_WIRE_FIELDS(primary, resync)
};

enum class ReplicationRole : uint8_t { kPrimary = 0, kReplica = 1 };
struct ReplicaEntry {  // a replica connected to this primary
  std::string name;
  uint64_t applied_lsn = 0;
  uint64_t durable_lsn = 0;
  uint64_t ack_age_ms = 0;  // since its last REPLICA_ACK
  RELGRAPH_WIRE_FIELDS(name, applied_lsn, durable_lsn, ack_age_ms)
};
struct ReplicationReply {
  ReplicationRole role = ReplicationRole::kPrimary;
  std::string primary;  // a replica's primary, "host:port"; empty on a primary
  // A replica's link: "connecting", "snapshot", "streaming", "diverged", "failed" (message
  // says why); "primary" on a primary.
  std::string state;
  std::string message;
  uint64_t epoch = 0;
  uint64_t epoch_id = 0;
  uint64_t applied_lsn = 0;  // this node's newest LSN
  uint64_t primary_lsn = 0;  // a replica: the primary's newest it knows of
  uint64_t lag_ms = 0;       // a replica: age of the oldest record it knows of but lacks
  uint32_t sync_replicas = 0;
  std::vector<ReplicaEntry> replicas;
  RELGRAPH_WIRE_FIELDS(role, primary, state, message, epoch, epoch_id, applied_lsn, primary_lsn,
                       lag_ms, sync_replicas, replicas)
};
struct ReplicationRequest : Empty {
  static constexpr Opcode kOpcode = Opcode::kReplication;
  using Reply = ReplicationReply;
};

// POSITION: where this node's history stands, cheaply: a client reading its own writes from a
// replica asks the primary after its write and the replica before its read (docs/replication.md,
// "Reading your own writes").
struct PositionReply {
  ReplicationRole role = ReplicationRole::kPrimary;
  uint64_t epoch = 0;
  uint64_t applied_lsn = 0;  // every record up to here is applied: reads executed after see it
  uint64_t durable_lsn = 0;  // fsynced here
  RELGRAPH_WIRE_FIELDS(role, epoch, applied_lsn, durable_lsn)
};
struct PositionRequest : Empty {
  static constexpr Opcode kOpcode = Opcode::kPosition;
  using Reply = PositionReply;
};

template <typename Fn>
Status ForEachWireRecord(std::string_view body, RecordsBody* header, Fn&& fn) {
  auto cut = [] { return Status(Code::kProtocolError, "records body cut short"); };
  auto u64 = [&](size_t at) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(body[at + i]);
    return v;
  };
  if (body.size() < kRecordsHeaderBytes) return cut();
  header->first_lsn = u64(0);
  header->newest_lsn = u64(8);
  header->sent_us = static_cast<int64_t>(u64(16));
  const size_t count = static_cast<uint8_t>(body[24]) | size_t{static_cast<uint8_t>(body[25])} << 8;
  size_t at = kRecordsHeaderBytes;
  for (size_t i = 0; i < count; ++i) {
    if (body.size() - at < 3) return cut();
    const uint8_t type = static_cast<uint8_t>(body[at]);
    const size_t len =
        static_cast<uint8_t>(body[at + 1]) | size_t{static_cast<uint8_t>(body[at + 2])} << 8;
    at += 3;
    if (body.size() - at < len) return cut();
    RELGRAPH_RETURN_IF_ERROR(fn(header->first_lsn + i, type, body.substr(at, len)));
    at += len;
  }
  if (at != body.size()) return Status(Code::kProtocolError, "records body has trailing bytes");
  return Status::OK();
}

}  // namespace relgraph::net
