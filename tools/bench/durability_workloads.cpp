#include "tools/bench/durability_workloads.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "engine/db.h"
#include "engine/durable/graph_snapshot.h"
#include "engine/graph/id_map.h"
#include "engine/import/edge_list.h"
#include "engine/import/edge_list_import.h"
#include "engine/mem/huge_pages.h"
#include "storage/wal/wal_tail.h"

namespace relgraph::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

double Since(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

DbOptions BenchDbOptions(DurabilityMode mode) {
  DbOptions o;
  o.durability = mode;
  o.graph.rate_limit.enabled = false;
  return o;
}

struct ChildRun {
  std::string printed;        // its standard output
  double system_seconds = 0;  // CPU time the kernel spent for it (faulting in memory, mostly)
};

// Runs this binary again as `relgraph-bench --open-only=DIR` and returns what it printed on
// standard output ("<edges> <seconds>"), or an error naming what failed.
Result<ChildRun> RunOpenOnlyChild(const std::string& dir) {
  int out[2];
  if (::pipe(out) != 0) return Status::IOError("pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out[0]);
    ::close(out[1]);
    return Status::IOError("fork failed");
  }
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::close(out[0]);
    ::close(out[1]);
    const std::string flag = "--open-only=" + dir;
    ::execl("/proc/self/exe", "relgraph-bench", flag.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buf[256];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) text.append(buf, n);
  ::close(out[0]);
  int wstatus = 0;
  struct rusage usage {};
  ::wait4(pid, &wstatus, 0, &usage);
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0)
    return Status::IOError("the --open-only child failed: " + text);
  return ChildRun{text, usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6};
}

// A row without latency samples.
WorkloadResult Row(const std::string& name, uint64_t ops, double seconds, std::string note = "") {
  return Summarize(name, ops, seconds, {}, std::move(note));
}

}  // namespace

DurabilityWorkloads::DurabilityWorkloads(const GeneratedGraph& data, const Graph* graph,
                                         DurabilityFlags flags)
    : data_(data), graph_(graph), flags_(std::move(flags)) {}

const std::vector<std::string>& DurabilityWorkloads::Names() {
  static const std::vector<std::string> names = {
      "wal_off",     "wal_none",     "wal_everysec", "wal_always",    "wal_always_concurrent",
      "snapshot",    "recovery_wal", "stream_read",  "replica_apply", "import",
      "first_touch", "id_growth"};
  return names;
}

bool DurabilityWorkloads::NeedsGraph(const std::string& name) {
  return name == "snapshot";
}

std::string DurabilityWorkloads::Dir(const std::string& name) const {
  const std::string d = flags_.root + "/" + name;
  std::filesystem::remove_all(d);
  return d;
}

std::vector<WorkloadResult> DurabilityWorkloads::Run(const std::string& name) {
  if (name == "wal_always_concurrent") return {AlwaysConcurrent()};
  if (name == "snapshot") return Snapshots();
  if (name == "recovery_wal") return {RecoveryWal()};
  if (name == "stream_read") return StreamRead();
  if (name == "replica_apply") return {ReplicaApply()};
  if (name == "import") return {Import()};
  if (name == "first_touch") return {FirstTouch()};
  if (name == "id_growth") return {IdGrowth()};
  return {Follows(name)};
}

WorkloadResult DurabilityWorkloads::Follows(const std::string& name) {
  // One thread, FollowAt through a Db; wal_off is a Db without a directory (no WAL at all).
  uint64_t n = std::min<uint64_t>(flags_.wal_ops, data_.edges.size());
  DurabilityMode mode = DurabilityMode::kNone;
  if (name == "wal_everysec") mode = DurabilityMode::kEverySec;
  if (name == "wal_always") {
    mode = DurabilityMode::kAlways;
    n = std::min<uint64_t>(n, 2000);  // one fsync per follow: keep the run short
  }
  const std::string dir = name == "wal_off" ? "" : Dir(name);
  auto db = Db::Open(dir, BenchDbOptions(mode));
  if (!db.ok()) return Row(name, 0, 0, db.status().ToString());
  const auto start = SteadyClock::now();
  WriteFirstFollows(**db, n);
  const Status closed = (*db)->Close();
  return Row(name, n, Since(start), closed.ok() ? "" : closed.ToString());
}

