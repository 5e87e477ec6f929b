// CommandService: the engine's side of net::Service, one table entry per command.
//
// Why this design: each command is three small pieces, as in the style guide: its wire structs
// (net/protocol/messages.h), one member function here that converts them to an engine call on the
// Db, and one row in the command table (opcode, name, flags). The server never sees an engine type
// and the engine never sees a socket.
//
// Thread-safety: thread-safe (the Db is; the counters are atomics).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

#include "engine/db.h"
#include "net/protocol/messages.h"
#include "net/roles/replication/replication.h"
#include "net/roles/service/cluster_gate.h"
#include "net/service.h"

namespace relgraph {

class CommandService final : public net::Service {
 public:
  // Neither is owned; both must outlive the service. Without `replication` the node is a
  // primary with no synchronous replicas.
  explicit CommandService(Db* db, Replication* replication = nullptr);

  const net::CommandSpec* Find(uint8_t opcode) const override;
  net::ExecuteResult Execute(const net::CommandSpec& spec, std::string_view body,
                             std::string* reply, const net::ServerStats& stats) override;
  // FOLLOW and UNFOLLOW (kCommandBatches): decoded one by one, run as one Db::WriteBatch.
  uint64_t ExecuteBatch(std::span<net::BatchItem> items, std::string* replies) override;
  // Durable in the local WAL, then (with --sync-replicas) on enough replicas.
  Status WaitDurable(uint64_t ticket) override;
  // Closes the Db too (OnShutdown returns that status): a durability wait held by a WAL that
  // cannot be written returns only once the Db is closed (Db::Close, WalWriter::Close).
  void OnStopping() override {
    replication_->Stop();
    if (gate_ != nullptr) gate_->Stop();
    db_->Close().IgnoreError();  // OnShutdown's Close returns the same status
  }
  // Makes this node a cluster shard: every command about a user passes `gate` first. Set
  // before serving; not owned, must outlive the service.
  void SetClusterGate(ClusterGate* gate) { gate_ = gate; }
  const ClusterGate* cluster_gate() const { return gate_; }
  Status OnShutdown() override { return db_->Close(); }

  // Per-command context the handlers fill or read.
  struct Context {
    uint64_t ticket = 0;
    const net::ServerStats* stats = nullptr;
    std::unique_ptr<net::Subscription> subscription;  // SUBSCRIBE's
  };

  // The handlers, one per command (public so the table can name them).
  Result<net::InfoReply> Info(const net::InfoRequest&, Context&);
  Result<net::ShardMapReply> ShardMap(const net::ShardMapRequest&, Context&);
  Result<net::SnapshotReply> Snapshot(const net::SnapshotRequest&, Context&);
  Result<net::FollowReply> Follow(const net::FollowRequest&, Context&);
  Result<net::UnfollowReply> Unfollow(const net::UnfollowRequest&, Context&);
  Result<net::RelationReply> Relation(const net::RelationRequest&, Context&);
  Result<net::RelationsReply> Relations(const net::RelationsRequest&, Context&);
  Result<net::PageReply> Following(const net::FollowingRequest&, Context&);
  Result<net::PageReply> Fans(const net::FansRequest&, Context&);
  Result<net::PageReply> Friends(const net::FriendsRequest&, Context&);
  Result<net::CountsReply> Counts(const net::CountsRequest&, Context&);
  Result<net::KnownFollowersReply> KnownFollowers(const net::KnownFollowersRequest&, Context&);
  Result<net::RemoveUserReply> RemoveUser(const net::RemoveUserRequest&, Context&);
  Result<net::PublishReply> Publish(const net::PublishRequest&, Context&);
  Result<net::Empty> DeletePost(const net::DeletePostRequest&, Context&);
  Result<net::FeedReply> Timeline(const net::TimelineRequest&, Context&);
  Result<net::FeedReply> UserPosts(const net::UserPostsRequest&, Context&);
  Result<net::ChangedReply> Mute(const net::MuteRequest&, Context&);
  Result<net::ChangedReply> Unmute(const net::UnmuteRequest&, Context&);
  Result<net::ChangedReply> Hide(const net::HideRequest&, Context&);
  Result<net::ChangedReply> Unhide(const net::UnhideRequest&, Context&);
  Result<net::UserListReply> Mutes(const net::MutesRequest&, Context&);
  Result<net::UserListReply> Hides(const net::HidesRequest&, Context&);
  Result<net::SubscribeReply> Subscribe(const net::SubscribeRequest&, Context&);
  Result<net::FetchSnapshotReply> FetchSnapshot(const net::FetchSnapshotRequest&, Context&);
  Result<net::Empty> Ack(const net::AckRequest&, Context&);
  Result<net::CursorsReply> Cursors(const net::CursorsRequest&, Context&);
  Result<net::Empty> DeleteCursor(const net::DeleteCursorRequest&, Context&);
  Result<net::ReplicateReply> Replicate(const net::ReplicateRequest&, Context&);
  Result<net::Empty> ReplicaAck(const net::ReplicaAckRequest&, Context&);
  Result<net::PromoteReply> Promote(const net::PromoteRequest&, Context&);
  Result<net::Empty> ReplicaOf(const net::ReplicaOfRequest&, Context&);
  Result<net::ReplicationReply> ReplicationStatus(const net::ReplicationRequest&, Context&);
  Result<net::PositionReply> Position(const net::PositionRequest&, Context&);
  // Blocks, private accounts, requests (access_commands.cpp).
  Result<net::BlockReply> Block(const net::BlockRequest&, Context&);
  Result<net::ChangedReply> Unblock(const net::UnblockRequest&, Context&);
  Result<net::CountedPageReply> Blocks(const net::BlocksRequest&, Context&);
  Result<net::SetPrivateReply> SetPrivate(const net::SetPrivateRequest&, Context&);
  Result<net::IsPrivateReply> IsPrivate(const net::IsPrivateRequest&, Context&);
  Result<net::CountedPageReply> Requests(const net::RequestsRequest&, Context&);
  Result<net::FollowReply> Approve(const net::ApproveRequest&, Context&);
  Result<net::ChangedReply> Reject(const net::RejectRequest&, Context&);
  Result<net::ChangedReply> Withdraw(const net::WithdrawRequest&, Context&);

 private:
  // kReadOnly for a write sent to a replica, naming the primary.
  Status RefuseOnReplica(const net::CommandSpec& spec) const;
  // The ticket of a write that logged nothing: its answer rests on every record logged so far.
  uint64_t NoOpTicket() const;
  uint64_t OpsPerSecond();

  Db* const db_;
  Replication own_replication_;  // used when none is given
  Replication* const replication_;
  ClusterGate* gate_ = nullptr;
  std::atomic<uint64_t> ops_{0};
  std::mutex rate_mu_;
  std::chrono::steady_clock::time_point window_start_ = std::chrono::steady_clock::now();
  uint64_t window_ops_ = 0;
  uint64_t last_rate_ = 0;
};

}  // namespace relgraph
