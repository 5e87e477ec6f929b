// The command table: one row per opcode of the protocol (docs/protocol.md), the one place that
// says what a command is beyond its bytes. A row names:
//
//   the request struct      (net/protocol/messages_*.h; a push row names the body it carries)
//   its family              graph, feed, access, stream, replication, admin, session
//   who sends it            a client (a request) or the server only (a push: EVENTS, ...)
//   whether a cluster runs it   a shard answers it for the users of its buckets (ClusterGate);
//                           the others are refused by a shard, or answered by the shard asked
//                           when they are about no user
//   what routes it          RouteBy<&Req::user_member, &Req::viewer_member> (routing.h)
//
// Its name is OpcodeName's (protocol.h): each command's name is written once.
//
// Why this design: a cluster's commands, each request's routing, the engine's handlers and the
// CLI's commands are lists of the same commands, and lists kept apart drift (a request with a
// field named `user` would be routed by it without anyone deciding so). So there is one list,
// and every other one reads it or is checked against it: a static_assert below proves every
// opcode has exactly one row; the command service (net/roles/service) proves at compile time
// that it handles every request row or says it serves it not; the shard's gate reads
// `cluster`; RoutingOf (the service's gate check, ClusterClient) reads the routing; the CLI's
// test checks its commands against it and the decoder's fuzz target walks it. net/ knows no
// engine type, so the engine's handlers and their flags stay in the service's rows.
//
// Thread-safety: constants and pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "net/protocol/command_class.h"
#include "net/protocol/messages.h"
#include "net/protocol/protocol.h"
#include "net/protocol/routing.h"

