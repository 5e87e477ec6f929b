// relgraph-bench: loads a generated or real follow graph into an embedded engine and runs the
// named workloads, one report row each. See --help and docs/benchmarks.md.
#include <malloc.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "tools/bench/bench_report.h"
#include "tools/bench/workload_generator.h"
#include "tools/bench/workloads.h"

namespace relgraph::bench {
namespace {

constexpr const char* kUsage = R"(usage: relgraph-bench [flags]

Loads a follow graph into relgraph and measures workloads, one row each.

  --target=embedded      where to run: embedded (in-process engine; the server target comes later)
  --edges=N              edges to generate (default 10000000)
  --seed=S               generator and sampling seed (default 1)
  --dataset=PATH         load a SNAP edge list (plain or .gz) instead of generating
  --id-offset=N          add N to every id of --dataset (use 1 for 0-based files; default 0)
  --max-following=N      the follow cap (default 1000)
  --workloads=a,b,...    subset to run (default: all), from:
                         load relation relations_batch following_page fans_page_deep
                         friends_page counts known_followers churn
  --ops=N                operations per query workload (default 2000000)
  --format=text|csv      output format (default text)
  --help                 this text

The graph is always loaded; `load` only decides whether its row is printed.
)";

struct Flags {
  std::string target = "embedded";
  uint64_t edges = 10'000'000;
  uint64_t seed = 1;
  std::string dataset;
  uint64_t id_offset = 0;
  uint32_t max_following = 1000;
  std::vector<std::string> workloads;
  uint64_t ops = 2'000'000;
  bool csv = false;
};

bool ParseUint(const std::string& s, uint64_t* out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = std::strtoull(s.c_str(), nullptr, 10);
  return true;
}

Status ParseFlags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string key = arg.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    uint64_t n = 0;
    auto number = [&](uint64_t* out) -> Status {
      if (!ParseUint(value, &n)) return Status::InvalidArgument(key + " needs a whole number, got '" + value + "'");
      *out = n;
      return Status::OK();
    };
    if (key == "--target") {
      if (value != "embedded") {
        return Status::InvalidArgument("--target=" + value + " is not available; use --target=embedded");
      }
      f->target = value;
    } else if (key == "--edges") {
      RELGRAPH_RETURN_IF_ERROR(number(&f->edges));
      if (f->edges < 100) return Status::InvalidArgument("--edges must be at least 100");
    } else if (key == "--seed") {
      RELGRAPH_RETURN_IF_ERROR(number(&f->seed));
    } else if (key == "--dataset") {
      f->dataset = value;
    } else if (key == "--id-offset") {
      RELGRAPH_RETURN_IF_ERROR(number(&f->id_offset));
    } else if (key == "--max-following") {
      uint64_t cap = 0;
      RELGRAPH_RETURN_IF_ERROR(number(&cap));
      if (cap < 1 || cap > kMaxFollowingLimit) return Status::InvalidArgument("--max-following out of range");
      f->max_following = static_cast<uint32_t>(cap);
    } else if (key == "--ops") {
      RELGRAPH_RETURN_IF_ERROR(number(&f->ops));
      if (f->ops < 100) return Status::InvalidArgument("--ops must be at least 100");
    } else if (key == "--format") {
      if (value != "text" && value != "csv") return Status::InvalidArgument("--format is text or csv");
      f->csv = value == "csv";
    } else if (key == "--workloads") {
      const std::set<std::string> known(Workloads::Names().begin(), Workloads::Names().end());
      std::stringstream ss(value);
      std::string w;
      while (std::getline(ss, w, ',')) {
        if (!known.count(w)) return Status::InvalidArgument("unknown workload '" + w + "'");
        f->workloads.push_back(w);
      }
    } else {
      return Status::InvalidArgument("unknown flag '" + arg + "'");
    }
  }
  return Status::OK();
}

int Main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::cout << kUsage;
      return 0;
    }
  }
  Flags flags;
  if (Status s = ParseFlags(argc, argv, &flags); !s.ok()) {
    std::cerr << "relgraph-bench: " << s.message() << "\n(see --help)\n";
    return 2;
  }
  std::set<std::string> wanted(flags.workloads.begin(), flags.workloads.end());
  if (wanted.empty()) wanted.insert(Workloads::Names().begin(), Workloads::Names().end());

  GeneratedGraph data;
  if (!flags.dataset.empty()) {
    auto loaded = LoadDatasetEdges(flags.dataset, flags.id_offset);
    if (!loaded.ok()) {
      std::cerr << "relgraph-bench: " << loaded.status().message() << "\n";
      return 1;
    }
    data = std::move(*loaded);
  } else {
    data = GenerateGraph(flags.edges, flags.seed, flags.max_following);
  }

  GraphOptions options;
  options.max_following = flags.max_following;
  options.rate_limit.enabled = false;  // a bulk load is an import; churn is not throttled either
  // Give memory the generator freed back to the system, or the graph would reuse it unseen.
  malloc_trim(0);
  const uint64_t rss_before = ResidentBytes();
  Graph graph(options);
  Workloads workloads(graph, data, flags.seed, flags.ops);

  PrintHeader(std::cout, flags.csv, data.description);
  MemoryRow memory;
  for (const std::string& name : Workloads::Names()) {
    if (name != "load" && !wanted.count(name)) continue;
    const WorkloadResult r = workloads.Run(name);
    if (name == "load") {
      if (wanted.count("load")) PrintWorkload(std::cout, flags.csv, r);
      MemoryRow m;
      m.users = graph.user_count();
      m.edges = graph.edge_count();
      m.rss_bytes = ResidentBytes() - rss_before;
      const MemoryUsage u = graph.Memory();
      m.engine_bytes = u.total();
      std::ostringstream b;
      b << "ids " << u.id_map / (1 << 20) << " MiB, users " << u.user_records / (1 << 20)
        << " MiB, edges " << u.edge_blocks / (1 << 20) << " MiB reserved / "
        << u.edge_blocks_live / (1 << 20) << " MiB in lists, fan index "
        << u.fan_index / (1 << 20) << " MiB";
      m.breakdown = b.str();
      if (!flags.csv) PrintMemory(std::cout, false, m);  // csv: the memory row comes last
      memory = m;
    } else {
      PrintWorkload(std::cout, flags.csv, r);
    }
  }
  if (flags.csv) PrintMemory(std::cout, true, memory);
  return 0;
}

}  // namespace
}  // namespace relgraph::bench

int main(int argc, char** argv) { return relgraph::bench::Main(argc, argv); }
