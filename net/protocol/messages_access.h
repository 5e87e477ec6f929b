// Blocks, private accounts and follow requests (docs/access.md, docs/protocol.md 0x40-0x48).
// Field order is wire order.
//
// Thread-safety: plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "net/protocol/messages_common.h"
#include "net/protocol/messages_graph.h"

namespace relgraph::net {

struct BlockReply {
  bool created = false;  // false: already blocked, nothing changed
  int64_t ts = 0;        // the block's time
  uint8_t removed = 0;   // bit 0: a -> b went, bit 1: b -> a went, bit 2: a request went
  RELGRAPH_WIRE_FIELDS(created, ts, removed)
};
struct BlockRequest {
  static constexpr Opcode kOpcode = Opcode::kBlock;
  using Reply = BlockReply;
  uint64_t user = 0;  // the blocker
  uint64_t blocked = 0;
  RELGRAPH_WIRE_FIELDS(user, blocked)
};

struct SetPrivateReply {
  bool changed = false;
  uint64_t approved = 0;  // requests approved by going public
  int64_t ts = 0;         // the change's time (0 when nothing changed)
  RELGRAPH_WIRE_FIELDS(changed, approved, ts)
};
struct SetPrivateRequest {
  static constexpr Opcode kOpcode = Opcode::kSetPrivate;
  using Reply = SetPrivateReply;
  uint64_t user = 0;
  bool is_private = false;
  RELGRAPH_WIRE_FIELDS(user, is_private)
};

struct IsPrivateReply {
  bool is_private = false;
  RELGRAPH_WIRE_FIELDS(is_private)
};
struct IsPrivateRequest {
  static constexpr Opcode kOpcode = Opcode::kIsPrivate;
  using Reply = IsPrivateReply;
  uint64_t user = 0;
  RELGRAPH_WIRE_FIELDS(user)
};

struct BlocksRequest : PageQuery {  // whom `user` blocks, newest first
  static constexpr Opcode kOpcode = Opcode::kBlocks;
  using Reply = CountedPageReply;
};
struct RequestsRequest : PageQuery {  // who asks to follow `user`, newest first
  static constexpr Opcode kOpcode = Opcode::kRequests;
  using Reply = CountedPageReply;
};

// Blocks and requests between two users (PairQuery's user, other): unblock: user lifts its
// block of other. approve, reject: user (the private account) answers other's request.
// withdraw: user takes back its request to other.
struct UnblockRequest : PairQuery {
  static constexpr Opcode kOpcode = Opcode::kUnblock;
  using Reply = ChangedReply;
};
struct ApproveRequest : PairQuery {  // reply: the new edge other -> user, as FOLLOW's
  static constexpr Opcode kOpcode = Opcode::kApprove;
  using Reply = FollowReply;
};
struct RejectRequest : PairQuery {
  static constexpr Opcode kOpcode = Opcode::kReject;
  using Reply = ChangedReply;
};
struct WithdrawRequest : PairQuery {
  static constexpr Opcode kOpcode = Opcode::kWithdraw;
  using Reply = ChangedReply;
};

}  // namespace relgraph::net
