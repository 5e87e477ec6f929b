#include "tools/bench/bench_report.h"

#include <cstdio>
#include <iomanip>
#include <sstream>

namespace relgraph::bench {
namespace {

// A CSV field: quoted, with quotes doubled.
std::string CsvText(const std::string& text) {
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

void PrintHeader(std::ostream& out, bool csv, const std::string& description) {
  if (csv) {
    out << "workload,ops,seconds,ops_per_sec,p50_us,p99_us,note\n";
    return;
  }
  out << "relgraph-bench, " << description << "\n";
  out << std::left << std::setw(34) << "workload" << std::right << std::setw(12) << "ops"
      << std::setw(10) << "seconds" << std::setw(14) << "ops/s" << std::setw(10) << "p50 us"
      << std::setw(10) << "p99 us"
      << "\n";
}

void PrintWorkload(std::ostream& out, bool csv, const WorkloadResult& r) {
  char line[256];
  if (csv) {
    std::snprintf(line, sizeof line, "%s,%llu,%.4f,%.0f,%.3f,%.3f,", r.name.c_str(),
                  static_cast<unsigned long long>(r.ops), r.seconds, r.ops_per_sec(), r.p50_us,
                  r.p99_us);
    out << line << CsvText(r.note) << "\n";
    return;
  }
  if (r.p50_us == 0 && r.p99_us == 0) {  // a workload timed as a whole: no per-op latency
    std::snprintf(line, sizeof line, "%-34s%12llu%10.3f%14.0f%10s%10s", r.name.c_str(),
                  static_cast<unsigned long long>(r.ops), r.seconds, r.ops_per_sec(), "-", "-");
  } else {
    std::snprintf(line, sizeof line, "%-34s%12llu%10.3f%14.0f%10.3f%10.3f", r.name.c_str(),
                  static_cast<unsigned long long>(r.ops), r.seconds, r.ops_per_sec(), r.p50_us,
                  r.p99_us);
  }
  out << line;
  if (!r.note.empty()) out << "   (" << r.note << ")";
  out << "\n";
  out.flush();
}

void PrintMemory(std::ostream& out, bool csv, const MemoryRow& m) {
  char line[256];
  if (csv) {
    std::snprintf(line, sizeof line, "memory,%llu,%llu,%llu,%.2f,",
                  static_cast<unsigned long long>(m.users),
                  static_cast<unsigned long long>(m.edges),
                  static_cast<unsigned long long>(m.rss_bytes), m.bytes_per_edge());
    const std::string note = m.source.empty()
                                 ? "resident memory the graph added; engine: " + m.breakdown
                                 : m.source + ": " + m.breakdown;
    out << line << CsvText(note) << "\n";
    return;
  }
  if (!m.source.empty()) {
    std::snprintf(line, sizeof line, "memory: %llu edges, %.1f MiB by %s = %.2f bytes/edge (",
                  static_cast<unsigned long long>(m.edges),
                  static_cast<double>(m.rss_bytes) / (1 << 20), m.source.c_str(),
                  m.bytes_per_edge());
    out << line << m.breakdown << ")\n";
    return;
  }
  std::snprintf(
      line, sizeof line,
      "memory: %llu users, %llu edges, %.1f MiB resident added by the graph = %.2f bytes/edge"
      " (engine accounts %.2f bytes/edge: %s)\n",
      static_cast<unsigned long long>(m.users), static_cast<unsigned long long>(m.edges),
      static_cast<double>(m.rss_bytes) / (1 << 20), m.bytes_per_edge(),
      m.edges ? static_cast<double>(m.engine_bytes) / m.edges : 0.0, m.breakdown.c_str());
  out << line;
}

// The memory row after `load`: resident bytes the graph added, and the engine's own count.
MemoryRow MeasureGraphMemory(const Graph& graph, uint64_t rss_before) {
  MemoryRow m;
  m.users = graph.user_count();
  m.edges = graph.edge_count();
  m.rss_bytes = ResidentBytes() - rss_before;
  const MemoryUsage u = graph.Memory();
  m.engine_bytes = u.total();
  std::ostringstream b;
  b << "ids " << u.id_map / (1 << 20) << " MiB, users " << u.user_records / (1 << 20)
    << " MiB, edges " << u.edge_blocks / (1 << 20) << " MiB reserved / "
    << u.edge_blocks_live / (1 << 20) << " MiB in lists, fan index " << u.fan_index / (1 << 20)
    << " MiB";
  m.breakdown = b.str();
  return m;
}

}  // namespace relgraph::bench
