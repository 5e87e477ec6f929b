// ClusterClient: a client of a relgraph cluster (docs/cluster.md). It reads the shard map from
// NATS JetStream and sends each command to the shard that owns the command's user
// (net/protocol/command_table.h). A page with a viewer on another shard is fetched without the
// viewer, then completed with one RELATIONS call to the viewer's shard. A shard that answers
// `moved` (the map changed under the client) makes the client read the map again and retry,
// so a stale client corrects itself. A shard that answers `moving` (it is taking the user's
// bucket over), or `moved` while the map just read gives it the user (its own map lags the
// key's), is asked again shortly, for up to moving_wait.
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
};

class ClusterClient : public TypedCalls<ClusterClient> {
 public:
  // Connects to NATS and reads the map (kNotFound without one). Shards are connected to on
  // first use.
  static Result<std::unique_ptr<ClusterClient>> Connect(const ClusterClientOptions& options);

  // Any single-user command, routed by RoutingOf(request).user (a request about no user is
  // kInvalidArgument: send it to a shard with ShardClient).
  template <typename Request>
  Result<typename Request::Reply> Call(const Request& request) {
    const Routing r = RoutingOf(request);
    if (r.user == 0) {
      return Status::InvalidArgument(std::string(OpcodeName(Request::kOpcode)) +
                                     " is about no user: ask a shard (ShardClient)");
    }
    return Routed<typename Request::Reply>(r.user, [&](Client& c) { return c.Call(request); });
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

  // Runs fn(Client&) on the shard that owns `user`, following `moved` as Call does (a tool
  // that sends its own requests: relgraph-cli --cluster).
  template <typename Reply, typename Fn>
  Result<Reply> OnOwnerOf(uint64_t user, Fn&& fn) {
    return Routed<Reply>(user, std::forward<Fn>(fn));
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
  // Runs fn on the owner of `user`, following `moved` (after reading the map again) and
  // reconnecting once after a dropped connection.
  template <typename Reply, typename Fn>
  Result<Reply> Routed(uint64_t user, Fn&& fn) {
    Status last;
    std::optional<std::chrono::steady_clock::time_point> moving_since;
    for (int attempt = 0; attempt <= options_.max_redirects; ++attempt) {
      const uint32_t owner = map_.OwnerOf(user);
      auto client = ShardClient(owner);
      if (!client.ok()) return client.status();
      Result<Reply> r = fn(**client);
      if (r.ok()) return r;
      last = r.status();
      if (last.code() == Code::kMoved) {
        RELGRAPH_RETURN_IF_ERROR(RefreshMap());
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
  template <typename Request>  // a PageQuery: following, fans, friends, blocks, requests
  Result<typename Request::Reply> Page(const PageQuery& query);

  ClusterClientOptions options_;
  std::unique_ptr<NatsLink> link_;
  ShardMap map_;
  std::map<uint32_t, std::unique_ptr<Client>> clients_;
};

}  // namespace relgraph::net
