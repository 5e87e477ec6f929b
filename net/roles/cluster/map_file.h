// The last shard map a shard saw, kept in its data directory, so that a shard started while
// NATS is down serves its users by it until it joins (docs/cluster.md, "When a process
// dies"). The file, DATADIR/cluster-map, is the map with its version in the form
// net/cluster/placement.h gives (EncodeVersionedShardMap):
//
//   relgraph-cluster-map 1          format version
//   version <n>                     the map's version (its key-value revision)
//   <the map's text form>           net/cluster/placement.h, EncodeShardMap
//
// It is also the form `relgraph-admin cluster export-map` writes, so either is a backup
// `cluster import-map` restores.
//
// It is written as cluster-map.tmp, fsynced, renamed over cluster-map, and the directory
// fsynced, so a crash leaves the old map or the new one, never a mix.
//
// Thread-safety: free functions; callers serialize writes to one directory.
#pragma once

#include <string>

#include "net/cluster/placement.h"
#include "storage/env/env.h"
#include "storage/status.h"

namespace relgraph {

inline constexpr const char* kShardMapFileName = "cluster-map";

// Replaces DATADIR/cluster-map with `map`. REQUIRES: a valid map.
Status SaveShardMapFile(Env* env, const std::string& dir, const net::ShardMap& map);
// The map saved in `dir`, with its version. kNotFound when none was saved; kCorruption naming
// the file and the rule broken when it does not read.
Result<net::ShardMap> LoadShardMapFile(Env* env, const std::string& dir);

}  // namespace relgraph
