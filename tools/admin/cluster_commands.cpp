#include "tools/admin/cluster_commands.h"

#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "net/cluster/nats_link.h"
#include "net/tls/tls_flags.h"
#include "net/cluster/placement.h"
#include "tools/admin/bucket_move.h"
#include "tools/admin/map_backup.h"

namespace relgraph::admin {
namespace {

constexpr const char* kInitUsage =
    R"(  cluster init --nats=URL --shards=ID=HOST:PORT[+HOST:PORT...][@GROUP],... [--buckets=N]
               [--nats-replicas=N] [--force]
                            create a cluster's shard map (docs/cluster.md): the shards
                            own equal ranges of the buckets (4096 by default); a shard
                            listing several members joined by + is served by a
                            replication group (named GROUP, else shard-ID); the
                            key-value bucket and streams get N copies (1 by default, 3
                            on a three-node NATS cluster). Refused when a shard holds
                            another map (after a lost JetStream store: import-map) or
                            does not answer, unless --force
)";
constexpr const char* kExportUsage =
    R"(  cluster export-map --nats=URL [--out=FILE]
                            write the shard map with its version to FILE (or stdout),
                            a backup import-map restores
)";
constexpr const char* kImportUsage =
    R"(  cluster import-map --nats=URL --in=FILE [--nats-replicas=N] [--force]
                            restore a shard map (export-map's file, or a shard's
                            DATADIR/cluster-map) into a JetStream that lost it. Refused
                            when NATS holds a map, when a shard holds a different newer
                            map, or when a shard does not answer, unless --force
)";
constexpr const char* kShowUsage =
    R"(  cluster show --nats=URL   print the shard map, with each shard's bucket count
)";
constexpr const char* kMoveUsage =
    R"(  cluster move-bucket --nats=URL --buckets=FIRST[-LAST] --to=ID [--timeout-ms=120000]
                            move buckets of one shard to shard ID online; run it again
                            to finish a move that was interrupted
)";
constexpr const char* kCommands = "init, show, move-bucket, export-map or import-map";
constexpr const char* kTail = R"(
--nats defaults to nats://127.0.0.1:4222; it takes a comma-separated list of the servers of
one NATS cluster (nats://127.0.0.1:4222,nats://127.0.0.1:4223,...).
Exit status: 0 on success, 1 on failure, 2 on a usage error.
)";

// `relgraph-admin cluster [SUBCOMMAND] --help`: the usage of one subcommand, or of all.
int Help(const std::vector<std::string>& positional, std::ostream& out, std::ostream& err) {
  const std::string what = positional.empty() ? "" : positional[0];
  const char* one = what == "init"          ? kInitUsage
                    : what == "show"        ? kShowUsage
                    : what == "move-bucket" ? kMoveUsage
                    : what == "export-map"  ? kExportUsage
                    : what == "import-map"  ? kImportUsage
                                            : nullptr;
  if (!what.empty() && one == nullptr) {
    err << "relgraph-admin cluster: unknown cluster command '" << what << "' (" << kCommands
        << ")\n";
    return 2;
  }
  out << "usage: relgraph-admin cluster " << (what.empty() ? "COMMAND" : what)
      << " [FLAGS] [--help]\n\n";
  if (one != nullptr) {
    out << one;
  } else {
    out << "The shard map of a relgraph cluster on NATS JetStream (docs/cluster.md).\n\n"
        << kInitUsage << kShowUsage << kMoveUsage << kExportUsage << kImportUsage;
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

// "1=10.0.0.1:7707,2=10.0.0.2:7707" -> shards; a shard served by a replication group lists
// its members joined by '+' and may name the group after '@' ("1=a:7707+b:7707@users-1";
// without a name, "shard-ID"). kInvalidArgument naming the bad item.
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
      return Status::InvalidArgument("--shards item '" + item +
                                     "', expected ID=HOST:PORT[+HOST:PORT...][@GROUP]");
    }
    net::ShardInfo shard{id, ""};
    std::string addresses = item.substr(eq + 1);
    if (const size_t name = addresses.find('@'); name != std::string::npos) {
      shard.group = addresses.substr(name + 1);
      addresses.resize(name);
    }
    for (size_t from = 0;;) {
      const size_t plus = addresses.find('+', from);
      shard.members.push_back(addresses.substr(from, plus - from));
      if (plus == std::string::npos) break;
      from = plus + 1;
    }
    shard.address = shard.members.front();
    if (shard.members.size() > 1 && shard.group.empty()) {
      shard.group = "shard-" + std::to_string(id);
    }
    if (shard.group.empty()) shard.members.clear();  // one node, no group
    shards.push_back(std::move(shard));
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
  out << "shard map ";
  if (m.generation > 1) out << "generation " << m.generation << " ";
  out << "version " << m.version << ", " << m.buckets << " buckets\n";
  const std::vector<uint32_t> counts = m.BucketCounts();
  for (size_t i = 0; i < m.shards.size(); ++i) {
    const net::ShardInfo& shard = m.shards[i];
    out << "  shard " << shard.id << " at " << shard.address;
    if (!shard.group.empty()) {
      out << " (group " << shard.group << ":";
      for (const std::string& member : shard.members) out << " " << member;
      out << ")";
    }
    out << ": " << counts[i] << " buckets\n";
  }
  out << "\n" << net::EncodeShardMap(m);
}

