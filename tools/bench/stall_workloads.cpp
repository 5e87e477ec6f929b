#include "tools/bench/stall_workloads.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <thread>

#include <time.h>

#include "engine/db.h"

namespace relgraph::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr uint32_t kMillion = 1'000'000;
constexpr UserId kWriterBase = 100'000'000;  // the writer thread's users, apart from the rest
constexpr uint32_t kWriterUsers = 1000;

double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// The longest time between two steps of an operation in steps (DbOptions::between_steps, called
// on the thread that runs them): a step's hold of the writers' lock plus its wait for the lock,
// in wall time and in that thread's CPU time (what the step itself costs, whatever else the
// machine runs).
struct StepClock {
  int64_t last_ns = 0, last_cpu_ns = 0;
  int64_t longest_ns = 0, longest_cpu_ns = 0;
  static int64_t CpuNs() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
  }
  void Tick() {
    const int64_t now =
        std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now().time_since_epoch())
            .count();
    const int64_t cpu = CpuNs();
    if (last_ns != 0) {
      longest_ns = std::max(longest_ns, now - last_ns);
      longest_cpu_ns = std::max(longest_cpu_ns, cpu - last_cpu_ns);
    }
    last_ns = now;
    last_cpu_ns = cpu;
  }
  std::string Text(const char* what) const;
};

std::unique_ptr<Db> OpenDb(uint32_t step_units, StepClock* steps = nullptr) {
  DbOptions o;
  if (steps != nullptr) o.between_steps = [steps] { steps->Tick(); };
  o.graph.rate_limit.enabled = false;
  o.graph.max_following = 5000;
  o.background_fanout = false;
  o.step_units = step_units;
  if (step_units > DbOptions{}.step_units) o.step_hold_us = UINT32_MAX;  // one step, as before
  auto db = Db::Open("", o);
  return db.ok() ? std::move(*db) : nullptr;
}

// Follows a -> b for every pair, 64k at a time (requests, where b is private).
void FollowAll(Db& db, const std::vector<std::pair<UserId, UserId>>& pairs) {
  std::vector<Db::BatchWrite> writes;
  std::vector<Db::BatchWriteResult> results;
  for (size_t at = 0; at < pairs.size(); at += 65536) {
    const size_t n = std::min<size_t>(65536, pairs.size() - at);
    writes.assign(n, {});
    results.assign(n, {});
    for (size_t i = 0; i < n; ++i)
      writes[i] = {Db::BatchWrite::Kind::kFollow, pairs[at + i].first, pairs[at + i].second,
                   std::nullopt};
    db.WriteBatch(writes, results);
  }
}

struct Paused {
  int64_t idle_longest_us = 0;  // the writer's longest call over 2 s before the command
  double seconds = 0;           // the command's
  int64_t longest_us = 0;       // the writer's longest single call meanwhile
  uint64_t writes = 0;          // the writer's calls meanwhile
};

// Runs `command` while a writer follows and unfollows among its own users.
Paused WhileWriting(Db& db, uint64_t seed, const std::function<void()>& command) {
  std::atomic<bool> stop{false}, measuring{false};
  std::atomic<int64_t> longest{0};
  std::atomic<uint64_t> writes{0};
  std::thread writer([&] {
    std::mt19937_64 rng(seed);
    while (!stop.load(std::memory_order_relaxed)) {
      const UserId a = kWriterBase + rng() % kWriterUsers, b = kWriterBase + rng() % kWriterUsers;
      for (int k = 0; k < 2; ++k) {
        const auto t0 = SteadyClock::now();
        if (k == 0) {
          db.Follow(a, b).status().IgnoreError();
        } else {
          db.Unfollow(a, b).status().IgnoreError();
        }
        const int64_t us =
            std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - t0).count();
        // A call that ends after the command does counts too: measuring ends after the join.
        if (measuring.load(std::memory_order_relaxed)) {
          int64_t prev = longest.load();
          while (us > prev && !longest.compare_exchange_weak(prev, us)) {
          }
          writes.fetch_add(1, std::memory_order_relaxed);
        }
      }
    }
  });
  // The noise floor: the writer's longest call with nothing else running here (on a shared
  // machine, the time slices of other processes).
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the writer is running
  measuring = true;
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const int64_t idle = longest.exchange(0);
  writes = 0;
  const auto start = SteadyClock::now();
  command();
  Paused p;
  p.seconds = SecondsSince(start);
  stop = true;
  writer.join();
  measuring = false;
  p.longest_us = longest.load();
  p.idle_longest_us = idle;
  p.writes = writes.load();
  return p;
}

std::string Ms(int64_t us) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(us < 10'000 ? 2 : 0);
  s << static_cast<double>(us) / 1000 << " ms";
  return s.str();
}

std::string StepClock::Text(const char* what) const {
  return std::string("; longest ") + what + " " + Ms(longest_ns / 1000) + ", " +
         Ms(longest_cpu_ns / 1000) + " of CPU";
}

}  // namespace

const std::vector<std::string>& StallWorkloads::Names() {
  static const std::vector<std::string> names = {"remove_user_pause", "go_public_pause",
                                                 "export_bucket_pause"};
  return names;
}

