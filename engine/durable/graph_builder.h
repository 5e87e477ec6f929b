// GraphBuilder: builds a Graph from complete following lists in bulk (snapshot loading), much
// faster than one follow at a time.
//
// Why: a snapshot holds every follower's list already in order. Following lists are appended
// with no searching; fans are gathered by a counting sort on the followee, sorted per followee,
// and written into each fan list (chunked ones included) in one go; kMutual bits and friend
// counts are computed once per edge at the end, when both directions are known.
//
// Thread-safety: one thread; the Graph is handed over by Finish().
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "engine/graph/graph.h"
#include "storage/snapshot/snapshot_file.h"

namespace relgraph {

class GraphBuilder {
 public:
  explicit GraphBuilder(const GraphOptions& options);

  // Adds `edges` to `follower`'s list. Edges must continue the list in order: strictly
  // increasing (ts, followee id) and no followee twice; a list may arrive in several calls.
  // kCorruption otherwise (a snapshot that passed its checksums but breaks the format's rules),
  // kInvalidUserId / kSelfFollow / kInvalidArgument for ids or times no writer could produce.
  // With times kept in seconds (GraphOptions::time_resolution_ms), a list's order within a
  // second is by followee, not the file's: a follower's edges are gathered and sorted once all
  // have arrived, and some of those errors come from the next call or from Finish.
  Status AddFollowing(UserId follower, std::span<const SnapshotEdge> edges);
  // Sizes buffers for about `edges` edges (a hint; any number may follow).
  void Reserve(uint64_t edges) { edges_.reserve(edges); }
  // Builds fan lists, kMutual bits and counters. The builder is spent afterwards.
  Result<std::unique_ptr<Graph>> Finish();

 private:
  struct PendingEdge {  // 12 bytes; the time is read back from the follower's list
    InternalId follower;
    InternalId followee;
    uint32_t index;  // position in the follower's list
  };
  // mark_[x] == m for the users x of the list being checked, one generation m per list:
  // O(1) duplicate and mutual checks instead of scans.
  uint32_t& Mark(InternalId x);
  // The graph's Intern, refused with kResourceExhausted past max_users.
  Result<InternalId> Intern(UserId user);
  // AddFollowing with the times as the graph keeps them (the lists' order).
  Status AddList(UserId follower, std::span<const SnapshotEdge> edges);
  // Times in seconds: the gathered list of coarse_follower_, sorted, through AddList.
  Status FlushCoarse();

  std::unique_ptr<Graph> graph_;
  std::vector<PendingEdge> edges_;
  std::vector<uint32_t> mark_;
  std::vector<EdgeEntry> scratch_;
  uint32_t generation_ = 0;
  InternalId marked_follower_ = kNoInternalId;
  UserId coarse_follower_ = 0;
  std::vector<SnapshotEdge> coarse_;
};

}  // namespace relgraph
