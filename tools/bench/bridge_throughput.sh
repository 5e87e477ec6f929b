#!/usr/bin/env bash
# relgraph-bridge throughput (docs/benchmarks.md, "Change stream"): relgraphd on core 0,
# nats-server -js and the bridge on core 1. Loads EDGES follows (default 1M) over TCP, then
# times one bridge run that copies them all into JetStream (--until-lsn) and exits.
# Usage: tools/bench/bridge_throughput.sh   (after building; ports 17741 and 17742)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'kill $rg $nats 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
nats_server=$(command -v nats-server || echo /usr/sbin/nats-server)
taskset -c 0 build/relgraphd --data-dir="$work/relgraph" --listen=127.0.0.1:17741 \
  --rate-limit=off --snapshot-interval-s=0 2>"$work/relgraphd.log" &
rg=$!
taskset -c 1 "$nats_server" -js -a 127.0.0.1 -p 17742 -sd "$work/nats" 2>"$work/nats.log" &
nats=$!
sleep 1
taskset -c 1 build/relgraph-bench --target=server --server=127.0.0.1:17741 \
  --edges="${EDGES:-1000000}" --workloads=load | grep -E "^load"
last=$(build/relgraph-cli -p 17741 info | awk '/^last_lsn/ {print $2}')
start=$(date +%s.%N)
taskset -c 1 build/relgraph-bridge --relgraph=127.0.0.1:17741 --nats=nats://127.0.0.1:17742 \
  --from=1 --until-lsn="$last"
end=$(date +%s.%N)
awk -v n="$last" -v s="$start" -v e="$end" \
  'BEGIN { printf "bridge: %d events in %.2f s = %.0f events/s\n", n, e - s, n / (e - s) }'
