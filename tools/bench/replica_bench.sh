#!/usr/bin/env bash
# Replica catch-up over TCP (docs/benchmarks.md, "Replication"). The primary relgraphd runs on
# core 0 and takes EDGES pipelined follows of the generated graph (default 10M, in the
# generator's shuffled order: each record touches random users, as a busy primary's WAL does).
# Then a replica starts on core 1 in an empty directory and is timed until its INFO last_lsn
# equals the primary's. Its apply rate is that LSN over the time. For comparison, the replica
# is then stopped and restarted on the same core, and timed until it answers: recovery
# replaying the same records from its own WAL.
# Usage: tools/bench/replica_bench.sh   (after building; ports 17851, 17852)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
last_lsn() { build/relgraph-cli -p "$1" info 2>/dev/null | awk '/^last_lsn/ {print $2}'; }

taskset -c 0 build/relgraphd --data-dir="$work/primary" --listen=127.0.0.1:17851 \
  --rate-limit=off --snapshot-interval-s=0 2>"$work/primary.log" &
pids+=($!)
sleep 1
taskset -c 1 build/relgraph-bench --target=server --server=127.0.0.1:17851 \
  --edges="${EDGES:-10000000}" --workloads=load | grep -E "^load"
target=$(last_lsn 17851)

start=$(date +%s.%N)
taskset -c 1 build/relgraphd --data-dir="$work/replica" --listen=127.0.0.1:17852 \
  --replica-of=127.0.0.1:17851 --snapshot-interval-s=0 2>"$work/replica.log" &
replica=$!
pids+=($replica)
while [ "$(last_lsn 17852)" != "$target" ]; do sleep 0.05; done
end=$(date +%s.%N)
rate() { awk -v what="$1" -v n="$target" -v s="$2" -v e="$3" \
  'BEGIN { printf "%s: %d records in %.2f s = %.0f records/s\n", what, n, e - s, n / (e - s) }'; }
rate "replica catch-up" "$start" "$end"

kill "$replica"
wait "$replica" || true
start=$(date +%s.%N)
taskset -c 1 build/relgraphd --data-dir="$work/replica" --listen=127.0.0.1:17852 \
  --snapshot-interval-s=0 2>>"$work/replica.log" &
pids+=($!)
until build/relgraph-cli -p 17852 ping >/dev/null 2>&1; do sleep 0.05; done
end=$(date +%s.%N)
rate "recovery of the same records" "$start" "$end"
