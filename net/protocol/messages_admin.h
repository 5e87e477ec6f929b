// Session and admin messages (docs/protocol.md, "Handshake", "Commands", "Slow-command log"):
// HELLO, PING, INFO, SNAPSHOT, SHARD_MAP, SLOWLOG. Field order is wire order.
//
// Thread-safety: plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/protocol/messages_common.h"

namespace relgraph::net {

// A body holds exactly its fields (the decoder refuses trailing bytes), so HELLO's reply grows
// only with the protocol version the client asked for: a version-1 client gets HelloReplyV1,
// a version-2 client HelloReply, which appends server_version.
struct HelloReply {
  uint16_t version = kProtocolVersion;  // the version this connection speaks: the client's
  uint32_t max_frame = kDefaultMaxFrame;
  std::string server;          // "relgraphd"
  std::string server_version;  // "0.1.0"; empty from a server that speaks only version 1
  RELGRAPH_WIRE_FIELDS(version, max_frame, server, server_version)
};
struct HelloRequest {
  static constexpr Opcode kOpcode = Opcode::kHello;
  using Reply = HelloReply;
  uint16_t version = kProtocolVersion;
  std::string token;  // empty when the server needs none
  RELGRAPH_WIRE_FIELDS(version, token)
};
// Version 1 of the handshake: what a server that speaks only version 1 understands.
struct HelloReplyV1 {
  uint16_t version = 1;
  uint32_t max_frame = kDefaultMaxFrame;
  std::string server;
  RELGRAPH_WIRE_FIELDS(version, max_frame, server)
};
struct HelloRequestV1 {
  static constexpr Opcode kOpcode = Opcode::kHello;
  using Reply = HelloReplyV1;
  uint16_t version = 1;
  std::string token;
  RELGRAPH_WIRE_FIELDS(version, token)
};

struct PingRequest : Empty {
  static constexpr Opcode kOpcode = Opcode::kPing;
  using Reply = Empty;
};

struct InfoField {
  std::string name;
  uint64_t value = 0;
  RELGRAPH_WIRE_FIELDS(name, value)
};
struct InfoReply {
  std::vector<InfoField> fields;
  RELGRAPH_WIRE_FIELDS(fields)
  // The value of field `name`, if present.
  std::optional<uint64_t> Get(std::string_view name) const;
};
// INFO's `durability` field: the server's --fsync mode as a number.
enum class DurabilityCode : uint64_t { kAlways = 0, kEverySec = 1, kNone = 2 };
// "always", "everysec", "none"; "unknown" for any other value.
std::string_view DurabilityCodeName(uint64_t code);

struct InfoRequest : Empty {
  static constexpr Opcode kOpcode = Opcode::kInfo;
  using Reply = InfoReply;
};

// SHARD_MAP: the shard map a cluster's shard holds, so a client routes without a NATS library
// (docs/cluster.md, "Clients without NATS"): the versioned text form (net/cluster/placement.h,
// EncodeVersionedShardMap), which the client parses.
struct ShardMapReply {
  std::string map;
  RELGRAPH_WIRE_FIELDS(map)
};
struct ShardMapRequest : Empty {
  static constexpr Opcode kOpcode = Opcode::kShardMap;
  using Reply = ShardMapReply;
};

// SLOWLOG: the server's slow-command log (docs/protocol.md, "Slow-command log"): the commands
// that took at least the threshold, newest first.
struct SlowlogEntry {
  uint64_t id = 0;           // grows by one per entry the server keeps, from 1
  int64_t start_ms = 0;      // when the command started, ms since the Unix epoch
  uint64_t duration_us = 0;  // as /metrics measures it: decoding, executing, encoding
  std::string command;       // OpcodeName's ("follow"; "unknown" for an undefined opcode)
  std::string args;          // the request's fields rendered (request_text.h), at most 128 bytes
  std::string client;        // the peer's address, "HOST:PORT"
  RELGRAPH_WIRE_FIELDS(id, start_ms, duration_us, command, args, client)
  bool operator==(const SlowlogEntry&) const = default;
};
struct SlowlogReply {
  int64_t threshold_us = 0;  // the threshold in force; -1: the log is off
  uint32_t max_len = 0;      // the most entries it keeps
  std::vector<SlowlogEntry> entries;  // newest first
  RELGRAPH_WIRE_FIELDS(threshold_us, max_len, entries)
};
struct SlowlogRequest {
  static constexpr Opcode kOpcode = Opcode::kSlowlog;
  using Reply = SlowlogReply;
  uint16_t count = 0;  // the newest `count` entries; 0: all
  bool reset = false;  // then empty the log (the entries read are gone)
  RELGRAPH_WIRE_FIELDS(count, reset)
};

struct SnapshotReply {
  uint64_t lsn = 0;
  uint64_t edges = 0;
  uint64_t file_bytes = 0;
  int64_t created_ms = 0;
  RELGRAPH_WIRE_FIELDS(lsn, edges, file_bytes, created_ms)
};
struct SnapshotRequest : Empty {
  static constexpr Opcode kOpcode = Opcode::kSnapshot;
  using Reply = SnapshotReply;
};

}  // namespace relgraph::net
