#include "tools/admin/cluster_commands.h"

#include <charconv>
#include <cstdio>

#include "net/cluster/nats_link.h"
#include "net/cluster/placement.h"
#include "tools/admin/bucket_move.h"

namespace relgraph::admin {
namespace {

constexpr const char* kInitUsage =
    R"(  cluster init --nats=URL --shards=ID=HOST:PORT,... [--buckets=N]
                            create a cluster's shard map (docs/cluster.md): the shards
                            own equal ranges of the buckets (4096 by default)
)";
constexpr const char* kShowUsage =
    R"(  cluster show --nats=URL   print the shard map, with each shard's bucket count
)";
constexpr const char* kMoveUsage =
    R"(  cluster move-bucket --nats=URL --buckets=FIRST[-LAST] --to=ID [--timeout-ms=120000]
                            move buckets of one shard to shard ID online; run it again
                            to finish a move that was interrupted
)";
constexpr const char* kTail = R"(
--nats defaults to nats://127.0.0.1:4222.
Exit status: 0 on success, 1 on failure, 2 on a usage error.
)";

// `relgraph-admin cluster [SUBCOMMAND] --help`: the usage of one subcommand, or of all.
int Help(const std::vector<std::string>& positional, std::ostream& out, std::ostream& err) {
  const std::string what = positional.empty() ? "" : positional[0];
  const char* one = what == "init"          ? kInitUsage
                    : what == "show"        ? kShowUsage
                    : what == "move-bucket" ? kMoveUsage
                                            : nullptr;
  if (!what.empty() && one == nullptr) {
    err << "relgraph-admin cluster: unknown cluster command '" << what
        << "' (init, show or move-bucket)\n";
    return 2;
  }
  out << "usage: relgraph-admin cluster " << (what.empty() ? "COMMAND" : what)
      << " [FLAGS] [--help]\n\n";
  if (one != nullptr) {
    out << one;
  } else {
    out << "The shard map of a relgraph cluster on NATS JetStream (docs/cluster.md).\n\n"
        << kInitUsage << kShowUsage << kMoveUsage;
  }
  out << kTail;
  return 0;
}

int Fail(std::ostream& err, const std::string& what, const Status& s) {
  err << "relgraph-admin cluster " << what << ": " << s.message() << "\n";
  return 1;
}

int Usage(std::ostream& err, const std::string& what) {
  err << "relgraph-admin cluster: " << what << " (see relgraph-admin cluster --help)\n";
  return 2;
}

// "1=10.0.0.1:7707,2=10.0.0.2:7707" -> shards; kInvalidArgument naming the bad item.
Result<std::vector<net::ShardInfo>> ParseShards(const std::string& list) {
  std::vector<net::ShardInfo> shards;
  size_t at = 0;
  while (at <= list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    const std::string item = list.substr(at, comma - at);
    const size_t eq = item.find('=');
    uint32_t id = 0;
    if (eq == std::string::npos ||
        std::from_chars(item.data(), item.data() + eq, id).ptr != item.data() + eq) {
      return Status::InvalidArgument("--shards item '" + item + "', expected ID=HOST:PORT");
    }
    shards.push_back({id, item.substr(eq + 1)});
    at = comma + 1;
  }
  return shards;
}

template <typename T>
bool ParseNumber(const std::string& s, T* out) {
  return !s.empty() &&
         std::from_chars(s.data(), s.data() + s.size(), *out).ptr == s.data() + s.size();
}

void Print(const net::ShardMap& m, std::ostream& out) {
  out << "shard map version " << m.version << ", " << m.buckets << " buckets\n";
  const std::vector<uint32_t> counts = m.BucketCounts();
  for (size_t i = 0; i < m.shards.size(); ++i) {
    out << "  shard " << m.shards[i].id << " at " << m.shards[i].address << ": " << counts[i]
        << " buckets\n";
  }
  out << "\n" << net::EncodeShardMap(m);
}

}  // namespace

