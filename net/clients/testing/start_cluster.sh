#!/usr/bin/env bash
# Starts a relgraph cluster on loopback for the clients' suites (Go, Python, Java): one
# nats-server with JetStream, the shard map written by relgraph-admin cluster init, and one
# relgraphd per shard (or, with --members=M, a replication group of M members per shard),
# each on a free port with its data directory and log under DIR. It returns once every shard
# has joined the cluster (and every group has a primary); the processes keep running, and
# the caller stops them by the PIDs printed (SIGTERM). On failure it stops what it started,
# prints the logs' tails on stderr and exits 1.
#
# Usage: start_cluster.sh --dir=DIR [--shards=N] [--buckets=N] [--members=M] [relgraphd flags...]
#   --shards   shards, ids 1..N [3]
#   --buckets  the map's bucket count [64]
#   --members  members per shard; 2 or more makes each shard the group shard-ID, whose
#              members run --fsync=always --sync-replicas=1 [1]
#   any other argument is passed to every relgraphd (e.g. --group-lease-ms=1000)
# Binaries: $RELGRAPHD, $RELGRAPH_ADMIN, $RELGRAPH_CLI (default: build/ of this repository),
# $NATS_SERVER (default: nats-server on PATH, else /usr/sbin/nats-server).
#
# Output, one line per process, in this order:
#   nats <url> <pid>
#   shard <id> <host:port> <pid>          one line per member (a group's members share the id)
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
dir="" shards=3 buckets=64 members=1
extra=()
for a in "$@"; do
  case "$a" in
    --dir=*) dir="${a#--dir=}" ;;
    --shards=*) shards="${a#--shards=}" ;;
    --buckets=*) buckets="${a#--buckets=}" ;;
    --members=*) members="${a#--members=}" ;;
    *) extra+=("$a") ;;
  esac
done
[[ -n $dir ]] || { echo "usage: $0 --dir=DIR [--shards=N] [--buckets=N] [--members=M] [relgraphd flags...]" >&2; exit 2; }
mkdir -p "$dir"
relgraphd=${RELGRAPHD:-$root/build/relgraphd}
admin=${RELGRAPH_ADMIN:-$root/build/relgraph-admin}
cli=${RELGRAPH_CLI:-$root/build/relgraph-cli}
nats_bin=${NATS_SERVER:-$(command -v nats-server || echo /usr/sbin/nats-server)}
# A port nothing answers on, below the kernel's ephemeral range: a port from that range may
# be taken, between this pick and the server's bind, as the local end of an outgoing
# connection (a shard's own connection to NATS).
low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
free_port() {
  local p
  while :; do
    p=$((10000 + RANDOM % (low - 10000)))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}

pids=()
ok=0
cleanup() {
  if [[ $ok == 0 ]]; then
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for f in "$dir"/*.log; do [[ -f $f ]] && { echo "== $f" >&2; tail -5 "$f" >&2; }; done
  fi
}
trap cleanup EXIT

nats_port=$(free_port)
"$nats_bin" -js -sd "$dir/nats" -a 127.0.0.1 -p "$nats_port" >"$dir/nats.log" 2>&1 </dev/null &
nats_pid=$!
pids+=("$nats_pid")
url="nats://127.0.0.1:$nats_port"
for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$nats_port") 2>/dev/null && break; sleep 0.05; done

# The map needs every address first.
declare -A port pid
spec=""
for ((i = 1; i <= shards; i++)); do
  list=""
  for ((m = 0; m < members; m++)); do
    port[$i.$m]=$(free_port)
    list+="${list:++}127.0.0.1:${port[$i.$m]}"
  done
  spec+="${spec:+,}$i=$list"
done
"$admin" cluster init --nats="$url" --shards="$spec" --buckets="$buckets" >"$dir/init.log" 2>&1

lines=("nats $url $nats_pid")
for ((i = 1; i <= shards; i++)); do
  for ((m = 0; m < members; m++)); do
    flags=(--data-dir="$dir/shard$i.$m" --listen="127.0.0.1:${port[$i.$m]}" --cluster="$url"
           --shard-id="$i" --rate-limit=off --snapshot-interval-s=0 --log-level=error --http=off)
    if ((members > 1)); then flags+=(--group="shard-$i" --fsync=always --sync-replicas=1); fi
    "$relgraphd" "${flags[@]}" "${extra[@]}" >"$dir/shard$i.$m.log" 2>&1 </dev/null &
    pids+=($!)
    pid[$i.$m]=$!
    lines+=("shard $i 127.0.0.1:${port[$i.$m]} $!")
  done
done

# Joined: INFO cluster_joined 1 on every member, and cluster_active 1 on one member of each shard.
field() { "$cli" -p "$1" info 2>/dev/null | awk -v k="$2:" '$1 == k {print $2}'; }
deadline=$((SECONDS + 60))
for ((i = 1; i <= shards; i++)); do
  while :; do
    joined=1 active=0
    for ((m = 0; m < members; m++)); do
      kill -0 "${pid[$i.$m]}" 2>/dev/null || { echo "shard $i (127.0.0.1:${port[$i.$m]}) exited" >&2; exit 1; }
      [[ $(field "${port[$i.$m]}" cluster_joined) == 1 ]] || joined=0
      [[ $(field "${port[$i.$m]}" cluster_active) == 1 ]] && active=1
    done
    ((joined && active)) && break
    ((SECONDS < deadline)) || { echo "shard $i did not join the cluster in 60 s" >&2; exit 1; }
    sleep 0.05
  done
done
ok=1
printf '%s\n' "${lines[@]}"
