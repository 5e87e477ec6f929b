// relgraph-bench: loads a generated or real follow graph into an embedded engine and runs the
// named workloads, one report row each. See --help and docs/benchmarks.md.
#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "relgraph_version.h"
#include "tools/bench/access_workloads.h"
#include "tools/bench/bench_flags.h"
#include "tools/bench/bench_report.h"
#include "tools/bench/cluster_workloads.h"
#include "tools/bench/design_workloads.h"
#include "tools/bench/durability_workloads.h"
#include "tools/bench/feed_workloads.h"
#include "tools/bench/group_writer.h"
#include "tools/bench/scale_run.h"
#include "tools/bench/server_workloads.h"
#include "tools/bench/stall_workloads.h"
#include "tools/bench/workload_generator.h"
#include "tools/bench/workloads.h"

namespace relgraph::bench {
namespace {

// The graph every workload uses: --dataset when given, else generated.
Result<GeneratedGraph> LoadOrGenerate(const Flags& flags) {
  if (!flags.dataset.empty()) return LoadDatasetEdges(flags.dataset, flags.id_offset);
  return GenerateGraph(flags.edges, flags.seed, flags.max_following, flags.shape);
}

// The billion-edge run's halves (tools/bench/scale_run.h).
int RunScaleTarget(const Flags& flags) {
  ScaleRunFlags sf;
  sf.edges = flags.edges;
  sf.seed = flags.seed;
  sf.max_following = flags.max_following;
  sf.time_resolution_ms = flags.time_resolution_ms;
  sf.shape = flags.shape;
  sf.data_dir = flags.data_dir;
  sf.server = flags.server;
  const std::string graph =
      "ScaleGenerator graph of " + std::to_string(flags.edges) + " edges (seed " +
      std::to_string(flags.seed) + ", reciprocity " + std::to_string(flags.shape.reciprocity) +
      (flags.shape.bursty_times ? ", bursty times)" : ", even times)");
  if (flags.target == "scale-build") {
    if (flags.data_dir.empty()) {
      std::cerr << "relgraph-bench: --target=scale-build needs --data-dir\n";
      return 2;
    }
    PrintHeader(std::cout, flags.csv,
                "target embedded, " + graph + ", snapshot into " + flags.data_dir);
    auto built = ScaleBuild(sf);
    if (!built.ok()) {
      std::cerr << "relgraph-bench: scale-build: " << built.status().ToString() << "\n";
      return 1;
    }
    PrintWorkload(std::cout, flags.csv, built->rows[0]);
    PrintMemory(std::cout, flags.csv, built->memory);
    PrintWorkload(std::cout, flags.csv, built->rows[1]);
    if (!flags.csv) {
      std::cout << "peak RSS of the build: " << built->peak_rss_bytes << " bytes\n";
    }
    return 0;
  }
  PrintHeader(std::cout, flags.csv,
              "target relgraphd " + flags.server.client.host + ":" +
                  std::to_string(flags.server.client.port) + ", " + graph);
  auto rows = ScaleQueries(sf);
  if (!rows.ok()) {
    std::cerr << "relgraph-bench: scale-server: " << rows.status().ToString() << "\n";
    return 1;
  }
  for (const WorkloadResult& r : *rows) PrintWorkload(std::cout, flags.csv, r);
  return 0;
}

// Generates (or loads) the graph here, then runs the rows against a server: relgraphd, Redis
// or PostgreSQL.
int RunRemoteTarget(const Flags& flags) {
  auto loaded = LoadOrGenerate(flags);
  if (!loaded.ok()) {
    std::cerr << "relgraph-bench: " << loaded.status().message() << "\n";
    return 1;
  }
  const GeneratedGraph data = std::move(*loaded);
  const bool relgraph = flags.target == "server";
  const auto& shared = DesignWorkloads::Names();
  const auto& own = ServerWorkloads::Names();
  std::set<std::string> wanted(flags.workloads.begin(), flags.workloads.end());
  if (wanted.empty()) {
    wanted.insert(shared.begin(), shared.end());
    if (relgraph) wanted.insert({"ping", "ping_unpipelined"});
  }
  for (const std::string& w : wanted) {
    if (std::find(shared.begin(), shared.end(), w) != shared.end()) continue;
    if (relgraph && std::find(own.begin(), own.end(), w) != own.end()) continue;
    std::cerr << "relgraph-bench: workload '" << w << "' does not run against " << flags.target
              << " (see --help)\n";
    return 2;
  }
  const std::string where = relgraph ? "relgraphd " + flags.server.client.host + ":" +
                                           std::to_string(flags.server.client.port)
                                     : flags.target;
  PrintHeader(std::cout, flags.csv,
              "target " + where + ", " + data.description + "; " +
                  std::to_string(flags.server.connections) + " connections, pipeline " +
                  std::to_string(flags.server.pipeline));
  auto fail = [](const std::string& name, const Status& s) {
    std::cerr << "relgraph-bench: " << name << ": " << s.ToString() << "\n";
    return 1;
  };
  DesignWorkloads rows(data, flags.server, flags.target, flags.max_following, flags.seed,
                       flags.no_load);
  for (const std::string& name : shared) {
    if (name != "load" && !wanted.count(name)) continue;
    auto r = rows.Run(name);
    if (!r.ok()) return fail(name, r.status());
    if (name == "load") {
      if (wanted.count("load") && !flags.no_load) PrintWorkload(std::cout, flags.csv, *r);
      if (!flags.csv) PrintMemory(std::cout, false, rows.memory());
    } else {
      PrintWorkload(std::cout, flags.csv, *r);
    }
  }
  if (relgraph) {
    ServerWorkloads workloads(data, flags.server, flags.seed);
    for (const std::string& name : own) {
      if (!wanted.count(name)) continue;
      auto r = workloads.Run(name);
      if (!r.ok()) return fail(name, r.status());
      PrintWorkload(std::cout, flags.csv, *r);
    }
  }
  if (flags.csv) PrintMemory(std::cout, true, rows.memory());
  return 0;
}

// Rows through a running cluster (cluster_workloads.h).
int RunClusterTarget(const Flags& flags) {
  ClusterBenchFlags cf;
  if (!flags.server.nats_url.empty()) cf.nats_url = flags.server.nats_url;
  cf.client = flags.server.client;
  cf.connections = flags.server.connections;
  cf.pipeline = flags.server.pipeline;
  cf.ops = flags.ops;
  cf.latency_ops = flags.server.latency_ops;
  cf.propagation_seconds = flags.propagation_seconds;
  cf.load_rate = flags.load_rate;
  const auto& names = ClusterWorkloadNames();
  for (const std::string& w : flags.workloads) {
    if (std::find(names.begin(), names.end(), w) == names.end()) {
      std::cerr << "relgraph-bench: workload '" << w << "' does not run against a cluster\n";
      return 2;
    }
  }
  PrintHeader(std::cout, flags.csv, "target cluster " + cf.nats_url);
  for (const std::string& name : names) {
    if (!flags.workloads.empty() &&
        std::find(flags.workloads.begin(), flags.workloads.end(), name) == flags.workloads.end())
      continue;
    auto r = RunClusterWorkload(name, cf);
    if (!r.ok()) {
      std::cerr << "relgraph-bench: " << name << ": " << r.status().ToString() << "\n";
      return 1;
    }
    PrintWorkload(std::cout, flags.csv, *r);
  }
  return 0;
}

// The durability rows wanted, in a scratch directory (or --data-dir); false when the scratch
// directory cannot be made.
bool RunDurabilityRows(const Flags& flags, const std::set<std::string>& wanted,
                       const GeneratedGraph& data, Graph* graph) {
  bool any = false;
  for (const std::string& name : DurabilityWorkloads::Names()) any |= wanted.count(name) > 0;
  if (!any) return true;
  DurabilityFlags df;
  df.wal_ops = flags.wal_ops;
  df.writers = static_cast<uint32_t>(flags.writers);
  df.dataset = flags.dataset;
  df.id_offset = flags.id_offset;
  bool remove_root = false;
  if (flags.data_dir.empty()) {
    char templ[] = "/tmp/relgraph-bench-XXXXXX";
    if (mkdtemp(templ) == nullptr) {
      std::cerr << "relgraph-bench: cannot create a scratch directory in /tmp\n";
      return false;
    }
    df.root = templ;
    remove_root = true;
  } else {
    df.root = flags.data_dir;
    std::filesystem::create_directories(df.root);
  }
  DurabilityWorkloads durability(data, graph, df);
  for (const std::string& name : DurabilityWorkloads::Names()) {
    if (!wanted.count(name)) continue;
    for (const WorkloadResult& r : durability.Run(name)) PrintWorkload(std::cout, flags.csv, r);
  }
  if (remove_root) std::filesystem::remove_all(df.root);
  return true;
}

int Main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (std::string(argv[i]) == "--version") {
      std::cout << "relgraph-bench " << kVersion << "\n";
      return 0;
    }
  }
  if (argc == 2 && std::string(argv[1]).rfind("--open-only=", 0) == 0)
    return OpenOnlyMain(std::string(argv[1]).substr(std::strlen("--open-only=")));
  Flags flags;
  if (Status s = ParseFlags(argc, argv, &flags); !s.ok()) {
    std::cerr << "relgraph-bench: " << s.message() << "\n(see --help)\n";
    return 2;
  }
  flags.server.ops = flags.ops;
  if (flags.target.starts_with("scale-")) return RunScaleTarget(flags);
  if (flags.target == "cluster") return RunClusterTarget(flags);
  if (flags.target == "group") {
    if (flags.group_nodes.empty()) {
      std::cerr << "relgraph-bench: --target=group needs --group-nodes=HOST:PORT,...\n";
      return 2;
    }
    GroupWriterFlags g;
    g.nodes = flags.group_nodes;
    g.connection = flags.server.client;
    g.writers = flags.server.connections;
    g.duration = std::chrono::seconds(flags.seconds);
    return RunGroupWriters(g, std::cout);
  }
  if (flags.target != "embedded") return RunRemoteTarget(flags);
  std::set<std::string> wanted(flags.workloads.begin(), flags.workloads.end());
  if (wanted.empty()) {
    wanted.insert(Workloads::Names().begin(), Workloads::Names().end());
    wanted.insert(DurabilityWorkloads::Names().begin(), DurabilityWorkloads::Names().end());
    wanted.insert(FeedWorkloads::Names().begin(), FeedWorkloads::Names().end());
    wanted.insert(AccessWorkloads::Names().begin(), AccessWorkloads::Names().end());
    wanted.insert(StallWorkloads::Names().begin(), StallWorkloads::Names().end());
  }
  bool needs_graph = false;
  for (const std::string& w : wanted) {
    const auto& g = Workloads::Names();
    const auto& f = FeedWorkloads::Names();
    const auto& a = AccessWorkloads::Names();
    needs_graph |= std::find(g.begin(), g.end(), w) != g.end() ||
                   std::find(f.begin(), f.end(), w) != f.end() ||
                   std::find(a.begin(), a.end(), w) != a.end() ||
                   DurabilityWorkloads::NeedsGraph(w);
  }

