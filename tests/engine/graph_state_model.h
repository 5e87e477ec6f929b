// The graph state a sequence of changes leaves: follow edges, blocks, pending follow requests
// and private users, each with its time, kept in plain maps by the rules of docs/access.md.
// Tests that rebuild the state from the WAL (crash_test) or from change events
// (change_reader_test) apply their records here, then compare with a Db's graph (Of).
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "engine/graph/graph.h"

namespace relgraph::testing {

struct GraphStateModel {
  using Pair = std::pair<UserId, UserId>;
  std::map<Pair, TimestampMs> edges;     // (follower, followee)
  std::map<Pair, TimestampMs> blocks;    // (blocker, blocked)
  std::map<Pair, TimestampMs> requests;  // (requester, target)
  std::set<UserId> private_users;

  void Follow(UserId a, UserId b, TimestampMs ts) { edges[{a, b}] = ts; }
  void Unfollow(UserId a, UserId b) { edges.erase({a, b}); }
  void RemoveUser(UserId a) {
    for (auto* m : {&edges, &blocks, &requests}) {
      std::erase_if(*m,
                    [&](const auto& kv) { return kv.first.first == a || kv.first.second == a; });
    }
    private_users.erase(a);
  }
  // What a block removed, as BlockOutcome reports it.
  struct Severed {
    bool unfollowed = false, lost_follower = false, request = false;
  };
  Severed Block(UserId a, UserId b, TimestampMs ts) {
    Severed s;
    s.unfollowed = edges.erase({a, b}) > 0;
    s.lost_follower = edges.erase({b, a}) > 0;
    s.request = requests.erase({a, b}) + requests.erase({b, a}) > 0;
    blocks[{a, b}] = ts;
    return s;
  }
  void Unblock(UserId a, UserId b) { blocks.erase({a, b}); }
  // Going public approves every pending request to `a`, at ts.
  void SetPrivate(UserId a, bool on, TimestampMs ts) {
    if (on) {
      private_users.insert(a);
      return;
    }
    private_users.erase(a);
    for (auto it = requests.begin(); it != requests.end();) {
      if (it->first.second != a) {
        ++it;
        continue;
      }
      edges[it->first] = ts;
      it = requests.erase(it);
    }
  }
  void Request(UserId requester, UserId target, TimestampMs ts) {
    requests[{requester, target}] = ts;
  }
  void Approve(UserId target, UserId requester, TimestampMs ts) {
    requests.erase({requester, target});
    edges[{requester, target}] = ts;
  }
  void RemoveRequest(UserId requester, UserId target) { requests.erase({requester, target}); }

  // The state a graph holds.
  static GraphStateModel Of(const Graph& g) {
    GraphStateModel m;
    g.ForEachEdge([&](UserId a, UserId b, TimestampMs ts) { m.edges[{a, b}] = ts; });
    g.ForEachBlock([&](UserId a, UserId b, TimestampMs ts) { m.blocks[{a, b}] = ts; });
    g.ForEachRequest([&](UserId t, UserId r, TimestampMs ts) { m.requests[{r, t}] = ts; });
    g.ForEachPrivate([&](UserId u) { m.private_users.insert(u); });
    return m;
  }
};

}  // namespace relgraph::testing
