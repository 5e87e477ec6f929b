// Single commands with O(n) work, in relgraph-bench, each on an embedded in-memory Db of its
// own while a second thread follows and unfollows other users as fast as it can, timing each
// of its calls: the longest one is the longest the command kept a writer waiting
// (docs/benchmarks.md, "Writer pauses"). The target is 10 ms, an online snapshot's bound.
//   remove_user_pause    REMOVE_USER of an account with a million fans
//   go_public_pause      SET_PRIVATE false of an account with a million pending requests
//   export_bucket_pause  a bucket move's listing (Db::ExportUsers) of 1/8 of the users of a
//                        graph of 200k users and 2M follows, one of the movers with 200k fans
// remove_user_pause and go_public_pause also run the command in a single step (step_units
// past its size), as it ran before it ran in steps, for comparison. Setup is untimed.
#pragma once

#include <string>
#include <vector>

#include "tools/bench/workloads.h"

namespace relgraph::bench {

class StallWorkloads {
 public:
  explicit StallWorkloads(uint64_t seed) : seed_(seed) {}
  static const std::vector<std::string>& Names();
  // REQUIRES: name is in Names().
  WorkloadResult Run(const std::string& name);

 private:
  WorkloadResult RemoveUser();
  WorkloadResult GoPublic();
  WorkloadResult ExportBucket();
  uint64_t seed_;
};

}  // namespace relgraph::bench