// export-map: the map with its version to `path` (written whole, then renamed over it) or,
// with no path, to `out`.
int ExportMapCommand(const std::string& url, const std::string& path, std::ostream& out,
                     std::ostream& err) {
  auto map = ExportMap(url);
  if (!map.ok()) return Fail(err, "export-map", map.status());
  const std::string text = net::EncodeVersionedShardMap(*map);
  if (path.empty()) {
    out << text;
    return 0;
  }
  const std::string temp = path + ".tmp";
  {
    std::ofstream f(temp, std::ios::binary | std::ios::trunc);
    f << text;
    f.flush();
    if (!f) return Fail(err, "export-map", Status(Code::kIOError, "cannot write " + temp));
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    return Fail(err, "export-map", Status(Code::kIOError, "cannot rename " + temp + " to " + path));
  }
  out << "shard map "
      << (map->generation > 1 ? "generation " + std::to_string(map->generation) + " " : "")
      << "version " << map->version << " written to " << path << "\n";
  return 0;
}

}  // namespace

int ClusterCommand(const std::vector<std::string>& positional,
                   const std::map<std::string, std::string>& flags, bool help, std::ostream& out,
                   std::ostream& err) {
  if (help) return Help(positional, out, err);
  if (positional.size() != 1) return Usage(err, std::string("expected ") + kCommands);
  const std::string& what = positional[0];
  auto flag = [&](const char* name) {
    auto it = flags.find(name);
    return it == flags.end() ? std::string() : it->second;
  };
  // The shards' token and TLS, and NATS's TLS: every subcommand takes them.
  net::ClientOptions client;
  net::NatsTlsOptions nats_tls;
  for (const auto& [name, value] : flags) {
    const std::string arg = value.empty() ? name : name + "=" + value;
    if (name == "--token") {
      client.token = value;
      continue;
    }
    auto tls = net::ApplyTlsFlag(arg, &client.tls);
    if (!tls.ok()) return Usage(err, tls.status().message());
    if (*tls) continue;
    auto nats = net::ApplyNatsTlsFlag(arg, &nats_tls);
    if (!nats.ok()) return Usage(err, nats.status().message());
    if (*nats) continue;
    const bool known = name == "--nats" ||
                       (what == "init" && (name == "--shards" || name == "--buckets" ||
                                           name == "--nats-replicas" || name == "--force")) ||
                       (what == "export-map" && name == "--out") ||
                       (what == "import-map" &&
                        (name == "--in" || name == "--nats-replicas" || name == "--force")) ||
                       (what == "move-bucket" &&
                        (name == "--buckets" || name == "--to" || name == "--timeout-ms"));
    if (!known) return Usage(err, "unknown flag " + name + " for " + what);
  }
  const std::string url = flag("--nats").empty() ? "nats://127.0.0.1:4222" : flag("--nats");
  if (auto servers = net::ParseNatsServers(url); !servers.ok()) {
    return Usage(err, "--nats: " + servers.status().message());
  }
  net::SetNatsTls(nats_tls);
  MapWriteRequest seed;
  seed.nats_url = url;
  seed.client = client;
  seed.force = flags.contains("--force");
  if (!flag("--nats-replicas").empty() && (!ParseNumber(flag("--nats-replicas"), &seed.replicas) ||
                                           seed.replicas < 1 || seed.replicas > 5)) {
    return Usage(err, "--nats-replicas takes 1 to 5, not '" + flag("--nats-replicas") + "'");
  }
  auto warn = [&err](const std::string& line) { err << line << "\n"; };
  if (what == "export-map") return ExportMapCommand(url, flag("--out"), out, err);
  if (what == "import-map") {
    if (flag("--in").empty()) return Usage(err, "import-map needs --in=FILE");
    std::ifstream in(flag("--in"), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return Fail(err, what, Status::NotFound("cannot read " + flag("--in")));
    auto map = net::ParseVersionedShardMap(text.str());
    if (!map.ok())
      return Fail(err, what, Status::InvalidArgument(flag("--in") + ": " + map.status().message()));
    seed.map = std::move(*map);
    auto written = WriteSeedMap(seed, MapWrite::kImport, warn);
    if (!written.ok()) return Fail(err, what, written.status());
    Print(*written, out);
    return 0;
  }
  if (what == "init") {
    if (flag("--shards").empty())
      return Usage(err, "init needs --shards=ID=HOST:PORT[+HOST:PORT...][@GROUP],...");
    auto shards = ParseShards(flag("--shards"));
    if (!shards.ok()) return Usage(err, shards.status().message());
    uint32_t buckets = net::kDefaultBuckets;
    if (!flag("--buckets").empty() && !ParseNumber(flag("--buckets"), &buckets)) {
      return Usage(err, "--buckets takes a number, not '" + flag("--buckets") + "'");
    }
    auto map = net::EvenShardMap(std::move(*shards), buckets);
    if (!map.ok()) return Usage(err, map.status().message());
    seed.map = std::move(*map);
    auto written = WriteSeedMap(seed, MapWrite::kInit, warn);
    if (!written.ok()) return Fail(err, what, written.status());
    Print(*written, out);
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
    request.client = client;
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
  return Usage(err, "unknown cluster command '" + what + "' (" + kCommands + ")");
}

}  // namespace relgraph::admin
