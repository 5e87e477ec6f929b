// relgraph-admin cluster: the shard map of a cluster on NATS JetStream (docs/cluster.md).
//   cluster init --nats=URL --shards=ID=HOST:PORT,... [--buckets=N] [--nats-replicas=N]
//                [--force]                            create the map (map_backup.h)
//   cluster show --nats=URL                           print it
//   cluster move-bucket --nats=URL --buckets=FIRST[-LAST] --to=ID [--timeout-ms=N]
//                                                     move buckets online (bucket_move.h)
//   cluster export-map --nats=URL [--out=FILE]        back the map up (map_backup.h)
//   cluster import-map --nats=URL --in=FILE [--nats-replicas=N] [--force]
//                                                     restore it (map_backup.h)
// --nats takes one server or a comma-separated list of one NATS cluster's.
// With `help` (--help or -h anywhere), prints the usage of `cluster` or of the subcommand
// named to `out` and returns 0, doing nothing else.
// Output to `out`, errors to `err`; returns the exit code (0, 1 failure, 2 usage).
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace relgraph::admin {

int ClusterCommand(const std::vector<std::string>& positional,
                   const std::map<std::string, std::string>& flags, bool help, std::ostream& out,
                   std::ostream& err);

}  // namespace relgraph::admin
