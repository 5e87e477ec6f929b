// Design: one way of storing the follow graph and feeds, driven by the comparison benchmark.
//
// Why this design: the comparison must time relgraph, the Redis sorted-set design and the
// relational design doing the same work, and the tests must check that the three answer
// alike. So each design is one class that takes a batch of operations in one vocabulary
// (Op), sends them as that design would (its commands, scripts or prepared transactions,
// pipelined as far as it can: an operation that needs the answer of a first command takes a
// second round trip for the whole batch), and returns answers in one shape (Answer).
// docs/comparison.md writes out each design's schema, scripts and statements.
//
// Thread-safety: one Design per thread (each holds one connection).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/types.h"
#include "net/client/client.h"
#include "storage/status.h"
#include "tools/bench/workload_generator.h"

namespace relgraph::bench {

enum class OpKind : uint8_t {
  kFollow,         // user follows other (ts: the follow time; 0: the design's clock)
  kUnfollow,       // user unfollows other
  kRelation,       // relation(user, other)
  kRelations,      // relation(user, o) for each o in others
  kFollowingPage,  // whom user follows, newest first, each entry with viewer's relation to it
  kFansPage,       // who follows user, newest first; strictly older than (ts, cursor_user)
  kFriendsPage,    // user's mutual follows, newest first by the time they became mutual
  kCounts,         // following, fans, friends of user
  kPublish,        // user publishes post at ts (0: the design's clock), pushed to the fans
  kTimeline,       // the newest `limit` posts of user's home timeline
};

struct Op {
  OpKind kind = OpKind::kCounts;
  UserId user = 0;
  UserId other = 0;
  UserId viewer = 0;   // pages: whose relation to each entry to answer (0: none)
  TimestampMs ts = 0;  // follow / publish time; fans page: the cursor's time (0: first page)
  UserId cursor_user = 0;
  uint64_t post = 0;
  uint16_t limit = 20;
  std::span<const UserId> others;  // kRelations; must outlive Execute
};

// Relation bits, as relgraph's protocol has them: 1 user follows other, 2 other follows user.
inline constexpr uint8_t kFollowsBit = 1, kFollowedByBit = 2;

struct Entry {
  uint64_t id = 0;       // a user, or in a timeline a post
  TimestampMs ts = 0;    // follow time; friends: when the pair became mutual; post time
  uint8_t relation = 0;  // the viewer's relation to the entry (pages with a viewer)
  friend bool operator==(const Entry&, const Entry&) = default;
};

struct Answer {
  Status status;                                  // the design's error for this operation, or OK
  bool changed = false;                           // follow: a new edge; unfollow: an edge went
  std::vector<uint8_t> relations;                 // kRelation (one), kRelations
  std::vector<Entry> entries;                     // pages and timelines
  uint32_t following = 0, fans = 0, friends = 0;  // kCounts
};

// The edges a graph leaves once relgraph's rules have refused some (KeepEdges), with what the
// bulk loaders need for friends.
struct KeptGraph {
  std::vector<BenchEdge> edges;         // distinct pairs, in arrival order
  std::vector<TimestampMs> reverse_ts;  // edges[i]'s reverse edge's time; -1: there is none
};

// What the server itself says the loaded data takes.
struct MemoryFacts {
  uint64_t bytes = 0;  // relgraph: INFO memory_bytes; Redis: used_memory; PG: table + index sizes
  std::string note;    // how it was counted, and the process's resident memory where known
};

class Design {
 public:
  virtual ~Design() = default;
  virtual std::string name() const = 0;  // "relgraph", "redis" or "postgres"

  // Runs `ops` as one pipelined batch. Returns how many answered with an error; fills
  // `answers` (one per op, in order) when given. A transport failure fails the whole batch.
  // A second round trip (Redis: a page's viewer relations) runs after the whole batch's
  // first, so it sees writes that come later in the batch.
  virtual Result<uint64_t> Execute(std::span<const Op> ops, std::vector<Answer>* answers) = 0;

  // relgraph loads a graph by pipelined FOLLOWs (the benchmark's `load` row); the others by
  // their own bulk path (BulkLoad).
  virtual bool LoadsByFollow() const { return false; }
  // Empties the store, then loads `kept` (KeepEdges: the edges relgraph keeps) as the design's
  // bulk loader would, with friends and counters. Unimplemented (kUnsupported) for relgraph.
  virtual Status BulkLoad(const KeptGraph& kept) = 0;

  // Returns once work the design defers (relgraph's feed fan-out) is done.
  virtual Status WaitIdle() { return Status::OK(); }
  virtual Result<MemoryFacts> Memory() = 0;
};

// Connects one Design to `target`: "server" (relgraph at options.host:port, with its token),
// "redis://HOST:PORT", or "postgres://..." (a libpq URI, passed as it is). The Redis and
// relational designs refuse a follow past max_following, as relgraphd's --max-following does.
Result<std::unique_ptr<Design>> ConnectDesign(const std::string& target,
                                              const net::ClientOptions& options,
                                              uint32_t max_following);

// True when `target` names one of the above (checked before connecting).
bool IsDesignTarget(const std::string& target);

// The edges relgraph keeps from `graph`: a repeated pair keeps its first time, self-follows
// go, and a follower's edges past max_following are refused.
KeptGraph KeepEdges(const GeneratedGraph& graph, uint32_t max_following);

}  // namespace relgraph::bench
