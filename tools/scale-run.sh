#!/usr/bin/env bash
# The billion-edge run: a generated graph of EDGES follows (the seeds' degree statistics, top
# accounts with tens of millions of fans at a billion) built in memory, snapshotted, served by
# relgraphd restarted from that snapshot, and measured over TCP. Not part of CI.
#
#   tools/scale-run.sh [--edges=N] [--data-dir=DIR] [--out=FILE] [--keep] [--force]
#                      [--reciprocity=F] [--follow-times=bursty|even]
#                      [--follow-time-resolution=1ms|1s]
#     --edges     follows to generate (default 1000000000)
#     --reciprocity, --follow-times
#                 the generated graph's shape, as relgraph-bench takes them (default: 22% of
#                 the edges mutual, bursty times; tools/bench/graph_shape.h)
#     --follow-time-resolution
#                 the times the graph keeps, for the build and relgraphd (default 1ms; at
#                 1s the estimate below uses MEM_BYTES_PER_EDGE=25 unless set)
#     --data-dir  where the snapshot and relgraphd's data go (default: a new directory in
#                 /tmp, removed at the end unless --keep)
#     --out       the Markdown report (default scale-report.md)
#     --force     run even when the estimate below says memory or disk is short
#   Environment: LATENCY_OPS (operations of each TCP row, default 20000), SEED (default 1).
#
# Steps (relgraph-bench --target=scale-build / scale-server, tools/bench/scale_run.h):
#   1. build: ScaleGenerator streams the edges into an embedded Graph by Import (no edge list
#      is held or written), then the graph is written as snapshot-0.rgs; import rate, bytes
#      per edge (resident and the engine's count), peak RSS, snapshot size and write time;
#   2. relgraphd starts on that directory: time to restart (its own "recovered" line and the
#      wall time until it answers), its peak and steady RSS;
#   3. over TCP, one connection, p50/p99: relation, counts, following page with a viewer,
#      fans page by cursor deep in the top account, follow and unfollow;
#   4. an online snapshot through relgraphd (`relgraph-cli snapshot`), when the disk has room
#      for a second one.
# Before it starts, the run estimates what it needs from the figures of docs/benchmarks.md
# (MEM_BYTES_PER_EDGE of memory, DISK_BYTES_PER_EDGE of disk) and, unless --force, refuses a
# size that does not fit, naming the resource and the largest size that does.
# relgraphd restarts on both cores (its loader, id indexer and prefault threads, as a lone
# restart would) and then runs on core 0; the builder and the client run on core 1.
set -euo pipefail
cd "$(dirname "$0")/.."

edges=1000000000 data_dir="" out=scale-report.md keep=0 force=0 shape=() resolution=1ms
for arg in "$@"; do
  case $arg in
    --edges=*) edges=${arg#*=} ;;
    --data-dir=*) data_dir=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    --keep) keep=1 ;;
    --force) force=1 ;;
    --reciprocity=*|--follow-times=*) shape+=("$arg") ;;
    --follow-time-resolution=*) resolution=${arg#*=} ;;
    -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
    *) echo "scale-run: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done
[[ $edges =~ ^[1-9][0-9]*$ ]] || { echo "scale-run: --edges must be a positive number" >&2; exit 2; }
latency_ops=${LATENCY_OPS:-20000} seed=${SEED:-1}
[[ $resolution == 1ms || $resolution == 1s ]] || { echo "scale-run: --follow-time-resolution takes 1ms or 1s" >&2; exit 2; }
# Peak bytes per edge of the build (25.6 at 500M, 1ms), with headroom; 1s times take ~2 less.
mem_per_edge=${MEM_BYTES_PER_EDGE:-$([ "$resolution" = 1s ] && echo 25 || echo 28)}
disk_per_edge=${DISK_BYTES_PER_EDGE:-21} # snapshot bytes per edge (version 5: 19.4 at 500M realistic edges)

if [ -z "$data_dir" ]; then
  data_dir=$(mktemp -d /tmp/relgraph-scale-XXXXXX)
else
  mkdir -p "$data_dir"
  [ -z "$(ls -A "$data_dir")" ] || { echo "scale-run: $data_dir is not empty" >&2; exit 2; }
fi

# ---- will it fit? ---------------------------------------------------------------------------
gib() { awk -v b="$1" 'BEGIN {printf "%.1f GiB", b / 2^30}'; }
mem_avail=$(($(awk '/^MemAvailable:/ {print $2}' /proc/meminfo) * 1024))
disk_avail=$(df -B1 --output=avail "$data_dir" | tail -1)
mem_need=$((edges * mem_per_edge)) disk_need=$((edges * disk_per_edge))
fits_mem=$((mem_avail * 9 / 10 / mem_per_edge)) fits_disk=$((disk_avail * 9 / 10 / disk_per_edge))
echo "scale-run: $edges edges need about $(gib $mem_need) of memory ($(gib "$mem_avail") available)" \
  "and $(gib $disk_need) of disk ($(gib "$disk_avail") free in $data_dir)" >&2
