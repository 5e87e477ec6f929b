// ClusterClient: a client of a relgraph cluster (docs/cluster.md). It reads the shard map from
// NATS JetStream and sends each command to the shard that owns the command's user
// (net/protocol/command_table.h). A page with a viewer on another shard is fetched without the
// viewer, then completed with one RELATIONS call to the viewer's shard. A shard that answers
// `moved` (the map changed under the client) makes the client read the map again and retry,
// so a stale client corrects itself. A shard that answers `moving` (it is taking the user's
// bucket over), or `moved` while the map just read gives it the user (its own map lags the
// key's), is asked again shortly, for up to moving_wait. A page with a viewer, or a
// KNOWN_FOLLOWERS, sent to one shard because the map held put both its users there, is asked
// across their two shards when a `moved` answer brings a map that parts them (a move took one
// away): planned again once, never waited on as a lagging shard.
//
// A shard served by a replication group (the map lists its members) is asked at its primary:
// the member that answers INFO as one. A member that refuses with read_only (it is a replica
// now), a broken connection or a primary that stepped down sends the client to the members
// again, for up to failover_timeout; a command whose outcome became unknown is sent again
// only when it is retry-safe (RetrySafe, command_table.h), as GroupClient does.
//
// Barrier waits until every change made before it is applied on every shard it concerns:
// afterwards every read equals what one node holding every change would answer.
//
// Thread-safety: one ClusterClient per thread (it holds one connection per shard).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "net/client/client.h"
#include "net/client/typed_calls.h"
#include "net/cluster/nats_link.h"
#include "net/cluster/placement.h"
#include "net/protocol/command_table.h"

namespace relgraph::net {

struct ClusterClientOptions {
  std::string nats_url = "nats://127.0.0.1:4222";
  ClusterNames names;
  ClientOptions client;   // token and timeouts for every shard (host and port come from the map)
  int max_redirects = 3;  // `moved` answers followed per command before giving up
  // How long a command about a user of a bucket that is moving is retried (a shard answers
  // `moving` while it takes the bucket over, or `moved` until it sees the map that gives it
  // the bucket) before its error is returned.
  std::chrono::milliseconds moving_wait{30000};
  // How long a command to a shard served by a replication group waits for the group to have
  // a primary (a failover or a switchover) before its error is returned.
  std::chrono::milliseconds failover_timeout{10000};
};

class ClusterClient : public TypedCalls<ClusterClient> {
 public:
  // Connects to NATS and reads the map (kNotFound without one). Shards are connected to on
  // first use.
  static Result<std::unique_ptr<ClusterClient>> Connect(const ClusterClientOptions& options);

  // Any single-user command, routed by RoutingOf(request).user (a request about no user is
  // kInvalidArgument: send it to a shard with ShardClient). A page with a viewer and
  // KNOWN_FOLLOWERS are sent whole to that shard: their methods below ask across two shards.
  template <typename Request>
  Result<typename Request::Reply> Call(const Request& request) {
    const Routing r = RoutingOf(request);
    if (r.user == 0) {
      return Status::InvalidArgument(std::string(OpcodeName(Request::kOpcode)) +
                                     " is about no user: ask a shard (ShardClient)");
    }
    return Routed<typename Request::Reply>(r.user, Request::kOpcode,
                                           [&](Client& c) { return c.Call(request); });
  }

  // Follow, Unfollow, Relation, Relations, Counts, RemoveUser, the feed's calls, Block,
  // Unblock, SetPrivate, IsPrivate, Approve, Reject, Withdraw: TypedCalls', routed by Call.
  // Pages; with a viewer on another shard, its relation to each entry comes from its shard.
  Result<PageReply> Following(const PageQuery& query);
  Result<PageReply> Fans(const PageQuery& query);
  Result<PageReply> Friends(const PageQuery& query);
  Result<CountedPageReply> Blocks(const PageQuery& query);    // whom query.user blocks
  Result<CountedPageReply> Requests(const PageQuery& query);  // who asks to follow query.user
  // Whom the viewer follows that follow the target, newest first by the viewer's follow. With
  // both on one shard, that shard answers; else the viewer's following list (its shard) is
  // checked with one RELATIONS call to the target's shard. Either way the follows of the
  // target lag as fans lists do (docs/cluster.md).
  Result<KnownFollowersReply> KnownFollowers(uint64_t viewer, uint64_t target, uint16_t limit);

  // Waits until every change logged on any shard is applied wherever it must be: the shards'
  // INFO, polled, shows every outbox past its shard's last LSN and every inbox with nothing
  // pending, twice in a row with nothing logged between. It waits for the cluster to be
  // quiet, so writers must pause meanwhile (tests, an operator's check). A shard that does
  // not answer (restarting) is waited for too; kTimeout after `timeout`.
  Status Barrier(std::chrono::milliseconds timeout = std::chrono::milliseconds(30000));