  auto loaded = LoadOrGenerate(flags);
  if (!loaded.ok()) {
    std::cerr << "relgraph-bench: " << loaded.status().message() << "\n";
    return 1;
  }
  const GeneratedGraph data = std::move(*loaded);

  GraphOptions options;
  options.max_following = flags.max_following;
  options.time_resolution_ms = flags.time_resolution_ms;
  options.rate_limit.enabled = false;  // a bulk load is an import; churn is not throttled either
  // Give memory the generator freed back to the system, or the graph would reuse it unseen.
  malloc_trim(0);
  const uint64_t rss_before = ResidentBytes();
  Graph graph(options);
  Workloads workloads(graph, data, flags.seed, flags.ops);

  PrintHeader(std::cout, flags.csv, "target embedded, " + data.description);
  MemoryRow memory;
  for (const std::string& name : Workloads::Names()) {
    if (!needs_graph) break;
    if (name != "load" && !wanted.count(name)) continue;
    const WorkloadResult r = workloads.Run(name);
    if (name == "load") {
      if (wanted.count("load")) PrintWorkload(std::cout, flags.csv, r);
      memory = MeasureGraphMemory(graph, rss_before);
      if (!flags.csv) PrintMemory(std::cout, false, memory);  // csv: the memory row comes last
    } else {
      PrintWorkload(std::cout, flags.csv, r);
    }
  }

