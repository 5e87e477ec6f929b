#include "tools/admin/map_backup.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "net/client/client.h"

namespace relgraph::admin {
namespace {

std::string Describe(const ShardMapReport& r) {
  return "shard " + std::to_string(r.id) + " at " + r.address;
}

std::string MapName(uint64_t generation, uint64_t version) {
  return "generation " + std::to_string(generation) + " version " + std::to_string(version);
}

}  // namespace

std::vector<ShardMapReport> AskShards(const net::ShardMap& map, const net::ClientOptions& client) {
  std::vector<ShardMapReport> reports;
  for (const net::ShardInfo& shard : map.shards) {
    for (const std::string& address : shard.Addresses()) {  // every member of a group
      ShardMapReport r;
      r.id = shard.id;
      r.address = address;
      net::ClientOptions o = client;
      o.connect_timeout = std::chrono::milliseconds(2000);
      o.io_timeout = std::chrono::milliseconds(5000);
      r.reached = net::ParseHostPort(address, &o.host, &o.port);
      if (r.reached.ok()) {
        auto shard_client = net::Client::Connect(o);
        auto info = shard_client.ok() ? (*shard_client)->Info()
                                     : Result<net::InfoReply>(shard_client.status());
        if (info.ok()) {
          std::map<std::string, uint64_t> f;
          for (const net::InfoField& field : info->fields) f[field.name] = field.value;
          r.holds_map = f["cluster_map_version"] > 0;
          // A shard of a release before generations holds generation 1.
          r.generation = f.contains("cluster_map_generation") ? f["cluster_map_generation"] : 1;
          r.version = f["cluster_map_version"];
          r.digest = f["cluster_map_digest"];
        } else {
          r.reached = info.status();
          r.listening = r.reached.message().find(std::strerror(ECONNREFUSED)) == std::string::npos;
        }
      }
      reports.push_back(std::move(r));
    }
  }
  return reports;
}

Status CheckShardMaps(const net::ShardMap& writing, const std::vector<ShardMapReport>& reports,
                      MapWrite kind, bool force,
                      const std::function<void(const std::string&)>& warn) {
  const uint64_t digest = net::ShardMapDigest(writing);
  std::string refusals;
  bool conflict = false;
  for (const ShardMapReport& r : reports) {
    std::string why;
    if (!r.listening) {
      warn("note: " + Describe(r) +
           " is not running (nothing listens there), so it was not asked; when it starts, it "
           "will not join if the map saved in its data directory is newer and different");
      continue;
    }
    if (!r.reached.ok()) {
      why = Describe(r) + " did not answer (" + r.reached.message() +
            "), so the map it holds is unknown";
    } else if (r.holds_map && r.digest != digest) {
      net::ShardMap held;
      held.generation = r.generation;
      held.version = r.version;
      if (kind == MapWrite::kInit) {
        why = Describe(r) + " holds shard map " + MapName(r.generation, r.version) +
              ", which differs from the map being written (buckets moved, or other shards)";
        conflict = true;
      } else if (held.NewerThan(writing)) {
        why = Describe(r) + " holds shard map " + MapName(r.generation, r.version) +
              ", newer than the file's " + MapName(writing.generation, writing.version) +
              " and different";
        conflict = true;
      }
    }
    if (why.empty()) continue;
    if (force) {
      warn("warning: " + why + "; written anyway (--force)");
    } else {
      refusals += (refusals.empty() ? "" : "; ") + why;
    }
  }
  if (refusals.empty()) return Status::OK();
  const std::string advice =
      kind == MapWrite::kInit
          ? ". Restore the cluster's map with relgraph-admin cluster import-map --in=FILE (a "
            "backup from export-map, or a shard's DATADIR/cluster-map), or pass --force to "
            "write this map over it"
          : ". Restore a newer backup (a shard's DATADIR/cluster-map is one), or pass --force "
            "to write this one over it";
  return Status(conflict ? Code::kAlreadyExists : Code::kUnavailable,
                "refused: " + refusals + advice);
}

uint64_t SeedGeneration(const net::ShardMap& writing, const std::vector<ShardMapReport>& reports,
                        MapWrite kind) {
  uint64_t highest = kind == MapWrite::kImport ? writing.generation : 0;
  for (const ShardMapReport& r : reports) {
    if (r.reached.ok() && r.holds_map) highest = std::max(highest, r.generation);
  }
  return highest + 1;
}

Result<net::ShardMap> WriteSeedMap(const MapWriteRequest& request, MapWrite kind,
                                   const std::function<void(const std::string&)>& warn) {
  RELGRAPH_RETURN_IF_ERROR(net::ValidateShardMap(request.map));
  auto link = net::NatsLink::Connect(request.nats_url, request.names);
  if (!link.ok()) return link.status();
  // What NATS holds first: init never writes over a map; import only with --force.
  auto current = (*link)->ReadMap();
  if (current.ok() && (kind == MapWrite::kInit || !request.force)) {
    return Status(Code::kAlreadyExists,
                  "a shard map exists already (" + MapName(current->generation, current->version) +
                      "; relgraph-admin cluster show)" +
                      (kind == MapWrite::kImport ? "; pass --force to replace it" : ""));
  }
  if (!current.ok() && current.status().code() != Code::kNotFound) return current.status();
  const std::vector<ShardMapReport> reports = AskShards(request.map, request.client);
  RELGRAPH_RETURN_IF_ERROR(CheckShardMaps(request.map, reports, kind, request.force, warn));

  net::ShardMap map = request.map;
  map.generation = SeedGeneration(request.map, reports, kind);
  if (current.ok()) map.generation = std::max(map.generation, current->generation + 1);
  auto version = current.ok() ? (*link)->ReplaceMap(map, current->version)
                              : (*link)->CreateMap(map, request.replicas);
  if (!version.ok()) return version.status();
  map.version = *version;
  // The streams too, so that shards still running after a lost store send and receive again.
  RELGRAPH_RETURN_IF_ERROR((*link)->EnsureStream());
  RELGRAPH_RETURN_IF_ERROR((*link)->EnsureMoveStream());
  return map;
}

Result<net::ShardMap> ExportMap(const std::string& nats_url, const net::ClusterNames& names) {
  auto link = net::NatsLink::Connect(nats_url, names);
  if (!link.ok()) return link.status();
  return (*link)->ReadMap();
}

}  // namespace relgraph::admin
