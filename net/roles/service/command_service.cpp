#include "net/roles/service/command_service.h"

#include <sys/resource.h>

#include <algorithm>
#include <string>
#include <type_traits>

#include "engine/graph/graph.h"
#include "engine/mem/resident.h"
#include "net/protocol/protocol.h"
#include "net/protocol/command_table.h"
#include "relgraph_version.h"
#include "net/roles/service/engine_wire.h"
#include "net/roles/service/event_subscription.h"
#include "net/roles/replication/record_subscription.h"
#include "net/roles/replication/snapshot_transfer.h"

namespace relgraph {
namespace {

using net::Opcode;

net::DurabilityCode ToWire(DurabilityMode mode) {
  switch (mode) {
    case DurabilityMode::kAlways:
      return net::DurabilityCode::kAlways;
    case DurabilityMode::kEverySec:
      return net::DurabilityCode::kEverySec;
    case DurabilityMode::kNone:
      return net::DurabilityCode::kNone;
  }
  return net::DurabilityCode::kEverySec;
}

// The wire's batch limits are the engine's: clients split by the protocol's constants.
static_assert(net::kMaxPageLimit == kMaxPageLimit && net::kMaxRelationsIds == kMaxBatchSize,
              "docs/protocol.md, Limits: the engine's page and batch limits are the protocol's");

// CPU time this process has used, user and system, in milliseconds.
uint64_t ProcessCpuMs() {
  rusage u{};
  if (::getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<uint64_t>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000 +
         static_cast<uint64_t>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1000;
}

FeedPageRequest ToFeedRequest(const net::FeedQuery& q) {
  FeedPageRequest r;
  r.limit = q.limit;
  if (q.after) r.after = PostKey{q.after->ts, q.after->post};
  r.kinds = q.kinds;
  return r;
}

net::FeedReply ToWire(const FeedPage& page) {
  net::FeedReply r;
  r.entries.reserve(page.entries.size());
  for (const FeedEntry& e : page.entries) r.entries.push_back({e.post, e.author, e.ts, e.kind});
  if (page.next) r.next = net::PostCursor{page.next->ts, page.next->post};
  return r;
}

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

Status CommandService::RefuseOnReplica(const net::CommandSpec& spec) const {
  return Status(Code::kReadOnly, "this node is a read-only replica of " + replication_->primary() +
                                     "; send " + std::string(spec.name) + " there");
}

net::ExecuteResult CommandService::Execute(const net::CommandSpec& spec, std::string_view body,
                                           std::string* reply, const net::ServerStats& stats) {
  ops_.fetch_add(1, std::memory_order_relaxed);
  if ((spec.flags & net::kCommandWrites) != 0 && replication_->is_replica()) {
    return {RefuseOnReplica(spec), 0};
  }
  return RowFor(spec.opcode)->run(*this, body, reply, stats);
}

uint64_t CommandService::ExecuteBatch(std::span<net::BatchItem> items, std::string* replies) {
  ops_.fetch_add(items.size(), std::memory_order_relaxed);
  const bool replica = replication_->is_replica();
  // Decode every request; those that decode become the batch's writes, in order.
  std::vector<Db::BatchWrite> writes;
  writes.reserve(items.size());
  for (net::BatchItem& item : items) {
    if (replica) {
      item.status = RefuseOnReplica(*item.spec);
      continue;
    }
    Db::BatchWrite w;
    if (item.spec->opcode == static_cast<uint8_t>(Opcode::kFollow)) {
      net::FollowRequest q;
      item.status = DecodeRequest(item.body, &q);
      w = {Db::BatchWrite::Kind::kFollow, q.follower, q.followee, q.ts};
    } else {
      net::UnfollowRequest q;
      item.status = DecodeRequest(item.body, &q);
      w = {Db::BatchWrite::Kind::kUnfollow, q.follower, q.followee, std::nullopt};
    }
    if (item.status.ok() && gate_ != nullptr) {
      item.status = gate_->Admit(static_cast<Opcode>(item.spec->opcode), w.a, 0);
    }
    if (item.status.ok()) writes.push_back(w);
  }
  std::vector<Db::BatchWriteResult> results(writes.size());
  uint64_t ticket = 0;
  if (!writes.empty()) db_->WriteBatch(writes, results, &ticket);
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

uint64_t CommandService::OpsPerSecond() {
  // The rate over the last whole window of at least one second, refreshed lazily.
  std::lock_guard lock(rate_mu_);
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - window_start_).count();
  if (seconds >= 1.0) {
    const uint64_t ops = ops_.load(std::memory_order_relaxed);
    last_rate_ = static_cast<uint64_t>(static_cast<double>(ops - window_ops_) / seconds);
    window_ops_ = ops;
    window_start_ = now;
  }
  return last_rate_;
}

Result<net::InfoReply> CommandService::Info(const net::InfoRequest&, Context& c) {
  net::InfoReply r;
  auto add = [&r](const char* name, uint64_t value) { r.fields.push_back({name, value}); };
  db_->Read([&](const Graph& g) {
    add("users", g.user_count());
    add("edges", g.edge_count());
    add("memory_bytes", g.Memory().total());
    return 0;
  });
  add("ops_total", ops_.load(std::memory_order_relaxed));
  add("ops_per_sec", OpsPerSecond());
  add("connections", c.stats->connections);
  add("connections_total", c.stats->connections_total);
  add("requests_total", c.stats->requests_total);
  add("uptime_ms", c.stats->uptime_ms);
  add("connection_bytes", c.stats->connection_bytes);
  add("rss_bytes", ResidentBytes());
  add("cpu_ms", ProcessCpuMs());
  add("last_lsn", db_->last_lsn());
  add("durable_lsn", db_->durable_lsn());
  add("durability", static_cast<uint64_t>(ToWire(db_->durability())));
  const auto cursors = db_->Cursors();
  add("cursors", cursors.size());
  add("cursors_expired",
      static_cast<uint64_t>(std::count_if(cursors.begin(), cursors.end(),
                                          [](const Db::CursorInfo& k) { return k.expired; })));
  add("oldest_wal_lsn", db_->OldestWalLsn());
  const auto snapshot = db_->last_snapshot();
  add("last_snapshot_lsn", snapshot ? snapshot->lsn : db_->recovery().snapshot_lsn);
  add("last_snapshot_ms", snapshot ? static_cast<uint64_t>(snapshot->created_ms) : 0);
  add("recovered_records", db_->recovery().replayed_records);
  const FeedStats feed = db_->feed_stats();
  add("posts", feed.posts);
  add("post_bytes", feed.post_bytes);
  add("post_index_bytes", feed.post_index_bytes);
  add("feed_user_bytes", feed.feed_user_bytes);
  add("inboxes", feed.inboxes);
  add("inbox_entries", feed.inbox_entries);
  add("inbox_bytes", feed.inbox_bytes);
  add("celebrities", feed.celebrities);
  add("fanout_queue", feed.fanout_queue);
  add("fanout_inserts", feed.fanout_inserts);
  const Epoch epoch = db_->epoch();
  add("role", replication_->is_replica() ? 1 : 0);
  add("epoch", epoch.number);
  add("replicas", replication_->Replicas().size());
  add("sync_replicas", replication_->sync_replicas());
  const Replication::Link link = replication_->link();
  const uint64_t last = db_->last_lsn();
  add("replica_lag_records",
      replication_->is_replica() && link.primary_lsn > last ? link.primary_lsn - last : 0);
  add("replica_lag_ms", replication_->is_replica() ? link.lag_ms : 0);
  // While the WAL cannot be written: 1 a full disk, 2 another I/O error.
  const Status wal = db_->WalHealth();
  add("writes_refused", wal.ok() ? 0 : 1);
  add("writes_refused_reason", wal.ok() ? 0 : IsNoSpace(wal) ? 1 : 2);
  add("server_version", kVersionNumber);  // major << 32 | minor << 16 | patch
  if (gate_ != nullptr) gate_->AddInfo(&r.fields);
  return r;
}

Result<net::SnapshotReply> CommandService::Snapshot(const net::SnapshotRequest&, Context&) {
  auto info = db_->Snapshot();
  if (!info.ok()) return info.status();
  return net::SnapshotReply{info->lsn, info->edges, info->file_bytes, info->created_ms};
}

Result<net::FollowReply> CommandService::Follow(const net::FollowRequest& q, Context& c) {
  auto r = q.ts ? db_->FollowAt(q.follower, q.followee, *q.ts, &c.ticket)
                : db_->Follow(q.follower, q.followee, &c.ticket);
  if (!r.ok()) return r.status();
  return ToWire(*r);
}

Result<net::UnfollowReply> CommandService::Unfollow(const net::UnfollowRequest& q, Context& c) {
  auto r = db_->Unfollow(q.follower, q.followee, &c.ticket);
  if (!r.ok()) return r.status();
  return net::UnfollowReply{*r};
}

Result<net::RelationReply> CommandService::Relation(const net::RelationRequest& q, Context&) {
  auto r = db_->Read([&](const Graph& g) { return g.GetRelation(q.a, q.b); });
  if (!r.ok()) return r.status();
  return net::RelationReply{ToWire(*r)};
}

Result<net::RelationsReply> CommandService::Relations(const net::RelationsRequest& q, Context&) {
  auto r = db_->Read([&](const Graph& g) { return g.GetRelations(q.a, q.others); });
  if (!r.ok()) return r.status();
  net::RelationsReply reply;
  reply.relations.reserve(r->size());
  for (relgraph::Relation rel : *r) reply.relations.push_back(ToWire(rel));
  return reply;
}

Result<net::PageReply> CommandService::Following(const net::FollowingRequest& q, Context&) {
  auto r = db_->Read([&](const Graph& g) { return g.Following(q.user, ToPageRequest(q)); });
  if (!r.ok()) return r.status();
  return ToWire(*r);
}

Result<net::PageReply> CommandService::Fans(const net::FansRequest& q, Context&) {
  auto r = db_->Read([&](const Graph& g) { return g.Fans(q.user, ToPageRequest(q)); });
  if (!r.ok()) return r.status();
  return ToWire(*r);
}

Result<net::PageReply> CommandService::Friends(const net::FriendsRequest& q, Context&) {
  auto r = db_->Read([&](const Graph& g) { return g.Friends(q.user, ToPageRequest(q)); });
  if (!r.ok()) return r.status();
  return ToWire(*r);
}

Result<net::CountsReply> CommandService::Counts(const net::CountsRequest& q, Context&) {
  auto r = db_->Read([&](const Graph& g) { return g.GetCounts(q.user); });
  if (!r.ok()) return r.status();
  return net::CountsReply{r->following, r->fans, r->friends};
}

Result<net::KnownFollowersReply> CommandService::KnownFollowers(const net::KnownFollowersRequest& q,
                                                                Context&) {
  auto r =
      db_->Read([&](const Graph& g) { return g.GetKnownFollowers(q.viewer, q.target, q.limit); });
  if (!r.ok()) return r.status();
  return net::KnownFollowersReply{r->total, r->users};
}

Result<net::RemoveUserReply> CommandService::RemoveUser(const net::RemoveUserRequest& q,
                                                        Context& c) {
  auto r = db_->RemoveUser(q.user, &c.ticket);
  if (!r.ok()) return r.status();
  return net::RemoveUserReply{*r};
}

// ---- feed ------------------------------------------------------------------------------------

Result<net::PublishReply> CommandService::Publish(const net::PublishRequest& q, Context& c) {
  auto r = db_->Publish(q.author, q.post, q.kind, q.ts, &c.ticket);
  if (!r.ok()) return r.status();
  return net::PublishReply{r->ts, r->retained, r->evicted};
}

Result<net::Empty> CommandService::DeletePost(const net::DeletePostRequest& q, Context& c) {
  RELGRAPH_RETURN_IF_ERROR(db_->DeletePost(q.author, q.post, &c.ticket));
  return net::Empty{};
}

Result<net::FeedReply> CommandService::Timeline(const net::TimelineRequest& q, Context&) {
  auto r = db_->Timeline(q.user, ToFeedRequest(q));
  if (!r.ok()) return r.status();
  return ToWire(*r);
}

Result<net::FeedReply> CommandService::UserPosts(const net::UserPostsRequest& q, Context&) {
  auto r = db_->UserPosts(q.user, ToFeedRequest(q));
  if (!r.ok()) return r.status();
  return ToWire(*r);
}

Result<net::ChangedReply> CommandService::Mute(const net::MuteRequest& q, Context& c) {
  return ToChanged(db_->Mute(q.user, q.other, true, &c.ticket));
}

Result<net::ChangedReply> CommandService::Unmute(const net::UnmuteRequest& q, Context& c) {
  return ToChanged(db_->Mute(q.user, q.other, false, &c.ticket));
}

Result<net::ChangedReply> CommandService::Hide(const net::HideRequest& q, Context& c) {
  return ToChanged(db_->Hide(q.user, q.other, true, &c.ticket));
}

Result<net::ChangedReply> CommandService::Unhide(const net::UnhideRequest& q, Context& c) {
  return ToChanged(db_->Hide(q.user, q.other, false, &c.ticket));
}

Result<net::UserListReply> CommandService::Mutes(const net::MutesRequest& q, Context&) {
  auto r = db_->Mutes(q.user);
  if (!r.ok()) return r.status();
  return net::UserListReply{std::move(*r)};
}

Result<net::UserListReply> CommandService::Hides(const net::HidesRequest& q, Context&) {
  auto r = db_->Hides(q.user);
  if (!r.ok()) return r.status();
  return net::UserListReply{std::move(*r)};
}

// ---- the change stream ------------------------------------------------------------------------

Result<net::SubscribeReply> CommandService::Subscribe(const net::SubscribeRequest& q, Context& c) {
  const ChangeKindMask kinds = q.kinds == 0 ? kAllChangeKinds : q.kinds;
  RELGRAPH_RETURN_IF_ERROR(ValidateChangeKindMask(kinds));
  uint64_t from = 0;
  switch (q.from) {
    case net::SubscribeFrom::kLsn:
      if (q.lsn == 0) return Status::InvalidArgument("subscribe from LSN 0: LSNs start at 1");
      from = q.lsn;
      break;
    case net::SubscribeFrom::kNow:
      if (q.lsn != 0) {
        return Status::InvalidArgument("subscribe from now takes LSN 0, got " +
                                       std::to_string(q.lsn));
      }
      from = Db::kChangesFromNow;
      break;
    case net::SubscribeFrom::kCursor: {
      if (q.lsn != 0) {
        return Status::InvalidArgument("subscribe from a cursor takes LSN 0, got " +
                                       std::to_string(q.lsn));
      }
      auto resume = db_->CursorResumeLsn(q.name);
      if (!resume.ok()) return resume.status();
      from = *resume;
      break;
    }
    default:
      return Status::InvalidArgument("subscribe: unknown start " +
                                     std::to_string(static_cast<int>(q.from)) +
                                     " (0 from an LSN, 1 from now, 2 from a named cursor)");
  }
  if (!q.name.empty() && q.from != net::SubscribeFrom::kCursor) {
    return Status::InvalidArgument("a cursor name goes with from 2 (from the named cursor)");
  }
  auto reader = db_->OpenChanges(from, kinds);
  if (!reader.ok()) return reader.status();
  net::SubscribeReply reply{(*reader)->next_lsn(), db_->last_lsn()};
  c.subscription = std::make_unique<EventSubscription>(std::move(*reader));
  return reply;
}

Result<net::FetchSnapshotReply> CommandService::FetchSnapshot(const net::FetchSnapshotRequest&,
                                                              Context& c) {
  auto snapshot = db_->OpenNewestSnapshot();
  if (!snapshot.ok()) return snapshot.status();
  net::FetchSnapshotReply reply{snapshot->lsn, snapshot->file_bytes};
  c.subscription = std::make_unique<SnapshotTransfer>(std::move(*snapshot));
  return reply;
}

Result<net::Empty> CommandService::Ack(const net::AckRequest& q, Context& c) {
  RELGRAPH_RETURN_IF_ERROR(db_->AckCursor(q.name, q.lsn, &c.ticket));
  return net::Empty{};
}

Result<net::CursorsReply> CommandService::Cursors(const net::CursorsRequest&, Context&) {
  net::CursorsReply reply;
  for (const Db::CursorInfo& k : db_->Cursors()) {
    reply.cursors.push_back({k.name, k.acked_lsn, k.acked_ms, k.expired});
  }
  return reply;
}

Result<net::Empty> CommandService::DeleteCursor(const net::DeleteCursorRequest& q, Context& c) {
  RELGRAPH_RETURN_IF_ERROR(db_->RemoveCursor(q.name, &c.ticket));
  return net::Empty{};
}

// ---- replication ------------------------------------------------------------------------------

Result<net::ReplicateReply> CommandService::Replicate(const net::ReplicateRequest& q, Context& c) {
  if (q.from_lsn == 0) return Status::InvalidArgument("replicate from LSN 0: LSNs start at 1");
  if (q.name.empty()) return Status::InvalidArgument("replicate: the replica must name itself");
  RELGRAPH_RETURN_IF_ERROR(db_->CheckFollower(q.epoch, q.epoch_id, q.from_lsn - 1));
  auto reader = db_->OpenChanges(q.from_lsn);
  if (!reader.ok()) return reader.status();
  const Epoch epoch = db_->epoch();
  net::ReplicateReply reply{epoch.number, epoch.id, db_->last_lsn()};
  c.subscription =
      std::make_unique<RecordSubscription>(db_, std::move(*reader), replication_, q.name);
  return reply;
}

Result<net::Empty> CommandService::ReplicaAck(const net::ReplicaAckRequest& q, Context&) {
  replication_->Ack(q.name, q.applied_lsn, q.durable_lsn);
  return net::Empty{};
}

Result<net::PromoteReply> CommandService::Promote(const net::PromoteRequest& q, Context&) {
  if (!replication_->is_replica()) {
    return Status::InvalidArgument("this node is already a primary (epoch " +
                                   std::to_string(db_->epoch().number) + ")");
  }
  if (!q.force) RELGRAPH_RETURN_IF_ERROR(replication_->CheckPromotion());
  replication_->StopFollowingAndBecomePrimary();
  auto epoch = db_->StartEpoch();
  if (!epoch.ok()) return epoch.status();
  return net::PromoteReply{epoch->number, epoch->id, epoch->first_lsn};
}

Result<net::ReplicationReply> CommandService::ReplicationStatus(const net::ReplicationRequest&,
                                                                Context&) {
  net::ReplicationReply r;
  const Epoch epoch = db_->epoch();
  r.epoch = epoch.number;
  r.epoch_id = epoch.id;
  r.applied_lsn = db_->last_lsn();
  r.sync_replicas = replication_->sync_replicas();
  r.replicas = replication_->Replicas();
  if (replication_->is_replica()) {
    const Replication::Link link = replication_->link();
    r.role = net::ReplicationRole::kReplica;
    r.primary = replication_->primary();
    r.state = link.state;
    r.message = link.message;
    r.primary_lsn = link.primary_lsn;
    r.lag_ms = link.lag_ms;
  } else {
    r.state = "primary";
    r.primary_lsn = r.applied_lsn;
  }
  return r;
}

}  // namespace relgraph
