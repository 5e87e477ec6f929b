// Feed workloads of relgraph-bench, on one thread, over the loaded benchmark graph:
//   publish                 Feed::Publish alone (fan-out not run while timed); the note
//                           times the author with the most fans, and one made with 1M
//   fanout                  the queued fan-out run to the end: inbox inserts per second; the
//                           note holds the fan-out delay measured under a paced publish stream
//   timeline_first_page     a typical active reader's first page (20)
//   timeline_deep_page      a page by cursor 200 entries deep (20)
//   timeline_heavy_reader   first page of a reader following 1,000 accounts, 50 of them
//                           celebrities
// Setup (untimed): a sample of readers reads once (so they have inboxes, as active readers
// do), then posts arrive from random authors at 1 ms steps of post time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/feed/feed.h"
#include "engine/graph/graph.h"
#include "tools/bench/workloads.h"

namespace relgraph::bench {

struct FeedFlags {
  uint64_t readers = 1'000'000;  // active readers materialized before posts arrive
  uint64_t posts = 1'000'000;    // posts published by the publish workload
  uint64_t ops = 200'000;        // reads per timeline workload
};

class FeedWorkloads {
 public:
  // `graph` must stay alive and unchanged except through this object.
  FeedWorkloads(Graph& graph, FeedFlags flags, uint64_t seed);
  ~FeedWorkloads();

  static const std::vector<std::string>& Names();
  WorkloadResult Run(const std::string& name);

 private:
  void Setup();
  WorkloadResult Publish();
  WorkloadResult Fanout();
  WorkloadResult FirstPage();
  WorkloadResult DeepPage();
  WorkloadResult HeavyReader();
  std::string MemoryNote() const;
  std::string MillionFanNote() const;  // publish timed for an author with a million fans
  UserId RandomAuthor();

  Graph& graph_;
  FeedFlags flags_;
  std::mt19937_64 rng_;
  std::unique_ptr<Feed> feed_;
  std::vector<UserId> readers_;
  std::vector<UserId> authors_;  // users with fans
  PostId next_post_ = 1;
  TimestampMs post_ts_ = 1'750'000'000'000;
  bool setup_ = false;
  FeedStats after_setup_;  // memory before the workloads add posts and inbox entries
};

}  // namespace relgraph::bench
