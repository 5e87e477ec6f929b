// relgraph-admin's help text: every command, its arguments and flags, printed by --help and
// after a usage error.
#pragma once

namespace relgraph::admin {

inline constexpr const char* kUsage =
    R"(usage: relgraph-admin COMMAND [ARGS] [--help] | --version  (-h is --help)

Operations on a relgraph data directory (DATADIR) or snapshot file (SNAPSHOT); all offline
but `snapshot --server`, which asks a running relgraphd.

  import EDGELIST DATADIR   load a SNAP edge list (plain or .gz) straight into a snapshot
                            of a new data directory
                            [--no-cap] [--max-following=N] [--id-offset=N]
  verify DATADIR|SNAPSHOT   check every checksum and the graph and feed invariants
  inspect DATADIR|SNAPSHOT  header, counts, LSN range, sizes
  export DATADIR            the edge list `follower followee ts_ms` on standard output
  snapshot DATADIR          recover the directory and write a snapshot of it
  snapshot --server=HOST:PORT [--token=T]
                            ask a running relgraphd for an online snapshot
  restore SNAPSHOT DATADIR  verify SNAPSHOT and install it as a new data directory
  wal-dump DATADIR          every WAL record, one per line
  repair DATADIR            keep a backup, truncate the WAL at the last good record,
                            and report what was dropped
  verify, export, snapshot and restore of data kept at whole seconds (relgraphd
  --follow-time-resolution=1s) take --follow-time-resolution=1s too
  token NAME PERMISSIONS    a new random token for client NAME, then its clients-file
                            line (docs/security.md)
  group status --group=NAME [--nats=URL] [--json]
                            a replication group's lease and members (docs/replication.md)
  group switchover --group=NAME [--to=HOST:PORT] [--nats=URL]
                            hand the group's lease to a caught-up member
  cluster init --nats=URL --shards=ID=HOST:PORT[+HOST:PORT...][@GROUP],... [--buckets=N]
               [--nats-replicas=N] [--force]
                            create a cluster's shard map (docs/cluster.md): the shards
                            own equal ranges of the buckets (4096 by default); several
                            members joined by + make the shard a replication group
  cluster show --nats=URL   print the shard map, with each shard's bucket count
  cluster move-bucket --nats=URL --buckets=FIRST[-LAST] --to=ID [--timeout-ms=120000]
                            move buckets of one shard to shard ID online; run it again
                            to finish a move that was interrupted
  cluster ... [--token=T] [--tls-ca=FILE ...] [--nats-tls-ca=FILE ...]
                            the shards' token and TLS, and NATS's TLS (docs/security.md)
  cluster export-map --nats=URL [--out=FILE]
                            back the shard map up, with its version
  cluster import-map --nats=URL --in=FILE [--nats-replicas=N] [--force]
                            restore it into a JetStream that lost it
                            (relgraph-admin cluster --help for each one's rules)

Exit status: 0 on success, 1 on failure, 2 on a usage error.
)";


}  // namespace relgraph::admin
