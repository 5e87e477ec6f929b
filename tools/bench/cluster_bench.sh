#!/usr/bin/env bash
# A three-shard cluster on this machine, measured (docs/benchmarks.md, "Cluster"): starts
# nats-server with JetStream and three relgraphd shards on loopback (free ports, a scratch
# directory), creates the shard map, runs relgraph-bench --target=cluster against it, prints
# each shard's cluster INFO fields, and stops everything it started by PID.
# Usage: tools/bench/cluster_bench.sh [--move=FIRST-LAST] [relgraph-bench flags...]
#   e.g. tools/bench/cluster_bench.sh --ops=1000000 --connections=2 --pipeline=64
# --move: after the run, moves buckets FIRST-LAST (shard 1's) to shard 2 on the quiet
# cluster, then back while a second run of the benchmark loads it, printing each move's
# phases and pause (relgraph-admin cluster move-bucket).
set -euo pipefail
cd "$(dirname "$0")/../.."
move=""
args=()
for a in "$@"; do
  case "$a" in
    --move=*) move="${a#--move=}" ;;
    *) args+=("$a") ;;
  esac
done
source tools/free_port.sh
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
nats_bin=$(command -v nats-server || echo /usr/sbin/nats-server)
nats_port=$(free_port)
"$nats_bin" -js -sd "$work/nats" -a 127.0.0.1 -p "$nats_port" >"$work/nats.log" 2>&1 &
pids+=($!)
url="nats://127.0.0.1:$nats_port"
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$nats_port") 2>/dev/null && break; sleep 0.05; done
ports=()
shards=""
for i in 1 2 3; do
  ports[$i]=$(free_port)
  shards+="${shards:+,}$i=127.0.0.1:${ports[$i]}"
done
build/relgraph-admin cluster init --nats="$url" --shards="$shards" >/dev/null
for i in 1 2 3; do
  build/relgraphd --data-dir="$work/shard$i" --listen="127.0.0.1:${ports[$i]}" \
    --cluster="$url" --shard-id=$i --rate-limit=off --snapshot-interval-s=0 \
    2>"$work/shard$i.log" &
  pids+=($!)
done
for i in 1 2 3; do
  for _ in $(seq 200); do
    build/relgraph-cli -p "${ports[$i]}" ping >/dev/null 2>&1 && break
    sleep 0.05
  done
done
lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print "cpu: " $2}'
build/relgraph-bench --target=cluster --nats="$url" "${args[@]}"
if [[ -n $move ]]; then
  echo "move of buckets $move to shard 2, quiet; shard 1 before it: $(build/relgraph-cli \
    -p "${ports[1]}" info | grep -E '^(users|edges)\b' | tr '\n' ' ')"
  build/relgraph-admin cluster move-bucket --nats="$url" --buckets="$move" --to=2 | tail -1
  echo "and back to shard 1 while relgraph-bench runs again:"
  build/relgraph-bench --target=cluster --nats="$url" "${args[@]}" --seed=2 >"$work/load.txt" 2>&1 &
  load=$!
  sleep 3
  build/relgraph-admin cluster move-bucket --nats="$url" --buckets="$move" --to=1 | tail -1
  wait "$load" || { echo "the loading run failed:"; tail -5 "$work/load.txt"; exit 1; }
  sleep 1  # the old owners' drops
  for i in 1 2; do grep -hE 'state of buckets|taken over|dropped' "$work/shard$i.log" | sed "s/^/  /"; done
fi
for i in 1 2 3; do
  echo "shard $i: $(build/relgraph-cli -p "${ports[$i]}" info | grep -E '^cluster_(messages_sent|records_sent|records_applied)' | tr '\n' ' ')"
done