WorkloadResult DurabilityWorkloads::AlwaysConcurrent() {
  const uint64_t n = std::min<uint64_t>(200'000, data_.edges.size());
  auto db = Db::Open(Dir("wal_always_concurrent"), BenchDbOptions(DurabilityMode::kAlways));
  if (!db.ok()) return Row("wal_always_concurrent", 0, 0, db.status().ToString());
  std::atomic<uint64_t> next{0}, acked{0};
  const auto start = SteadyClock::now();
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < flags_.writers; ++t) {
    threads.emplace_back([&] {
      for (uint64_t i; (i = next.fetch_add(1)) < n;) {
        const BenchEdge& e = data_.edges[i];
        if ((*db)->FollowAt(e.follower, e.followee, e.ts).ok()) acked.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  const double secs = Since(start);
  (*db)->Close().IgnoreError();
  return Row("wal_always_concurrent", acked.load(), secs,
             std::to_string(flags_.writers) + " writers, every follow fsynced before it returned");
}

std::vector<WorkloadResult> DurabilityWorkloads::Snapshots() {
  std::vector<WorkloadResult> rows;
  const std::string dir = Dir("snapshot");
  std::filesystem::create_directories(dir);
  // 1. Offline: the loaded graph straight into a snapshot file.
  auto start = SteadyClock::now();
  auto info = WriteGraphSnapshot(Env::Posix(), dir, *graph_, 0);
  if (!info.ok()) return {Row("snapshot_write_offline", 0, 0, info.status().ToString())};
  rows.push_back(Row("snapshot_write_offline", info->edges, Since(start),
                     std::to_string(info->file_bytes / (1 << 20)) + " MiB on disk, " +
                         std::to_string(info->raw_bytes / (1 << 20)) + " MiB raw"));
  // 2. Recovery from that snapshot as a restart sees it: a fresh process that only opens the
  //    directory. Median of three, each timed around Db::Open in the child. This runs before
  //    the in-process open below because a Db holds its directory's lock.
  std::vector<double> opens;
  uint64_t restart_edges = 0;
  std::string runs;
  for (int i = 0; i < 3; ++i) {
    auto printed = RunOpenOnlyChild(dir);
    if (!printed.ok()) return {Row("recovery_snapshot_restart", 0, 0, printed.status().ToString())};
    std::istringstream in(printed->printed);
    double secs = 0;
    in >> restart_edges >> secs;
    opens.push_back(secs);
    char one[64];
    std::snprintf(one, sizeof one, "%s%.3f s (sys %.2f)", i ? ", " : "", secs,
                  printed->system_seconds);
    runs += one;
  }
  const double median = Percentile(opens, 0.5);
  rows.push_back(Row("recovery_snapshot_restart", restart_edges, median,
                     "median of 3 fresh processes: " + runs));
  // 2b. The same recovery inside this process, which then takes the online snapshot.
  start = SteadyClock::now();
  auto db = Db::Open(dir, BenchDbOptions(DurabilityMode::kEverySec));
  if (!db.ok()) return {Row("recovery_snapshot", 0, 0, db.status().ToString())};
  rows.push_back(Row("recovery_snapshot", (*db)->recovery().snapshot_edges, Since(start),
                     "inside this process, which holds the generated graph"));
  // 3. Online snapshot while a writer follows as fast as it can: its longest single pause.
  std::atomic<bool> stop{false};
  std::atomic<int64_t> max_pause_us{0};
  std::atomic<uint64_t> writes{0};
  std::thread writer([&] {
    uint64_t i = 0;
    while (!stop) {
      const BenchEdge& e = data_.edges[i++ % data_.edges.size()];
      const auto t0 = SteadyClock::now();
      (*db)->Unfollow(e.follower, e.followee).status().IgnoreError();
      (*db)->FollowAt(e.follower, e.followee, e.ts).status().IgnoreError();
      const int64_t us =
          std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - t0).count();
      int64_t prev = max_pause_us.load();
      while (us > prev && !max_pause_us.compare_exchange_weak(prev, us)) {
      }
      writes += 2;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  max_pause_us = 0;  // measure only during the snapshot
  const uint64_t writes_before = writes;
  start = SteadyClock::now();
  auto online = (*db)->Snapshot();
  const double secs = Since(start);
  const int64_t pause = max_pause_us.load();
  const uint64_t during = writes - writes_before;
  stop = true;
  writer.join();
  if (!online.ok()) return {Row("snapshot_write_online", 0, 0, online.status().ToString())};
  rows.push_back(Row("snapshot_write_online", online->edges, secs,
                     "longest writer pause " + std::to_string(pause) + " us; " +
                         std::to_string(during) + " writes went on during it"));
  (*db)->Close().IgnoreError();
  return rows;
}

uint64_t DurabilityWorkloads::WalReadOps() const {
  return std::min<uint64_t>(std::max<uint64_t>(flags_.wal_ops, 2'000'000), data_.edges.size());
}

void DurabilityWorkloads::WriteFirstFollows(Db& db, uint64_t n) const {
  for (uint64_t i = 0; i < n; ++i) {
    const BenchEdge& e = data_.edges[i];
    db.FollowAt(e.follower, e.followee, e.ts).status().IgnoreError();
  }
}

WorkloadResult DurabilityWorkloads::RecoveryWal() {
  const uint64_t n = WalReadOps();
  const std::string dir = Dir("recovery_wal");
  {
    auto db = Db::Open(dir, BenchDbOptions(DurabilityMode::kNone));
    if (!db.ok()) return Row("recovery_wal", 0, 0, db.status().ToString());
    WriteFirstFollows(**db, n);
  }
  const auto start = SteadyClock::now();
  auto db = Db::Open(dir, BenchDbOptions(DurabilityMode::kNone));
  if (!db.ok()) return Row("recovery_wal", 0, 0, db.status().ToString());
  return Row("recovery_wal", (*db)->recovery().replayed_records, Since(start), "records replayed");
}

WorkloadResult DurabilityWorkloads::ReplicaApply() {
  // A primary's WAL of n follows, copied into a replica Db as replication does: raw records
  // read back in frames of 12,000 (what a 1 MiB RECORDS frame holds), each frame applied with
  // ApplyReplicated (the live graph and feed paths, plus the replica's own WAL append). Timed:
  // reading and applying, without the network. The primary is closed before the replica opens,
  // as recovery_wal closes its first Db: both rows then meet memory this process gave back,
  // not memory the machine hands out fresh (first_touch measures what that costs here).
  const uint64_t n = WalReadOps();
  const std::string pdir = Dir("replica_apply_primary"), rdir = Dir("replica_apply");
  uint64_t last = 0, primary_digest = 0;
  {
    DbOptions options = BenchDbOptions(DurabilityMode::kNone);
    options.keep_all_wal = true;
    auto primary = Db::Open(pdir, options);
    if (!primary.ok()) return Row("replica_apply", 0, 0, primary.status().ToString());
    WriteFirstFollows(**primary, n);
    last = (*primary)->last_lsn();
    primary_digest = (*primary)->Read([](const Graph& g) { return g.Digest(); });
    if (Status s = (*primary)->Close(); !s.ok()) return Row("replica_apply", 0, 0, s.ToString());
  }
  auto replica = Db::Open(rdir, BenchDbOptions(DurabilityMode::kEverySec));
  if (!replica.ok()) return Row("replica_apply", 0, 0, replica.status().ToString());
  const auto start = SteadyClock::now();
  auto tail = WalTail::Open(Env::Posix(), pdir, 1);
  if (!tail.ok()) return Row("replica_apply", 0, 0, tail.status().ToString());
  std::string bytes;  // the frame's payloads, as a RECORDS body would hold them
  std::vector<Db::ReplicatedRecord> frame;
  std::vector<std::pair<size_t, size_t>> spans;
  while ((*tail)->next_lsn() <= last) {
    bytes.clear();
    frame.clear();
    spans.clear();
    auto read = (*tail)->Read(last, 12'000, [&](const WalRecordView& r) {
      spans.push_back({bytes.size(), r.payload.size()});
      bytes.append(r.payload);
      frame.push_back({r.lsn, r.type, {}});
      return Status::OK();
    });
    if (!read.ok()) return Row("replica_apply", 0, 0, read.status().ToString());
    if (*read == 0) return Row("replica_apply", 0, 0, "the primary's WAL ended early");
    for (size_t i = 0; i < frame.size(); ++i) {
      frame[i].payload = std::string_view(bytes).substr(spans[i].first, spans[i].second);
    }
    if (Status s = (*replica)->ApplyReplicated(frame); !s.ok()) {
      return Row("replica_apply", 0, 0, s.ToString());
    }
  }
  const double secs = Since(start);
  const bool same = (*replica)->Read([](const Graph& g) { return g.Digest(); }) == primary_digest;
  return Row("replica_apply", last, secs,
             std::string("records applied with their WAL append (everysec); digests ") +
                 (same ? "equal" : "DIFFER"));
}

std::vector<WorkloadResult> DurabilityWorkloads::StreamRead() {
  // The WAL of n follows, then read back as change events: every kind, and a mask that
  // selects none of them (the cost of skipping).
  const uint64_t n = WalReadOps();
  const std::string dir = Dir("stream_read");
  DbOptions options = BenchDbOptions(DurabilityMode::kNone);
  options.keep_all_wal = true;
  auto db = Db::Open(dir, options);
  if (!db.ok()) return {Row("stream_read", 0, 0, db.status().ToString())};
  WriteFirstFollows(**db, n);
  const uint64_t last = (*db)->last_lsn();
  std::vector<WorkloadResult> rows;
  for (const ChangeKindMask mask : {kAllChangeKinds, MaskOf(ChangeKind::kPublish)}) {
    const std::string name = mask == kAllChangeKinds ? "stream_read" : "stream_read_skipping";
    const auto start = SteadyClock::now();
    auto reader = (*db)->OpenChanges(1, mask);
    if (!reader.ok()) return {Row(name, 0, 0, reader.status().ToString())};
    uint64_t events = 0, checksum = 0;
    while ((*reader)->next_lsn() <= last) {
      auto read = (*reader)->Read(4096, [&](const ChangeEvent& e) {
        ++events;
        checksum += e.a ^ e.b;
      });
      if (!read.ok()) return {Row(name, 0, 0, read.status().ToString())};
    }
    rows.push_back(Row(name, last, Since(start),
                       std::to_string(events) + " events of " + std::to_string(last) +
                           " records (checksum " + std::to_string(checksum % 1000) + ")"));
  }
  return rows;
}

WorkloadResult DurabilityWorkloads::Import() {
  std::string path = flags_.dataset;
  uint64_t offset = flags_.id_offset;
  if (path.empty()) {
    // The generated graph as a plain edge list, written before the clock starts.
    path = flags_.root + "/generated-edges.txt";
    {
      std::ofstream f(path);
      for (const BenchEdge& e : data_.edges)
        f << e.follower << ' ' << e.followee << ' ' << e.ts << '\n';
    }
    // Written back to disk before the clock starts too: otherwise the kernel's writeback of
    // 548 MB competes with the import for the two cores.
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd >= 0) {
      ::fsync(fd);
      ::close(fd);
    }
    offset = 0;
  }
  const std::string dir = Dir("import");
  std::filesystem::create_directories(dir);
  const auto start = SteadyClock::now();
  auto imported = ImportEdgeListToSnapshot(Env::Posix(), path, dir, {.id_offset = offset});
  if (!imported.ok()) return Row("import", 0, 0, imported.status().ToString());
  return Row("import", imported->stats.edges_read, Since(start),
             "edge list -> snapshot (relgraph-admin import), " +
                 std::to_string(imported->snapshot.edges) + " edges kept");
}

WorkloadResult DurabilityWorkloads::FirstTouch() {
  // What a write to memory this process has not touched costs on this machine, against the
  // same size just given back and taken again: 512 MiB of huge-page-advised memory (as slabs
  // and tables are), one write a 4 KiB page, three rounds. On a VM whose balloon takes freed
  // memory back from the guest (free page reporting), the first round pays the host's faults
  // as well as the kernel's zeroing: the cost a fresh process's loads, restarts and replicas
  // meet, and that recovery_wal and replica_apply (which reuse memory) do not.
  constexpr size_t kBytes = size_t{512} << 20;
  double secs[3] = {};
  for (double& s : secs) {
    char* p = static_cast<char*>(AllocateLarge(kBytes));
    const auto start = SteadyClock::now();
    for (size_t at = 0; at < kBytes; at += 4096) p[at] = 1;
    s = Since(start);
    FreeLarge(p, kBytes);
  }
  auto gbs = [](double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GB/s", static_cast<double>(kBytes) / s / 1e9);
    return std::string(buf);
  };
  return Row("first_touch", kBytes >> 20, secs[0],
             "MiB written once a page: first touch " + gbs(secs[0]) + ", again after freeing " +
                 gbs(secs[1]) + ", " + gbs(secs[2]));
}

WorkloadResult DurabilityWorkloads::IdGrowth() {
  // One growth of the id index (engine/graph/id_map.h) as a restarted server meets it: a map
  // of 40M users bulk-indexed at a load of 0.8 (a snapshot's load), its first new user, which
  // starts the growth into a 1.5x table, then the rest moved kGrowthStep users at a time (a
  // Db's background worker moves 4 such steps a hold). Each move probes a table of ~370 MB; a
  // map of 155M users (10^9 edges) moves into one of 1.45 GB. Timed: the steps after the
  // first new user's.
  constexpr size_t kUsers = 40'000'000;
  std::vector<UserId> ids(kUsers);
  for (size_t i = 0; i < kUsers; ++i) ids[i] = IdMap::Hash(i + 1) | 1;  // odd, distinct
  IdMap map;
  if (map.AppendAll(ids) != kUsers || map.IndexAll() != kUsers) {
    return Row("id_growth", 0, 0, "the bulk index refused the generated ids");
  }
  std::vector<UserId>().swap(ids);
  map.Intern(2);  // even: a new user
  if (!map.growing()) return Row("id_growth", 0, 0, "the first new user started no growth");
  const auto start = SteadyClock::now();
  uint64_t steps = 0;
  while (map.Grow(IdMap::kGrowthStep)) ++steps;
  ++steps;  // the last call's
  const double secs = Since(start);
  char note[128];
  std::snprintf(note, sizeof note, "steps of %zu users moved, %.1f us a step, %.1f ns a user",
                IdMap::kGrowthStep, secs * 1e6 / static_cast<double>(steps),
                secs * 1e9 / static_cast<double>(steps * IdMap::kGrowthStep));
  return Row("id_growth", steps, secs, note);
}

int OpenOnlyMain(const std::string& dir) {
  const auto start = SteadyClock::now();
  auto db = Db::Open(dir, BenchDbOptions(DurabilityMode::kEverySec));
  const double secs = Since(start);
  if (!db.ok()) {
    std::cout << db.status().ToString() << "\n";
    return 1;
  }
  std::cout << (*db)->recovery().snapshot_edges << ' ' << secs << "\n";
  std::cout.flush();
  // Skip the destructor's teardown of the loaded graph: the figure is the open, and the
  // process ends here.
  std::_Exit(0);
}

}  // namespace relgraph::bench