int ClusterCommand(const std::vector<std::string>& positional,
                   const std::map<std::string, std::string>& flags, bool help, std::ostream& out,
                   std::ostream& err) {
  if (help) return Help(positional, out, err);
  if (positional.size() != 1) return Usage(err, "expected init, show or move-bucket");
  const std::string& what = positional[0];
  auto flag = [&](const char* name) {
    auto it = flags.find(name);
    return it == flags.end() ? std::string() : it->second;
  };
  for (const auto& [name, value] : flags) {
    const bool known = name == "--nats" ||
                       (what == "init" && (name == "--shards" || name == "--buckets")) ||
                       (what == "move-bucket" &&
                        (name == "--buckets" || name == "--to" || name == "--timeout-ms"));
    if (!known) return Usage(err, "unknown flag " + name + " for " + what);
  }
  const std::string url = flag("--nats").empty() ? "nats://127.0.0.1:4222" : flag("--nats");
  if (what == "init") {
    if (flag("--shards").empty()) return Usage(err, "init needs --shards=ID=HOST:PORT,...");
    auto shards = ParseShards(flag("--shards"));
    if (!shards.ok()) return Usage(err, shards.status().message());
    uint32_t buckets = net::kDefaultBuckets;
    if (!flag("--buckets").empty() && !ParseNumber(flag("--buckets"), &buckets)) {
      return Usage(err, "--buckets takes a number, not '" + flag("--buckets") + "'");
    }
    auto map = net::EvenShardMap(std::move(*shards), buckets);
    if (!map.ok()) return Usage(err, map.status().message());
    auto link = net::NatsLink::Connect(url);
    if (!link.ok()) return Fail(err, what, link.status());
    auto version = (*link)->CreateMap(*map);
    if (!version.ok()) return Fail(err, what, version.status());
    map->version = *version;
    Print(*map, out);
    return 0;
  }
  if (what == "show") {
    auto link = net::NatsLink::Connect(url);
    if (!link.ok()) return Fail(err, what, link.status());
    auto map = (*link)->ReadMap();
    if (!map.ok()) return Fail(err, what, map.status());
    Print(*map, out);
    return 0;
  }
  if (what == "move-bucket") {
    BucketMoveRequest request;
    request.nats_url = url;
    const std::string buckets = flag("--buckets");
    const size_t dash = buckets.find('-');
    const std::string first = buckets.substr(0, dash);
    const std::string last = dash == std::string::npos ? first : buckets.substr(dash + 1);
    uint64_t timeout_ms = 120000;
    if (!ParseNumber(first, &request.first) || !ParseNumber(last, &request.last)) {
      return Usage(err, "move-bucket needs --buckets=FIRST[-LAST], not '" + buckets + "'");
    }
    if (!ParseNumber(flag("--to"), &request.to)) {
      return Usage(err, "move-bucket needs --to=SHARD_ID, not '" + flag("--to") + "'");
    }
    if (!flag("--timeout-ms").empty() && !ParseNumber(flag("--timeout-ms"), &timeout_ms)) {
      return Usage(err, "--timeout-ms takes a number, not '" + flag("--timeout-ms") + "'");
    }
    request.timeout = std::chrono::milliseconds(timeout_ms);
    auto report = MoveBuckets(request, [&out](const std::string& line) { out << line << "\n"; });
    if (!report.ok()) return Fail(err, what, report.status());
    char line[256];
    std::snprintf(line, sizeof line,
                  "moved in %.0f ms: prepare %.0f ms, drain %.0f ms, copy %.0f ms; commands "
                  "about the buckets paused %.0f ms%s\n",
                  report->total_ms, report->prepare_ms, report->drain_ms, report->copy_ms,
                  report->pause_ms,
                  report->pause_from_flip ? ""
                                          : " (at least: the map has no flip time, so counted "
                                            "from this run's start)");
    out << line;
    return 0;
  }
  return Usage(err, "unknown cluster command '" + what + "' (init, show or move-bucket)");
}

}  // namespace relgraph::admin
