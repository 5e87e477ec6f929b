#!/usr/bin/env bash
# relgraph-bridge figures (docs/benchmarks.md, "Change stream"). relgraphd on core 0;
# nats-server -js, the bridge and relgraph-bench on core 1.
#   throughput: loads EDGES follows (default 1M) over TCP, then times one bridge run that
#               copies them all into JetStream (--until-lsn) and exits.
#   delay:      a bridge runs from now; relgraph-bench sends OPS follows (default 20,000) one at
#               a time at RATE per second (default 5,000) and times each from its reply to its
#               message arriving from NATS.
# Usage: tools/bench/bridge_bench.sh throughput|delay   (after building; ports 17741, 17742)
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:?usage: tools/bench/bridge_bench.sh throughput|delay}
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
nats_server=$(command -v nats-server || echo /usr/sbin/nats-server)
taskset -c 0 build/relgraphd --data-dir="$work/relgraph" --listen=127.0.0.1:17741 \
  --rate-limit=off --snapshot-interval-s=0 2>"$work/relgraphd.log" &
pids+=($!)
taskset -c 1 "$nats_server" -js -a 127.0.0.1 -p 17742 -sd "$work/nats" 2>"$work/nats.log" &
pids+=($!)
sleep 1
bridge=(build/relgraph-bridge --relgraph=127.0.0.1:17741 --nats=nats://127.0.0.1:17742)
case "$mode" in
  throughput)
    taskset -c 1 build/relgraph-bench --target=server --server=127.0.0.1:17741 \
      --edges="${EDGES:-1000000}" --workloads=load | grep -E "^load"
    last=$(build/relgraph-cli -p 17741 info | awk '/^last_lsn/ {print $2}')
    start=$(date +%s.%N)
    taskset -c 1 "${bridge[@]}" --from=1 --until-lsn="$last"
    end=$(date +%s.%N)
    awk -v n="$last" -v s="$start" -v e="$end" \
      'BEGIN { printf "bridge: %d events in %.2f s = %.0f events/s\n", n, e - s, n / (e - s) }'
    ;;
  delay)
    taskset -c 1 "${bridge[@]}" 2>"$work/bridge.log" &
    pids+=($!)
    sleep 1
    taskset -c 1 build/relgraph-bench --target=server --server=127.0.0.1:17741 --edges=1000 \
      --nats=nats://127.0.0.1:17742 --workloads=bridge_delay --latency-ops="${OPS:-20000}" \
      --bridge-rate="${RATE:-5000}" | grep -E "bridge_delay|workload"
    ;;
  *) echo "usage: tools/bench/bridge_bench.sh throughput|delay" >&2; exit 2 ;;
esac
