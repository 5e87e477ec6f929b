#include "tools/bench/scale_run.h"

#include <malloc.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <span>

#include "engine/durable/graph_snapshot.h"
#include "tools/bench/design_workloads.h"
#include "tools/bench/scale_generator.h"

namespace relgraph::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

double Since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

std::string Gib(uint64_t bytes) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2f GiB", static_cast<double>(bytes) / (1ULL << 30));
  return s;
}

// A uniform index in [0, n).
uint64_t Pick(std::mt19937_64& rng, uint64_t n) {
  return rng() % n;
}

// The operations of one row, drawn before the clock starts.
std::vector<Op> DrawOps(const std::string& row, const ScaleGenerator& gen, uint64_t n,
                        std::mt19937_64& rng) {
  std::vector<Op> ops(n);
  std::vector<UserId> followees;
  const UserId top = gen.TargetOfRank(0);
  // The follow and unfollow rows use the same pairs (same seed): a user that follows nobody
  // follows a target, and the unfollow row takes it back.
  std::mt19937_64 pair_rng(7);
  for (Op& op : ops) {
    if (row == "relation") {
      const uint64_t k = Pick(rng, gen.followers());
      op.kind = OpKind::kRelation;
      op.user = ScaleGenerator::IdOf(k);
      gen.FolloweesOf(k, &followees);
      op.other = rng() % 2 ? followees[Pick(rng, followees.size())]
                           : gen.TargetOfRank(Pick(rng, gen.targets()));
    } else if (row == "counts") {
      op.kind = OpKind::kCounts;
      op.user = rng() % 2 ? ScaleGenerator::IdOf(Pick(rng, gen.followers()))
                          : gen.TargetOfRank(Pick(rng, gen.targets()));
    } else if (row == "following_page") {
      op.kind = OpKind::kFollowingPage;
      op.user = ScaleGenerator::IdOf(Pick(rng, gen.followers()));
      op.viewer = ScaleGenerator::IdOf(Pick(rng, gen.followers()));
    } else if (row == "fans_page_deep") {
      // Any (time, user) is a valid cursor: a random time is a random depth in the top
      // account's fans, whose times span the generator's ten years.
      op.kind = OpKind::kFansPage;
      op.user = top;
      op.ts = ScaleGenerator::kEpochStart +
              static_cast<TimestampMs>(Pick(rng, ScaleGenerator::kSpanMs));
      op.cursor_user = UINT64_MAX;
    } else {  // follow, unfollow
      op.kind = row == "follow" ? OpKind::kFollow : OpKind::kUnfollow;
      const uint64_t idle = gen.users() - gen.followers();
      op.user = ScaleGenerator::IdOf(gen.followers() + Pick(pair_rng, idle));
      op.other = gen.TargetOfRank(Pick(pair_rng, gen.targets()));
    }
  }
  return ops;
}

}  // namespace

uint64_t PeakResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // in kB
  }
  return 0;
}

Result<ScaleBuildResult> ScaleBuild(const ScaleRunFlags& flags) {
  ScaleGenerator gen(flags.edges, flags.seed, flags.max_following, flags.shape);
  GraphOptions options;
  options.max_following = flags.max_following;
  options.time_resolution_ms = flags.time_resolution_ms;
  options.rate_limit.enabled = false;  // an import
  malloc_trim(0);
  const uint64_t rss_before = ResidentBytes();
  Graph graph(options);
  ScaleBuildResult out;

  std::vector<BenchEdge> window;
  std::vector<ImportEdge> edges;
  ImportStats total;
  double import_seconds = 0;
  while (gen.Next(&window)) {  // generating is not timed, importing is
    edges.resize(window.size());
    for (size_t i = 0; i < window.size(); ++i) {
      edges[i] = {window[i].follower, window[i].followee, window[i].ts};
    }
    const auto start = SteadyClock::now();
    auto stats = graph.Import(edges);
    import_seconds += Since(start);
    if (!stats.ok()) return stats.status();
    total += *stats;
  }
  out.memory = MeasureGraphMemory(graph, rss_before);
  out.rows.push_back(Summarize("scale_import", total.added, import_seconds, {},
                               std::to_string(total.added) + " edges kept over " +
                                   std::to_string(graph.user_count()) + " users (" +
                                   std::to_string(total.over_cap) + " over the cap, " +
                                   std::to_string(total.duplicates) +
                                   " duplicates); peak RSS so far " + Gib(PeakResidentBytes())));

  std::filesystem::create_directories(flags.data_dir);
  const auto start = SteadyClock::now();
  auto info = WriteGraphSnapshot(Env::Posix(), flags.data_dir, graph, 0);
  if (!info.ok()) return info.status();
  char note[160];
  std::snprintf(note, sizeof note, "%s on disk = %.2f B/edge (%s raw)",
                Gib(info->file_bytes).c_str(),
                static_cast<double>(info->file_bytes) / static_cast<double>(info->edges),
                Gib(info->raw_bytes).c_str());
  out.rows.push_back(Summarize("scale_snapshot_write", info->edges, Since(start), {}, note));
  out.peak_rss_bytes = PeakResidentBytes();
  return out;
}

Result<std::vector<WorkloadResult>> ScaleQueries(const ScaleRunFlags& flags) {
  ScaleGenerator gen(flags.edges, flags.seed, flags.max_following, flags.shape);
  auto design = ConnectDesign("server", flags.server.client, flags.max_following);
  if (!design.ok()) return design.status();
  std::mt19937_64 rng(flags.seed);
  std::vector<WorkloadResult> rows;
  std::vector<Answer> answers;
  Op top_counts;
  top_counts.kind = OpKind::kCounts;
  top_counts.user = gen.TargetOfRank(0);
  auto top = (*design)->Execute(std::span<const Op>(&top_counts, 1), &answers);
  if (!top.ok()) return top.status();
  const std::string top_fans = std::to_string(answers[0].fans);
  for (const char* row :
       {"relation", "counts", "following_page", "fans_page_deep", "follow", "unfollow"}) {
    const std::vector<Op> ops = DrawOps(row, gen, flags.server.latency_ops, rng);
    std::vector<double> micros;
    ErrorTally errors;
    uint64_t changed = 0, entries = 0;
    const auto start = SteadyClock::now();
    RELGRAPH_RETURN_IF_ERROR(RunUnpipelined(
        **design, ops.size(), [&](uint64_t i) { return ops[i]; }, &micros, &errors,
        [&](const Op&, const Answer& a) {
          changed += a.changed;
          entries += a.entries.size();
        }));
    std::string note;
    const std::string name = row;
    if (name == "follow" || name == "unfollow")
      note = std::to_string(changed) + " of them changed the graph";
    if (entries > 0) note = std::to_string(entries / ops.size()) + " entries per page";
    if (name == "fans_page_deep") note += "; the top account has " + top_fans + " fans";
    if (const std::string e = errors.Note(); !e.empty()) note += (note.empty() ? "" : "; ") + e;
    rows.push_back(Summarize(std::string(row) + "_unpipelined", ops.size(), Since(start),
                             std::move(micros), note));
  }
  return rows;
}

}  // namespace relgraph::bench