if [ $force = 0 ] && { [ "$mem_need" -gt $((mem_avail * 9 / 10)) ] || [ "$disk_need" -gt $((disk_avail * 9 / 10)) ]; }; then
  largest=$((fits_mem < fits_disk ? fits_mem : fits_disk))
  what=$([ $fits_mem -lt $fits_disk ] && echo "memory ($mem_per_edge B/edge)" || echo "disk ($disk_per_edge B/edge of snapshot)")
  echo "scale-run: does not fit: $what limits this machine to about $largest edges;" \
    "run with --edges=$largest (or --force)" >&2
  [ $keep = 1 ] || rm -rf "$data_dir"
  exit 3
fi

tools/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target relgraphd relgraph-bench relgraph-cli >/dev/null

pid=""
cleanup() {
  [ -n "$pid" ] && kill -INT "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  [ $keep = 1 ] || rm -rf "$data_dir"
}
trap cleanup EXIT
source tools/free_port.sh
status_kib() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }

# ---- 1. build and snapshot ------------------------------------------------------------------
echo "scale-run: building the graph of $edges edges" >&2
build_out=$(taskset -c 1 build/relgraph-bench --target=scale-build --edges="$edges" --seed="$seed" \
  "${shape[@]}" --follow-time-resolution="$resolution" --data-dir="$data_dir")
echo "$build_out" >&2
snapshot_bytes=$(du -cb "$data_dir"/snapshot-*.rgs | tail -1 | cut -f1)  # no awk: mawk's %d stops at 2^31
kept_edges=$(echo "$build_out" | awk '$1 == "scale_snapshot_write" {print $2}')

# ---- 2. restart relgraphd from it -----------------------------------------------------------
port=$(free_port)
start=$(date +%s.%N)
build/relgraphd --data-dir="$data_dir" --listen=127.0.0.1:$port --rate-limit=off \
  --snapshot-interval-s=0 --follow-time-resolution="$resolution" 2>"$data_dir/relgraphd.log" &
pid=$!
until build/relgraph-cli -p "$port" ping >/dev/null 2>&1; do
  kill -0 "$pid" 2>/dev/null || { cat "$data_dir/relgraphd.log" >&2; echo "scale-run: relgraphd exited" >&2; exit 1; }
  sleep 0.2
done
restart_wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f", e - s}')
recovered=$(grep -o 'recovered.*' "$data_dir/relgraphd.log" | head -1)
taskset -a -p -c 0 "$pid" >/dev/null  # its threads to core 0 for the TCP rows
server_peak=$(($(status_kib "$pid" VmHWM) * 1024)) server_rss=$(($(status_kib "$pid" VmRSS) * 1024))

# ---- 3. queries over TCP --------------------------------------------------------------------
echo "scale-run: querying relgraphd on port $port" >&2
query_out=$(taskset -c 1 build/relgraph-bench --target=scale-server --edges="$edges" --seed="$seed" \
  "${shape[@]}" --server=127.0.0.1:$port --latency-ops="$latency_ops")
echo "$query_out" >&2
server_steady=$(($(status_kib "$pid" VmRSS) * 1024))

# ---- 4. an online snapshot, if there is room for a second file ------------------------------
disk_free=$(df -B1 --output=avail "$data_dir" | tail -1)
if [ "$disk_free" -gt $((snapshot_bytes * 12 / 10)) ]; then
  start=$(date +%s.%N)
  build/relgraph-cli -p "$port" snapshot >&2
  online="$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f s", e - s}') (relgraph-cli snapshot, served graph)"
else
  online="not taken: $(gib "$disk_free") free, a second snapshot needs about $(gib "$snapshot_bytes")"
fi
kill -INT "$pid"
wait "$pid" || true
pid=""

# ---- the report -----------------------------------------------------------------------------
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
{
  echo "# relgraph scale run: $edges edges"
  echo
  echo "$cpu, $(nproc) cores, $(gib "$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) * 1024))") memory;" \
    "build $(git rev-parse --short HEAD 2>/dev/null || echo unknown); \`tools/scale-run.sh --edges=$edges --follow-time-resolution=$resolution\`"
  echo
  echo "## Build (embedded, core 1)"
  echo '```'
  echo "$build_out"
  echo '```'
  echo
  echo "## relgraphd (restart on both cores, then core 0)"
  echo "| what | figure |"
  echo "|---|---|"
  echo "| snapshot on disk | $(gib "$snapshot_bytes") = $(awk -v b="$snapshot_bytes" -v e="$kept_edges" 'BEGIN {printf "%.2f", b / e}') B/edge ($kept_edges edges) |"
  echo "| restart to first answer | $restart_wall s ($recovered) |"
  echo "| RSS after restart: peak / steady | $(gib "$server_peak") / $(gib "$server_rss") |"
  echo "| RSS after the TCP rows | $(gib "$server_steady") |"
  echo "| online snapshot | $online |"
  echo
  echo "## Over TCP (one connection, core 1)"
  echo '```'
  echo "$query_out"
  echo '```'
} >"$out"
echo "scale-run: report in $out" >&2
