// The comparison workloads: the same operations timed against any design of
// tools/bench/designs/ (relgraph over TCP, the Redis sorted-set design, the relational design
// on PostgreSQL), so one run of relgraph-bench per target gives rows that line up.
//
// Rows (each also `<row>_unpipelined`, except load):
//   load                 the graph, by the design's own path (relgraph: pipelined FOLLOW with
//                        the edges' times; Redis and PostgreSQL: their bulk loaders); then
//                        the memory row, from the server's own accounting
//   relation             relation(a, b) of one pair, half of them existing edges
//   relations_100        relation of one user against 100 others
//   following_page       a first page (20) of whom a user follows, with a viewer's relation
//   fans_page            a first page (20) of a user's fans, with a viewer's relation
//   fans_page_deep       a page (20) by cursor at a random depth of the top account's fans
//   friends_page         a first page (20) of a user's friends
//   counts               following, fans and friends of a user
//   follow, unfollow     new random pairs, then the same pairs removed (the graph is as it was)
//   publish              a post by a random account with fans, pushed to its fans (the row
//                        ends when the design has finished the fan-out)
//   timeline_first_page  a first page (20) of a random reader's home timeline
// Pipelined rows run `connections` threads, each keeping `pipeline` operations per round trip;
// unpipelined rows one connection, one operation at a time, with p50/p99. Error replies are
// counted in the row's note with the first one's message.
//
// Thread-safety: one DesignWorkloads per thread; it starts its own client threads.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tools/bench/bench_report.h"
#include "tools/bench/designs/design.h"
#include "tools/bench/pipelined_clients.h"
#include "tools/bench/server_workloads.h"
#include "tools/bench/workloads.h"

namespace relgraph::bench {

// Counts error answers and keeps the first one's message, across client threads.
struct ErrorTally {
  std::mutex mu;
  uint64_t count = 0;
  std::string first;
  void Add(uint64_t n, const std::vector<Answer>& answers) {
    if (n == 0) return;
    std::lock_guard lock(mu);
    count += n;
    if (!first.empty()) return;
    for (const Answer& a : answers) {
      if (!a.status.ok()) {
        first = a.status.ToString();
        break;
      }
    }
  }
  std::string Note() {
    if (count == 0) return "";
    return std::to_string(count) + " error replies (first: " + first + ")";
  }
};

// One connection, one operation per round trip, each timed alone: operations [0, ops), the
// i-th built by op_at(i), their latencies appended to *micros and their error replies counted
// in *errors; on_answer(op, answer), when given, sees every answer. A transport failure ends
// the loop with its error. The *_unpipelined rows of DesignWorkloads and the scale run's.
template <typename OpAt, typename OnAnswer = std::nullptr_t>
Status RunUnpipelined(Design& design, uint64_t ops, const OpAt& op_at, std::vector<double>* micros,
                      ErrorTally* errors, const OnAnswer& on_answer = nullptr) {
  using Clock = std::chrono::steady_clock;
  micros->reserve(micros->size() + ops);
  std::vector<Answer> answers;
  for (uint64_t i = 0; i < ops; ++i) {
    const Op op = op_at(i);
    const auto t0 = Clock::now();
    auto n = design.Execute(std::span<const Op>(&op, 1), &answers);
    micros->push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    if (!n.ok()) return n.status();
    errors->Add(*n, answers);
    if constexpr (!std::is_same_v<OnAnswer, std::nullptr_t>) on_answer(op, answers[0]);
  }
  return Status::OK();
}

class DesignWorkloads {
 public:
  // target: as ConnectDesign's. With no_load, `load` reads what the server holds instead of
  // loading (its row is skipped; the memory row still comes).
  DesignWorkloads(const GeneratedGraph& data, const ServerFlags& flags, std::string target,
                  uint32_t max_following, uint64_t seed, bool no_load);

  static const std::vector<std::string>& Names();  // in run order
  Result<WorkloadResult> Run(const std::string& name);
  // The server's own count of the loaded graph's bytes, read after `load`.
  const MemoryRow& memory() const { return memory_; }

 private:
  Result<std::unique_ptr<Design>> Connect() const;
  Op MakeOp(const std::string& name, uint64_t i) const;
  Result<WorkloadResult> Load();
  Result<WorkloadResult> Pipelined(const std::string& name, uint64_t ops);
  Result<WorkloadResult> Unpipelined(const std::string& name, uint64_t ops);
  Status ReadMemory();

  const GeneratedGraph& data_;
  const ServerFlags flags_;
  const std::string target_;
  const uint32_t max_following_;
  const uint64_t seed_;
  const bool no_load_;
  KeptGraph kept_;                 // the edges the designs hold after load
  std::vector<UserId> followers_;  // users with a following list
  std::vector<UserId> followees_;  // users with fans
  std::vector<UserId> with_friends_;
  std::vector<std::pair<TimestampMs, UserId>> deep_cursors_;  // into the top account's fans
  UserId top_account_ = 0;
  std::vector<UserId> others_;  // relations_100: 100 ids per check, kOtherSets checks
  mutable std::atomic<uint64_t> next_post_;
  MemoryRow memory_;
};

}  // namespace relgraph::bench