  // Runs fn(Client&) on the shard that owns `user`, following `moved` and a group's primary
  // as Call does (a tool that sends its own requests: relgraph-cli --cluster); what fn sends
  // is taken as not retry-safe.
  template <typename Reply, typename Fn>
  Result<Reply> OnOwnerOf(uint64_t user, Fn&& fn) {
    return Routed<Reply>(user, std::nullopt, std::forward<Fn>(fn));
  }
  // Reads the map from NATS again (after `moved`, or to see a bucket move).
  Status RefreshMap();
  const ShardMap& map() const { return map_; }
  // The connection to shard `id`, opened on first use, and opened again when the one held
  // broke (a caller polling a shard that restarts reaches the new process).
  Result<Client*> ShardClient(uint32_t id);
  // Each shard's INFO fields by name.
  Result<std::map<uint32_t, std::map<std::string, uint64_t>>> ShardInfos();

 private:
  explicit ClusterClient(ClusterClientOptions options) : options_(std::move(options)) {}
  // Runs fn on the owner of `user`, following `moved` (after reading the map again), a
  // group's primary, and reconnecting once after a dropped connection. `op`: what fn sends,
  // when known (whether it may be sent again after its outcome became unknown). `also`: a
  // second user the request reads, which the shard asked must own as well (0: none); when a
  // `moved` answer brings a map that gives it another shard than `user`'s, no shard answers
  // the request as it is: that answer is returned and *parted set (the caller asks across
  // the two shards). REQUIRES: parted != nullptr when also != 0.
  template <typename Reply, typename Fn>
  Result<Reply> Routed(uint64_t user, std::optional<Opcode> op, Fn&& fn, uint64_t also = 0,
                       bool* parted = nullptr) {
    Status last;
    std::optional<std::chrono::steady_clock::time_point> moving_since, failover_since;
    for (int attempt = 0; attempt <= options_.max_redirects; ++attempt) {
      const uint32_t owner = map_.OwnerOf(user);
      auto client = ShardClient(owner);
      if (!client.ok()) {
        // A group between primaries: the next one is elected within the lease's TTL.
        if (Grouped(owner) && WaitForPrimary(&failover_since)) {
          --attempt;
          continue;
        }
        return client.status();
      }
      Result<Reply> r = fn(**client);
      if (r.ok()) return r;
      last = r.status();
      if (Grouped(owner)) {
        const bool refused = last.code() == Code::kReadOnly;  // not carried out
        const bool unknown = !(*client)->healthy() ||
                             (last.code() == Code::kUnavailable &&
                              last.message().find("outcome is unknown") != std::string::npos);
        if (refused || unknown) {
          LosePrimary(owner, refused ? last.message() : std::string());
          if (unknown && !(op && RetrySafe(*op))) return OutcomeUnknown(last, owner);
          if (WaitForPrimary(&failover_since)) {
            --attempt;
            continue;
          }
          return last;
        }
      }
      if (last.code() == Code::kMoved) {
        RELGRAPH_RETURN_IF_ERROR(RefreshMap());
        if (also != 0 && map_.OwnerOf(also) != map_.OwnerOf(user)) {
          *parted = true;  // a move took one of the two away: not a lag to wait out
          return last;
        }
        // The map read just now gives the user to the shard that refused it: that shard has
        // not seen this map yet (its watch lags the key). Asked again shortly, it will have.
        if (map_.OwnerOf(user) == owner && WaitWhileMoving(&moving_since)) --attempt;
        continue;
      }
      if (last.code() == Code::kMoving && WaitWhileMoving(&moving_since)) {
        --attempt;  // not a redirect: the same shard, a little later
        continue;
      }
      if (!(*client)->healthy()) {  // the connection broke: once more on a new one
        clients_.erase(owner);
        if (attempt == 0) continue;
      }
      return last;
    }
    return last;
  }
  // After a `moving` answer (or a `moved` from a shard whose map lags): sleeps a little and
  // says true, or false once moving_wait passed since the first one (*since).
  bool WaitWhileMoving(std::optional<std::chrono::steady_clock::time_point>* since);
  // Shard `id`'s primary, when a group serves it: the member answering INFO as a primary.
  Result<Client*> GroupPrimary(const ShardInfo& shard);
  // Whether shard `id` is served by a replication group.
  bool Grouped(uint32_t id) const;
  // After a refusal or a lost primary: drops the connection to shard `id`; `named`, a
  // read_only's message, is the primary the refusing member names (empty: none known).
  void LosePrimary(uint32_t id, const std::string& named);
  // Sleeps before looking for a group's primary again (5 ms, doubling to 100 ms); false once
  // failover_timeout passed since the first wait (*since).
  bool WaitForPrimary(std::optional<std::chrono::steady_clock::time_point>* since);
  Status OutcomeUnknown(const Status& last, uint32_t id) const;
  template <typename Request>  // a PageQuery: following, fans, friends, blocks, requests
  Result<typename Request::Reply> Page(const PageQuery& query);

  ClusterClientOptions options_;
  std::unique_ptr<NatsLink> link_;
  ShardMap map_;
  std::map<uint32_t, std::unique_ptr<Client>> clients_;
  // A group's member last found (or named) to be its primary; absent: ask the members in turn.
  std::map<uint32_t, std::string> primary_at_;
};

}  // namespace relgraph::net
