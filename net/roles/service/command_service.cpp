// CommandService's core: the handler rows, checked against the command table
// (net/protocol/command_table.h) at compile time, and running one command or a batch. The
// handlers are in <family>_commands.cpp.
#include "net/roles/service/command_service.h"

#include <algorithm>
#include <string>
#include <type_traits>

#include "net/protocol/command_table.h"
#include "net/protocol/protocol.h"
#include "net/roles/service/engine_wire.h"

namespace relgraph {
namespace {

using net::Opcode;

// The wire's batch limits are the engine's: clients split by the protocol's constants.
static_assert(net::kMaxPageLimit == kMaxPageLimit && net::kMaxRelationsIds == kMaxBatchSize,
              "docs/protocol.md, Limits: the engine's page and batch limits are the protocol's");

using Handler = net::ExecuteResult (*)(CommandService&, std::string_view, std::string*,
                                       const net::ServerStats&);

// Decodes a request body, naming the command in the error ("FOLLOW request: ...").
template <typename Req>
Status DecodeRequest(std::string_view body, Req* request) {
  // Built once per command: the request path allocates nothing for error texts it never uses.
  static const std::string what = std::string(net::OpcodeName(Req::kOpcode)) + " request";
  return net::WireDecode(body, request, what);
}

// Decode the request, run the handler, encode the reply: the same three steps for every row.
template <typename Req, auto Method>
net::ExecuteResult Run(CommandService& service, std::string_view body, std::string* out,
                       const net::ServerStats& stats) {
  Req request;
  if (Status s = DecodeRequest(body, &request); !s.ok()) return {s, 0};
  if (const ClusterGate* gate = service.cluster_gate(); gate != nullptr) {
    const net::Routing r = net::RoutingOf(request);
    if (r.user != 0) {
      if (Status s = gate->Admit(Req::kOpcode, r.user, r.viewer); !s.ok()) return {s, 0};
    }
  }
  CommandService::Context context;
  context.stats = &stats;
  auto reply = (service.*Method)(request, context);
  if (!reply.ok()) return {reply.status(), 0};
  net::WirePut(out, *reply);
  return {Status::OK(), context.ticket, std::move(context.subscription)};
}

struct Row {
  net::CommandSpec spec;
  Handler run;
};

// A row takes its opcode from the request struct and its name from the opcode list
// (net/protocol/protocol.h), so a command's name is written once; its request is the one its
// row in the command table (net/protocol/command_table.h) names.
template <typename Req, auto Method>
constexpr Row MakeRow(uint32_t flags) {
  static_assert(std::is_same_v<Req, typename net::RowOf<Req::kOpcode>::Body>,
                "a handler takes the request its command's row names");
  return Row{{static_cast<uint8_t>(Req::kOpcode), net::OpcodeName(Req::kOpcode), flags},
             &Run<Req, Method>};
}

// The handlers of the command table's requests: every one the engine serves, with how the
// server must run it (net/service.h). The requests it does not serve are kNotServed.
constexpr Row kHandlers[] = {
    MakeRow<net::InfoRequest, &CommandService::Info>(net::kCommandServerStats),
    MakeRow<net::ShardMapRequest, &CommandService::ShardMap>(net::kCommandReads),
    MakeRow<net::SnapshotRequest, &CommandService::Snapshot>(net::kCommandBackground),
    MakeRow<net::FollowRequest, &CommandService::Follow>(net::kCommandWrites |
                                                         net::kCommandBatches),
    MakeRow<net::UnfollowRequest, &CommandService::Unfollow>(net::kCommandWrites |
                                                             net::kCommandBatches),
    MakeRow<net::RelationRequest, &CommandService::Relation>(net::kCommandReads),
    MakeRow<net::RelationsRequest, &CommandService::Relations>(net::kCommandReads),
    MakeRow<net::FollowingRequest, &CommandService::Following>(net::kCommandReads),
    MakeRow<net::FansRequest, &CommandService::Fans>(net::kCommandReads),
    MakeRow<net::FriendsRequest, &CommandService::Friends>(net::kCommandReads),
    MakeRow<net::CountsRequest, &CommandService::Counts>(net::kCommandReads),
    MakeRow<net::KnownFollowersRequest, &CommandService::KnownFollowers>(net::kCommandReads),
    MakeRow<net::RemoveUserRequest, &CommandService::RemoveUser>(net::kCommandWrites),
    MakeRow<net::PublishRequest, &CommandService::Publish>(net::kCommandWrites),
    MakeRow<net::DeletePostRequest, &CommandService::DeletePost>(net::kCommandWrites),
    MakeRow<net::TimelineRequest, &CommandService::Timeline>(net::kCommandReads),
    MakeRow<net::UserPostsRequest, &CommandService::UserPosts>(net::kCommandReads),
    MakeRow<net::MuteRequest, &CommandService::Mute>(net::kCommandWrites),
    MakeRow<net::UnmuteRequest, &CommandService::Unmute>(net::kCommandWrites),
    MakeRow<net::HideRequest, &CommandService::Hide>(net::kCommandWrites),
    MakeRow<net::UnhideRequest, &CommandService::Unhide>(net::kCommandWrites),
    MakeRow<net::MutesRequest, &CommandService::Mutes>(net::kCommandReads),
    MakeRow<net::HidesRequest, &CommandService::Hides>(net::kCommandReads),
    MakeRow<net::SubscribeRequest, &CommandService::Subscribe>(net::kCommandSubscribes),
    MakeRow<net::FetchSnapshotRequest, &CommandService::FetchSnapshot>(net::kCommandSubscribes),
    MakeRow<net::AckRequest, &CommandService::Ack>(net::kCommandWrites),
    MakeRow<net::CursorsRequest, &CommandService::Cursors>(net::kCommandReads),
    MakeRow<net::DeleteCursorRequest, &CommandService::DeleteCursor>(net::kCommandWrites),
    MakeRow<net::ReplicateRequest, &CommandService::Replicate>(net::kCommandSubscribes),
    MakeRow<net::ReplicaAckRequest, &CommandService::ReplicaAck>(net::kCommandReads),
    MakeRow<net::PromoteRequest, &CommandService::Promote>(net::kCommandBackground),
    MakeRow<net::ReplicationRequest, &CommandService::ReplicationStatus>(net::kCommandReads),
    MakeRow<net::ReplicaOfRequest, &CommandService::ReplicaOf>(net::kCommandBackground),
    MakeRow<net::PositionRequest, &CommandService::Position>(net::kCommandReads),
    MakeRow<net::BlockRequest, &CommandService::Block>(net::kCommandWrites),
    MakeRow<net::UnblockRequest, &CommandService::Unblock>(net::kCommandWrites),
    MakeRow<net::BlocksRequest, &CommandService::Blocks>(net::kCommandReads),
    MakeRow<net::SetPrivateRequest, &CommandService::SetPrivate>(net::kCommandWrites),
    MakeRow<net::IsPrivateRequest, &CommandService::IsPrivate>(net::kCommandReads),
    MakeRow<net::RequestsRequest, &CommandService::Requests>(net::kCommandReads),
    MakeRow<net::ApproveRequest, &CommandService::Approve>(net::kCommandWrites),
    MakeRow<net::RejectRequest, &CommandService::Reject>(net::kCommandWrites),
    MakeRow<net::WithdrawRequest, &CommandService::Withdraw>(net::kCommandWrites),
};

// The requests of the command table this service does not handle, and why.
constexpr Opcode kNotServed[] = {
    Opcode::kHello,  // the server's own: the handshake (net/server/connection.cpp)
    Opcode::kPing,   // the server's own: answered on the io thread without the engine
    Opcode::kSlowlog,  // the server's own: its slow-command log (net/server/slow_log.h)
};

// Every request row of the command table has exactly one handler or is listed in kNotServed;
// a push (the server's frames: NOTICE, EVENTS, ...) has neither.
constexpr bool EveryRequestHandledOrNotServed() {
  for (const net::CommandInfo& c : net::kCommands) {
    size_t rows = 0;
    for (const Row& h : kHandlers) rows += h.spec.opcode == static_cast<uint8_t>(c.opcode) ? 1 : 0;
    for (Opcode o : kNotServed) rows += o == c.opcode ? 1 : 0;
    if (rows != (c.direction == net::Direction::kRequest ? 1u : 0u)) return false;
  }
  return true;
}
static_assert(EveryRequestHandledOrNotServed(),
              "every request of net/protocol/command_table.h has one handler here or is in "
              "kNotServed, and no push has either");

const Row* RowFor(uint8_t opcode) {
  static const auto index = [] {
    std::array<const Row*, 256> by_opcode{};
    for (const Row& row : kHandlers) by_opcode[row.spec.opcode] = &row;
    return by_opcode;
  }();
  return index[opcode];
}

}  // namespace

CommandService::CommandService(Db* db, Replication* replication)
    : db_(db), replication_(replication != nullptr ? replication : &own_replication_) {}

Status CommandService::WaitDurable(uint64_t ticket) {
  RELGRAPH_RETURN_IF_ERROR(db_->WaitDurable(ticket));
  return replication_->WaitReplicated(ticket);
}

const net::CommandSpec* CommandService::Find(uint8_t opcode) const {
  const Row* row = RowFor(opcode);
  return row == nullptr ? nullptr : &row->spec;
}

Status CommandService::RefuseOnReplica(const net::CommandSpec&) const {
  return Status(Code::kReadOnly, replication_->primary());  // docs/protocol.md: the address
}

net::ExecuteResult CommandService::Execute(const net::CommandSpec& spec, std::string_view body,
                                           std::string* reply, const net::ServerStats& stats) {
  ops_.fetch_add(1, std::memory_order_relaxed);
  if ((spec.flags & net::kCommandWrites) != 0 && replication_->refuses_writes()) {
    return {RefuseOnReplica(spec), 0};
  }
  net::ExecuteResult r = RowFor(spec.opcode)->run(*this, body, reply, stats);
  if ((spec.flags & net::kCommandWrites) != 0 && r.ticket == 0) r.ticket = NoOpTicket();
  return r;
}

uint64_t CommandService::NoOpTicket() const {
  // A write that logged nothing (FOLLOW of an edge that exists, UNFOLLOW of one that does not,
  // a refusal) answers from the state every record logged so far made; where an answer
  // promises durability, it waits until those records are as durable as a write's would be.
  // Otherwise a write retried after its first attempt's outcome was unknown could be told
  // "done" by a primary about to lose that attempt (it steps down, its tail discarded).
  const bool promises = db_->durability() == DurabilityMode::kAlways ||
                        replication_->sync_replicas() > 0 || replication_->fenced();
  return promises ? db_->last_lsn() : 0;
}

uint64_t CommandService::ExecuteBatch(std::span<net::BatchItem> items, std::string* replies) {
  ops_.fetch_add(items.size(), std::memory_order_relaxed);
  const bool replica = replication_->refuses_writes();
  // Decode every request; those that decode become the batch's writes, in order.
  std::vector<Db::BatchWrite> writes;
  writes.reserve(items.size());
  for (net::BatchItem& item : items) {
    if (replica) {
      item.status = RefuseOnReplica(*item.spec);
      continue;
    }
    Db::BatchWrite w;
    net::Routing route;  // as the command table routes it
    if (item.spec->opcode == static_cast<uint8_t>(Opcode::kFollow)) {
      net::FollowRequest q;
      item.status = DecodeRequest(item.body, &q);
      w = {Db::BatchWrite::Kind::kFollow, q.follower, q.followee, q.ts};
      route = net::RoutingOf(q);
    } else {
      net::UnfollowRequest q;
      item.status = DecodeRequest(item.body, &q);
      w = {Db::BatchWrite::Kind::kUnfollow, q.follower, q.followee, std::nullopt};
      route = net::RoutingOf(q);
    }
    if (item.status.ok() && gate_ != nullptr) {
      item.status = gate_->Admit(static_cast<Opcode>(item.spec->opcode), route.user, route.viewer);
    }
    if (item.status.ok()) writes.push_back(w);
  }
  std::vector<Db::BatchWriteResult> results(writes.size());
  uint64_t ticket = 0;
  if (!writes.empty()) db_->WriteBatch(writes, results, &ticket);
  if (ticket == 0 && !replica) ticket = NoOpTicket();  // every write was a no-op
  // Replies in request order; a request that did not decode has its error already.
  size_t next = 0;
  for (net::BatchItem& item : items) {
    if (item.status.ok()) {
      const Db::BatchWriteResult& r = results[next++];
      item.status = r.status;
      if (r.status.ok()) {
        if (item.spec->opcode == static_cast<uint8_t>(Opcode::kFollow)) {
          net::WirePut(replies, ToWire(r.follow));
        } else {
          net::WirePut(replies, net::UnfollowReply{r.removed});
        }
      }
    }
    item.reply_end = replies->size();
  }
  return ticket;
}

}  // namespace relgraph