  if (!RunDurabilityRows(flags, wanted, data, needs_graph ? &graph : nullptr)) return 1;
  // Feed workloads, over the loaded graph (they add one heavy reader's follows to it).
  FeedFlags ff;
  ff.readers = flags.feed_readers;
  ff.posts = flags.feed_posts;
  ff.ops = std::min<uint64_t>(flags.ops, 500'000);
  std::unique_ptr<FeedWorkloads> feed;
  for (const std::string& name : FeedWorkloads::Names()) {
    if (!wanted.count(name) || !needs_graph) continue;
    if (!feed) feed = std::make_unique<FeedWorkloads>(graph, ff, flags.seed);
    PrintWorkload(std::cout, flags.csv, feed->Run(name));
  }
  // Blocks and requests last: they remove and add edges.
  AccessWorkloads access(graph, data, flags.seed, flags.ops);
  for (const std::string& name : AccessWorkloads::Names()) {
    if (wanted.count(name) && needs_graph) PrintWorkload(std::cout, flags.csv, access.Run(name));
  }
  // Writer pauses, each on a Db of its own.
  StallWorkloads stalls(flags.seed);
  for (const std::string& name : StallWorkloads::Names()) {
    if (wanted.count(name)) PrintWorkload(std::cout, flags.csv, stalls.Run(name));
  }
  if (flags.csv && needs_graph) PrintMemory(std::cout, true, memory);
  return 0;
}

}  // namespace
}  // namespace relgraph::bench

int main(int argc, char** argv) {
  return relgraph::bench::Main(argc, argv);
}
