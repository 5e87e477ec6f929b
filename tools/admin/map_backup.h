// Writing a shard map into a JetStream that may not hold its predecessor, and backing it up
// (relgraph-admin cluster init, export-map, import-map; docs/cluster.md, "Backing up the
// map").
//
// Why ask the shards: the map in JetStream is the truth, but it can be lost with the store;
// each shard keeps the last map it saw (its data directory, INFO cluster_map_generation,
// cluster_map_version, cluster_map_digest). Before writing a map, the tool asks every shard
// the map names what it holds, and refuses (unless forced) to write a map whose content
// differs from a shard's newer one: `cluster init` after a lost store would otherwise give
// moved buckets back to their old owners, and an old backup would do the same.
//
// The generation (net/cluster/placement.h, "Which map is newer"): a map written here goes
// into a store whose revisions may have restarted at 1, so it takes a generation above every
// map the shards reported (and, for a restore, above the backup's own), so the shards take it
// and every map written after it.
//
// Thread-safety: free functions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "net/client/client.h"
#include "net/cluster/nats_link.h"
#include "net/cluster/placement.h"
#include "storage/status.h"

namespace relgraph::admin {

// What one shard named in a map says of the map it holds.
struct ShardMapReport {
  uint32_t id = 0;
  std::string address;
  Status reached;          // not OK: it did not answer INFO (the reason)
  bool listening = true;   // false: nothing listens at its address (it is not running)
  bool holds_map = false;  // it reports a map (INFO cluster_map_version > 0)
  uint64_t generation = 0, version = 0, digest = 0;
};

// Asks each shard of `map` for its INFO (a short timeout each).
// `client`: the token and TLS to connect with (host and port come from the map).
std::vector<ShardMapReport> AskShards(const net::ShardMap& map,
                                      const net::ClientOptions& client = {});

enum class MapWrite { kInit, kImport };

// Whether `writing` may be written over what the shards report. kInit: refused when a shard
// holds a map of another content (digest). kImport: refused when a shard holds a map of
// another content that is newer than `writing` by (generation, version). Either: refused
// when a shard did not answer, unless nothing listens at its address (it is not running, as
// before a new cluster's first start): that is said on `warn`, and the shard checks at its
// start (net/roles/cluster/shard_node.h: it does not join a cluster whose map is older than
// the one it saved, and different). kAlreadyExists (a shard holds another map; else kUnavailable,
// a shard did not answer) naming each shard and what to do; with `force`, OK, and each
// would-be refusal goes to `warn` instead.
Status CheckShardMaps(const net::ShardMap& writing, const std::vector<ShardMapReport>& reports,
                      MapWrite kind, bool force,
                      const std::function<void(const std::string&)>& warn);

// The generation a map written by init or import takes: 1 + the highest of the shards'
// generations and (kImport) the map's own; 1 for an init whose shards hold no map.
uint64_t SeedGeneration(const net::ShardMap& writing, const std::vector<ShardMapReport>& reports,
                        MapWrite kind);

struct MapWriteRequest {
  std::string nats_url;
  net::ClusterNames names;
  net::ShardMap map;  // the map to write (its generation and version are set here)
  bool force = false;
  int replicas = 1;  // copies of the key-value bucket and streams, when this creates them
  net::ClientOptions client;  // token and TLS for asking the shards (host and port: the map's)
};

// cluster init (kInit) and import-map (kImport): asks the shards (CheckShardMaps), writes the
// map with SeedGeneration, creates the cluster's streams when absent, and returns the map as
// stored (version, generation). kInit: kAlreadyExists when NATS holds a map. kImport: the
// same unless `force`, which replaces it. Warnings (forced past) go to `warn`.
Result<net::ShardMap> WriteSeedMap(const MapWriteRequest& request, MapWrite kind,
                                   const std::function<void(const std::string&)>& warn);

// The current map, with its version (export-map writes it as EncodeVersionedShardMap).
Result<net::ShardMap> ExportMap(const std::string& nats_url, const net::ClusterNames& names = {});

}  // namespace relgraph::admin