WorkloadResult StallWorkloads::Run(const std::string& name) {
  if (name == "remove_user_pause") return RemoveUser();
  if (name == "go_public_pause") return GoPublic();
  return ExportBucket();
}

WorkloadResult StallWorkloads::RemoveUser() {
  // An account with a million fans, who follow it in a random order.
  constexpr UserId kStar = kMillion + 1;
  std::vector<std::pair<UserId, UserId>> follows;
  for (UserId u = 1; u <= kMillion; ++u) follows.push_back({u, kStar});
  std::mt19937_64 rng(seed_);
  std::shuffle(follows.begin(), follows.end(), rng);
  Paused steps, whole;
  StepClock clock;
  uint64_t removed = 0;
  for (uint32_t units : {uint32_t{1} << 30, DbOptions{}.step_units}) {
    auto db = OpenDb(units, units == DbOptions{}.step_units ? &clock : nullptr);
    FollowAll(*db, follows);
    const Paused p = WhileWriting(*db, seed_, [&] {
      auto r = db->RemoveUser(kStar);
      removed = r.ok() ? *r : 0;
    });
    (units == DbOptions{}.step_units ? steps : whole) = p;
  }
  std::ostringstream note;
  note << "removed " << removed << " edges in " << Ms(static_cast<int64_t>(steps.seconds * 1e6))
       << "; longest writer pause " << Ms(steps.longest_us) << " (" << steps.writes
       << " writes meanwhile" << clock.Text("step") << "; with nothing running "
       << Ms(steps.idle_longest_us) << "); in one step: " << Ms(whole.longest_us);
  WorkloadResult r = Summarize("remove_user_pause", removed, steps.seconds, {}, note.str());
  r.p99_us = static_cast<double>(steps.longest_us);
  return r;
}

WorkloadResult StallWorkloads::GoPublic() {
  // A private account asked by a million users, who exist first and ask in a random order.
  constexpr UserId kPrivate = kMillion + 1, kOther = kMillion + 2;
  std::vector<std::pair<UserId, UserId>> first, asks;
  for (UserId u = 1; u <= kMillion; ++u) {
    first.push_back({u, kOther});
    asks.push_back({u, kPrivate});
  }
  std::mt19937_64 rng(seed_);
  std::shuffle(asks.begin(), asks.end(), rng);
  Paused steps, whole;
  StepClock clock;
  uint64_t approved = 0;
  for (uint32_t units : {uint32_t{1} << 30, DbOptions{}.step_units}) {
    auto db = OpenDb(units, units == DbOptions{}.step_units ? &clock : nullptr);
    FollowAll(*db, first);
    db->SetPrivate(kPrivate, true).status().IgnoreError();
    FollowAll(*db, asks);
    const Paused p = WhileWriting(*db, seed_, [&] {
      auto o = db->SetPrivate(kPrivate, false);
      approved = o.ok() ? o->approved : 0;
    });
    (units == DbOptions{}.step_units ? steps : whole) = p;
  }
  std::ostringstream note;
  note << "approved " << approved << " requests in "
       << Ms(static_cast<int64_t>(steps.seconds * 1e6)) << "; longest writer pause "
       << Ms(steps.longest_us) << " (" << steps.writes << " writes meanwhile" << clock.Text("step")
       << "; with nothing running " << Ms(steps.idle_longest_us)
       << "); in one step: " << Ms(whole.longest_us);
  WorkloadResult r = Summarize("go_public_pause", approved, steps.seconds, {}, note.str());
  r.p99_us = static_cast<double>(steps.longest_us);
  return r;
}

WorkloadResult StallWorkloads::ExportBucket() {
  // 200k users following 10 others each at random; user 8 (moving) is followed by all.
  constexpr UserId kUsers = 200'000;
  constexpr UserId kStar = 8;
  std::mt19937_64 rng(seed_);
  std::vector<std::pair<UserId, UserId>> follows;
  for (UserId u = 1; u <= kUsers; ++u) {
    for (int k = 0; k < 10; ++k) {
      const UserId v = 1 + rng() % kUsers;
      if (v != u && v != kStar) follows.push_back({u, v});
    }
    if (u != kStar) follows.push_back({u, kStar});
  }
  std::shuffle(follows.begin(), follows.end(), rng);
  StepClock clock;
  auto db = OpenDb(DbOptions{}.step_units, &clock);
  FollowAll(*db, follows);
  const uint64_t edges = db->Read([](const Graph& g) { return g.edge_count(); });
  size_t records = 0;
  const Paused p = WhileWriting(*db, seed_, [&] {
    auto state = db->ExportUsers([](UserId u) { return u % 8 == 0 && u <= kUsers; });
    records = state.ok() ? state->size() : 0;
  });
  std::ostringstream note;
  note << "listed " << records << " records of " << kUsers / 8 << " moving users (of " << kUsers
       << " users, " << edges << " edges) in " << Ms(static_cast<int64_t>(p.seconds * 1e6))
       << "; longest writer pause " << Ms(p.longest_us) << " (" << p.writes << " writes meanwhile"
       << clock.Text("slice") << "; with nothing running " << Ms(p.idle_longest_us) << ")";
  WorkloadResult r = Summarize("export_bucket_pause", records, p.seconds, {}, note.str());
  r.p99_us = static_cast<double>(p.longest_us);
  return r;
}

}  // namespace relgraph::bench