namespace relgraph::net {

enum class Family : uint8_t {
  kSession,      // the connection itself: hello, ping, notice
  kAdmin,        // the node: info, snapshot
  kGraph,        // follows and what is read from them (docs/design.md)
  kFeed,         // posts, timelines, mutes and hides (docs/feed.md)
  kAccess,       // blocks, private accounts, follow requests (docs/access.md)
  kStream,       // the change stream, named cursors, snapshot transfer (docs/change-stream.md)
  kReplication,  // a replica's link to its primary, promotion (docs/replication.md)
};
// "session", "admin", "graph", ...
constexpr std::string_view FamilyName(Family f) {
  constexpr std::string_view kNames[] = {"session", "admin",  "graph",      "feed",
                                         "access",  "stream", "replication"};
  return kNames[static_cast<size_t>(f)];
}

enum class Direction : uint8_t {
  kRequest,  // a client sends it; the server replies with the same opcode
  kPush,     // the server sends it only (request_id 0 or the request that started it)
};

// A cluster's shard runs the command for the users of its buckets (or it does not).
enum class InCluster : bool { kNo = false, kYes = true };

// A push row's body that is not a wire struct (SNAPSHOT_DATA's raw file bytes).
struct RawBody {};

// A request row. `Req` names its opcode (Req::kOpcode) and its reply (Req::Reply).
template <typename Req, Family F, InCluster C, typename Route = NoRoute>
struct RequestRow {
  using Body = Req;
  using Routes = Route;
  static constexpr Opcode kOpcode = Req::kOpcode;
  static constexpr Family kFamily = F;
  static constexpr Direction kDirection = Direction::kRequest;
  static constexpr bool kCluster = C == InCluster::kYes;
};

// A push row: frames only the server sends, with the body they carry.
template <Opcode Op, Family F, typename B>
struct PushRow {
  using Body = B;
  using Routes = NoRoute;
  static constexpr Opcode kOpcode = Op;
  static constexpr Family kFamily = F;
  static constexpr Direction kDirection = Direction::kPush;
  static constexpr bool kCluster = false;
};

template <typename... Rows>
struct RowList {};

// clang-format off
using CommandTable = RowList<
    // ---- session and admin: about no user; a shard answers them for itself ----
    PushRow<Opcode::kNotice, Family::kSession, ErrorBody>,
    RequestRow<HelloRequest, Family::kSession, InCluster::kNo>,
    RequestRow<PingRequest, Family::kSession, InCluster::kNo>,
    RequestRow<InfoRequest, Family::kAdmin, InCluster::kNo>,
    RequestRow<SnapshotRequest, Family::kAdmin, InCluster::kNo>,
    RequestRow<ShardMapRequest, Family::kAdmin, InCluster::kNo>,
    RequestRow<SlowlogRequest, Family::kAdmin, InCluster::kNo>,
    // ---- the graph ----
    RequestRow<FollowRequest, Family::kGraph, InCluster::kYes, RouteBy<&FollowRequest::follower>>,
    RequestRow<UnfollowRequest, Family::kGraph, InCluster::kYes, RouteBy<&UnfollowRequest::follower>>,
    RequestRow<RelationRequest, Family::kGraph, InCluster::kYes, RouteBy<&RelationRequest::a>>,
    RequestRow<RelationsRequest, Family::kGraph, InCluster::kYes, RouteBy<&RelationsRequest::a>>,
    RequestRow<FollowingRequest, Family::kGraph, InCluster::kYes, RouteBy<&PageQuery::user, &PageQuery::viewer>>,
    RequestRow<FansRequest, Family::kGraph, InCluster::kYes, RouteBy<&PageQuery::user, &PageQuery::viewer>>,
    RequestRow<FriendsRequest, Family::kGraph, InCluster::kYes, RouteBy<&PageQuery::user, &PageQuery::viewer>>,
    RequestRow<CountsRequest, Family::kGraph, InCluster::kYes, RouteBy<&CountsRequest::user>>,
    // the viewer's follows and the target's fans: a shard runs it with both here
    RequestRow<KnownFollowersRequest, Family::kGraph, InCluster::kYes,
               RouteBy<&KnownFollowersRequest::viewer, &KnownFollowersRequest::target>>,
    RequestRow<RemoveUserRequest, Family::kGraph, InCluster::kYes, RouteBy<&RemoveUserRequest::user>>,
    // ---- the feed ----
    RequestRow<PublishRequest, Family::kFeed, InCluster::kYes, RouteBy<&PublishRequest::author>>,
    RequestRow<DeletePostRequest, Family::kFeed, InCluster::kYes, RouteBy<&DeletePostRequest::author>>,
    RequestRow<TimelineRequest, Family::kFeed, InCluster::kYes, RouteBy<&FeedQuery::user>>,
    RequestRow<UserPostsRequest, Family::kFeed, InCluster::kYes, RouteBy<&FeedQuery::user>>,
    RequestRow<MuteRequest, Family::kFeed, InCluster::kYes, RouteBy<&PairQuery::user>>,
    RequestRow<UnmuteRequest, Family::kFeed, InCluster::kYes, RouteBy<&PairQuery::user>>,
    RequestRow<HideRequest, Family::kFeed, InCluster::kYes, RouteBy<&PairQuery::user>>,
    RequestRow<UnhideRequest, Family::kFeed, InCluster::kYes, RouteBy<&PairQuery::user>>,
    RequestRow<MutesRequest, Family::kFeed, InCluster::kYes, RouteBy<&MutesRequest::user>>,
    RequestRow<HidesRequest, Family::kFeed, InCluster::kYes, RouteBy<&HidesRequest::user>>,
    // ---- the change stream: about no user, not run by a cluster yet ----
    RequestRow<SubscribeRequest, Family::kStream, InCluster::kNo>,
    PushRow<Opcode::kEvents, Family::kStream, EventsBody>,
    RequestRow<FetchSnapshotRequest, Family::kStream, InCluster::kNo>,
    PushRow<Opcode::kSnapshotData, Family::kStream, RawBody>,
    RequestRow<AckRequest, Family::kStream, InCluster::kNo>,
    RequestRow<CursorsRequest, Family::kStream, InCluster::kNo>,
    RequestRow<DeleteCursorRequest, Family::kStream, InCluster::kNo>,
    // ---- replication: about no user, not run by a cluster yet ----
    RequestRow<ReplicateRequest, Family::kReplication, InCluster::kNo>,
    PushRow<Opcode::kRecords, Family::kReplication, RecordsBody>,
    RequestRow<ReplicaAckRequest, Family::kReplication, InCluster::kNo>,
    RequestRow<PromoteRequest, Family::kReplication, InCluster::kNo>,
    RequestRow<ReplicationRequest, Family::kReplication, InCluster::kNo>,
    RequestRow<ReplicaOfRequest, Family::kReplication, InCluster::kNo>,
    RequestRow<PositionRequest, Family::kReplication, InCluster::kNo>,
    // ---- blocks, private accounts, follow requests ----
    RequestRow<BlockRequest, Family::kAccess, InCluster::kYes, RouteBy<&BlockRequest::user>>,
    RequestRow<UnblockRequest, Family::kAccess, InCluster::kYes, RouteBy<&PairQuery::user>>,
    RequestRow<BlocksRequest, Family::kAccess, InCluster::kYes, RouteBy<&PageQuery::user, &PageQuery::viewer>>,
    RequestRow<SetPrivateRequest, Family::kAccess, InCluster::kYes, RouteBy<&SetPrivateRequest::user>>,
    RequestRow<IsPrivateRequest, Family::kAccess, InCluster::kYes, RouteBy<&IsPrivateRequest::user>>,
    RequestRow<RequestsRequest, Family::kAccess, InCluster::kYes, RouteBy<&PageQuery::user, &PageQuery::viewer>>,
    RequestRow<ApproveRequest, Family::kAccess, InCluster::kYes, RouteBy<&PairQuery::user>>,
    RequestRow<RejectRequest, Family::kAccess, InCluster::kYes, RouteBy<&PairQuery::user>>,
    RequestRow<WithdrawRequest, Family::kAccess, InCluster::kYes, RouteBy<&PairQuery::user>>>;
// clang-format on

// A row as plain data, for code that looks commands up by opcode at run time.
struct CommandInfo {
  Opcode opcode;
  std::string_view name;  // OpcodeName's
  Family family;
  Direction direction;
  bool cluster;        // a cluster's shard runs it
  bool routed;         // RouteBy names the member that holds its user
  bool reads_viewer;   // ... and the one that holds a second user it reads
};

namespace command_table_internal {
template <typename... Rows>
constexpr auto InfosOf(RowList<Rows...>) {
  return std::array<CommandInfo, sizeof...(Rows)>{
      CommandInfo{Rows::kOpcode, OpcodeName(Rows::kOpcode), Rows::kFamily, Rows::kDirection,
                  Rows::kCluster, Rows::Routes::kRouted, Rows::Routes::kReadsViewer}...};
}
template <typename List>
struct AsTuple;
template <typename... Rows>
struct AsTuple<RowList<Rows...>> {
  using type = std::tuple<Rows...>;
};
}  // namespace command_table_internal

// Every row, in table order.
inline constexpr auto kCommands = command_table_internal::InfosOf(CommandTable{});

// The row of `opcode`; nullptr for a value the protocol does not define.
constexpr const CommandInfo* FindCommand(uint8_t opcode) {
  for (const CommandInfo& c : kCommands) {
    if (static_cast<uint8_t>(c.opcode) == opcode) return &c;
  }
  return nullptr;
}
constexpr const CommandInfo& CommandOf(Opcode opcode) {
  return *FindCommand(static_cast<uint8_t>(opcode));
}

// Whether a client may send a request again when it cannot know whether the first attempt
// was carried out (the connection dropped after it was sent; a primary stepped down before
// acknowledging it): true when doing it twice leaves the state doing it once leaves. The
// second reply may differ (FOLLOW's created=false: the first attempt made the edge). PROMOTE
// starts a new epoch each time; the requests that start a stream belong to their connection.
constexpr bool RetrySafe(Opcode op) {
  switch (op) {
    case Opcode::kHello:
    case Opcode::kPromote:
    case Opcode::kSubscribe:
    case Opcode::kReplicate:
    case Opcode::kFetchSnapshot:
      return false;
    default:
      return true;
  }
}

// Whether a request belongs to its connection: HELLO opens it; SUBSCRIBE and FETCH_SNAPSHOT
// start a stream of frames the server pushes on it; REPLICATE and REPLICA_ACK are a replica's
// link. The others are one request, one reply: what the HTTP JSON API serves (docs/http.md).
constexpr bool ConnectionBound(Opcode op) {
  switch (op) {
    case Opcode::kHello:
    case Opcode::kSubscribe:
    case Opcode::kFetchSnapshot:
    case Opcode::kReplicate:
    case Opcode::kReplicaAck:
      return true;
    default:
      return false;
  }
}

// Whether a request only reads (a replica answers it; every other request a client sends
// goes to the primary), by its class (command_class.h). The service's rows agree
// (tests/net/roles/service/). No admin command is a read: SLOWLOG may empty the node's log,
// and it is about one node, so a routed client asks the primary (to read a replica's, connect
// to that replica).
constexpr bool ReadsOnly(Opcode op) {
  switch (ClassOf(op)) {
    case CommandClass::kProbe:
    case CommandClass::kRead:
    case CommandClass::kReadReplication:
    case CommandClass::kStreamRead:
      return true;
    case CommandClass::kServerOnly:
    case CommandClass::kOpen:
    case CommandClass::kWrite:
    case CommandClass::kStream:
    case CommandClass::kStreamReplication:
    case CommandClass::kReplicaLink:
    case CommandClass::kAdmin:
      return false;
  }
  return false;
}

// The compile-time checks: every opcode the protocol defines (protocol.h) has exactly one row,
// and the rows are consistent.
namespace command_table_internal {
constexpr bool EveryOpcodeHasExactlyOneRow() {
  for (unsigned v = 0; v < 256; ++v) {
    size_t rows = 0;
    for (const CommandInfo& c : kCommands) rows += static_cast<uint8_t>(c.opcode) == v ? 1 : 0;
    const bool defined = OpcodeName(static_cast<uint8_t>(v)) != "unknown";
    if (rows != (defined ? 1u : 0u)) return false;
  }
  return true;
}
constexpr bool ClusterCommandsAreRouted() {
  for (const CommandInfo& c : kCommands) {
    if (c.cluster && !c.routed) return false;  // a shard could not tell whose it is
    if (c.direction == Direction::kPush && (c.cluster || c.routed)) return false;
  }
  return true;
}
// A request row is placed in ClassOf by name (one left out falls to its final return), and a
// push row is server-only.
constexpr bool EveryRowClassed() {
  for (const CommandInfo& c : kCommands) {
    const bool server_only = ClassOf(c.opcode) == CommandClass::kServerOnly;
    if (server_only != (c.direction == Direction::kPush)) return false;
  }
  return true;
}
}  // namespace command_table_internal
static_assert(command_table_internal::EveryOpcodeHasExactlyOneRow(),
              "every opcode of RELGRAPH_OPCODES (protocol.h) has exactly one row in CommandTable");
static_assert(command_table_internal::ClusterCommandsAreRouted(),
              "a command a cluster runs declares what routes it; a push row routes nothing");
static_assert(command_table_internal::EveryRowClassed(),
              "a request opcode has no class: place it in ClassOf (command_class.h)");

// The row (a RequestRow or PushRow type) of `Op`.
template <Opcode Op>
using RowOf = std::tuple_element_t<
    static_cast<size_t>(&CommandOf(Op) - kCommands.data()),
    typename command_table_internal::AsTuple<CommandTable>::type>;

// Calls fn.template operator()<Row>() for every row, in table order.
template <typename Fn>
constexpr void ForEachCommand(Fn&& fn) {
  [&]<typename... Rows>(RowList<Rows...>) { (fn.template operator()<Rows>(), ...); }(
      CommandTable{});
}

// The users request `r` is routed by, as its row declares (routing.h). A request of another
// version of a row's opcode (HelloRequestV1) routes as its row when that routes nothing.
template <typename Req>
Routing RoutingOf(const Req& r) {
  using Row = RowOf<Req::kOpcode>;
  static_assert(Row::kDirection == Direction::kRequest, "a push is not routed");
  static_assert(std::is_same_v<Req, typename Row::Body> || !Row::Routes::kRouted,
                "RoutingOf a request that is not its opcode's row");
  return Row::Routes::Of(r);
}

}  // namespace relgraph::net
