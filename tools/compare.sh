#!/usr/bin/env bash
# relgraph side by side with the two designs teams run today: Redis sorted sets and relational
# tables on PostgreSQL (docs/comparison.md). One command: installs what is missing (apt),
# builds, starts relgraphd, redis-server and PostgreSQL on loopback with the configuration
# below, loads the same generated graph into all three, runs every row of relgraph-bench
# against each in alternating rounds, stops what it started, and writes a report (Markdown
# table, CSV of medians, gnuplot PNGs).
#
#   tools/compare.sh [--scale=1M|10M|100M] [--rounds=N] [--out=DIR] [--smoke]
#     --scale    edges of the generated graph (default 1M: about 5 minutes here; 10M about 25)
#     --rounds   rounds of every row against every design (default 3; medians are reported)
#     --out      where the report goes (default compare-report/)
#     --smoke    100k edges, one short round: checks that everything runs (CI runs it); its
#                figures compare nothing, and its report says so
#   Environment: OPS (pipelined operations per row, default 200000), LATENCY_OPS (unpipelined
#   operations per row, default 10000), CONNECTIONS (4), PIPELINE (64).
#
# Servers run on core 0, the benchmark client on core 1 (taskset). Persistence is matched:
# relgraphd --fsync=everysec, Redis appendonly with appendfsync everysec, PostgreSQL
# synchronous_commit=off (fsync on).
set -euo pipefail
cd "$(dirname "$0")/.."

scale=1M rounds=3 out=compare-report smoke=0
for arg in "$@"; do
  case $arg in
    --scale=*) scale=${arg#*=} ;;
    --rounds=*) rounds=${arg#*=} ;;
    --out=*) out=${arg#*=} ;;
    --smoke) smoke=1 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "compare: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done
case $scale in
  1M) edges=1000000 ;; 10M) edges=10000000 ;; 100M) edges=100000000 ;;
  *) echo "compare: --scale is 1M, 10M or 100M, not $scale" >&2; exit 2 ;;
esac
ops=${OPS:-200000} latency_ops=${LATENCY_OPS:-10000}
if [ $smoke = 1 ]; then
  edges=100000 rounds=1 ops=${OPS:-20000} latency_ops=${LATENCY_OPS:-1000}
fi
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "compare: --rounds must be a positive number" >&2; exit 2; }

tools/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# Every program this script runs: relgraphd, relgraph-bench, and relgraph-cli (ping).
cmake --build build -j "$(nproc)" --target relgraphd relgraph-bench relgraph-cli >/dev/null

work=$(mktemp -d /tmp/relgraph-compare-XXXXXX)
chmod 755 "$work"
mkdir -p "$out"
out=$(cd "$out" && pwd)
pids=()
pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
as_postgres=()
[ "$(id -u)" -eq 0 ] && as_postgres=(runuser -u postgres --)
cleanup() {
  # PostgreSQL runs under runuser as root: stop the postmaster itself (SIGINT: fast shutdown).
  [ -f "$work/pg/data/postmaster.pid" ] && kill -INT "$(head -1 "$work/pg/data/postmaster.pid")" 2>/dev/null
  for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

source tools/free_port.sh
wait_for() {  # command... : retry for up to 60 s
  for _ in $(seq 600); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "compare: gave up waiting for: $*" >&2; return 1
}

# ---- the servers, on core 0 --------------------------------------------------------------
relgraph_port=$(free_port)
relgraph_cmd=(build/relgraphd --listen=127.0.0.1:$relgraph_port --data-dir="$work/relgraph"
  --fsync=everysec --rate-limit=off --snapshot-interval-s=0)
taskset -c 0 "${relgraph_cmd[@]}" 2>"$work/relgraphd.log" &
pids+=($!)
wait_for build/relgraph-cli -p "$relgraph_port" ping

redis_port=$(free_port)
redis_conf=(--port "$redis_port" --bind 127.0.0.1 --dir "$work" --save ""
  --appendonly yes --appendfsync everysec --maxmemory 0)
taskset -c 0 redis-server "${redis_conf[@]}" --logfile "$work/redis.log" &
pids+=($!)
wait_for redis-cli -p "$redis_port" ping

pg_port=$(free_port)
mkdir -p "$work/pg"
[ "$(id -u)" -eq 0 ] && chown postgres "$work/pg"
"${as_postgres[@]}" "$pg_bin/initdb" -D "$work/pg/data" -U postgres --auth=trust >/dev/null
mem_mb=$(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo)
pg_conf=(-c listen_addresses=127.0.0.1 -c synchronous_commit=off
  -c shared_buffers=$((mem_mb / 4))MB -c effective_cache_size=$((mem_mb / 2))MB
  -c maintenance_work_mem=1GB -c work_mem=64MB -c max_wal_size=16GB
  -c checkpoint_timeout=30min -c max_connections=200)
taskset -c 0 "${as_postgres[@]}" "$pg_bin/postgres" -D "$work/pg/data" -p "$pg_port" \
  -k "$work/pg" "${pg_conf[@]}" 2>"$work/pg/postgres.log" &
pids+=($!)
wait_for "$pg_bin/pg_isready" -h 127.0.0.1 -p "$pg_port"

declare -A target=(
  [relgraph]="--target=server --server=127.0.0.1:$relgraph_port"
  [redis]="--target=redis://127.0.0.1:$redis_port"
  [postgres]="--target=postgres://postgres@127.0.0.1:$pg_port/postgres")
designs=(relgraph redis postgres)
common="--edges=$edges --seed=1 --format=csv --ops=$ops --latency-ops=$latency_ops \
--connections=${CONNECTIONS:-4} --pipeline=${PIPELINE:-64}"
rows="relation,relations_100,following_page,fans_page,fans_page_deep,friends_page,counts,\
follow,unfollow,publish,timeline_first_page"
rows="$rows,$(echo "$rows" | sed 's/,/_unpipelined,/g')_unpipelined"

bench() {  # design, extra flags -> CSV on stdout; a failed run stops the comparison
  # shellcheck disable=SC2086
  if ! taskset -c 1 build/relgraph-bench ${target[$1]} $common "${@:2}" 2>"$work/bench.err"; then
    echo "compare: relgraph-bench against $1 failed:" >&2
    cat "$work/bench.err" >&2
    exit 1
  fi
}

# ---- load, once per design ----------------------------------------------------------------
echo "compare: loading $edges edges into each design" >&2
: >"$out/rounds.csv"
for d in "${designs[@]}"; do
  bench "$d" --workloads=load | awk -F, -v d="$d" -v r=0 'NR > 1 { print d "," r "," $0 }' \
    >>"$out/rounds.csv"
done

# ---- rounds: every row against every design, the design order rotating ------------------
for r in $(seq "$rounds"); do
  for k in 0 1 2; do
    d=${designs[$(((r + k) % 3))]}
    echo "compare: round $r/$rounds, $d" >&2
    bench "$d" --no-load --workloads="$rows" |
      awk -F, -v d="$d" -v r="$r" 'NR > 1 && $1 != "memory" { print d "," r "," $0 }' \
        >>"$out/rounds.csv"
  done
done

# ---- the report ----------------------------------------------------------------------------
cpu=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
# Medians per design and row: design,row,ops_s,p50,p99 (memory rows: bytes per edge in ops_s).
awk -F, '
  { key = $1 "," $3
    if ($3 == "memory") { bpe[key] = $7; order[key] = 0; next }
    n[key]++; ops[key, n[key]] = $6; p50[key, n[key]] = $7; p99[key, n[key]] = $8 }
  function median(arr, key, count,   i, j, t, v) {
    for (i = 1; i <= count; i++) v[i] = arr[key, i] + 0
    for (i = 1; i <= count; i++) for (j = i + 1; j <= count; j++)
      if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    return count % 2 ? v[(count + 1) / 2] : (v[count / 2] + v[count / 2 + 1]) / 2
  }
  END {
    for (k in n) printf "%s,%.0f,%.1f,%.1f\n", k, median(ops, k, n[k]), median(p50, k, n[k]), median(p99, k, n[k])
    for (k in bpe) printf "%s,%.1f,0,0\n", k, bpe[k]
  }' "$out/rounds.csv" | sort >"$out/medians.csv"

medians=$out/medians.csv
source tools/compare_report.sh  # get, ratio, row_ratio, check, target_row, log_floor
{
  echo "# relgraph, the Redis sorted-set design and the relational design, side by side"
  echo
  echo "\`tools/compare.sh $([ $smoke = 1 ] && echo "--smoke" || echo "--scale=$scale --rounds=$rounds")\`," \
    "$(date -u +%Y-%m-%d), $cpu, $(nproc) cores. $edges generated edges (seed 1)," \
    "$ops operations per pipelined row (${CONNECTIONS:-4} connections, pipeline" \
    "${PIPELINE:-64}), $latency_ops per unpipelined row (one connection). Servers on core 0," \
    "the client on core 1. Medians of the rounds. Ratios come from the same run and read" \
    "\"how many times better relgraph is\": relgraph's ops/s over the other design's for a" \
    "pipelined row, the other design's p50 over relgraph's for an unpipelined row (above 1:" \
    "relgraph is ahead)."
  echo
  if [ $smoke = 1 ]; then
    echo "**A smoke run: it checks that every server, row, report and chart runs, and its figures"
    echo "compare nothing.** At $edges edges fixed overheads dominate each server's memory (its"
    echo "bytes per edge mostly measure empty structures), and one short round is within the"
    echo "noise. Run \`tools/compare.sh\` (1M edges) or \`--scale=10M\` for figures to compare;"
    echo "the targets are not judged here."
    echo
  fi
  echo "Configuration: relgraphd \`--fsync=everysec --rate-limit=off --snapshot-interval-s=0\`;"
  echo "redis-server $(redis-server --version | awk '{print $3}' | tr -d 'v='):" \
    "appendonly yes, appendfsync everysec, no RDB snapshots, no maxmemory;"
  echo "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') \`${pg_conf[*]}\`."
  echo
  echo "## Memory and load"
  echo
  echo "| design | bytes per edge (own accounting) | load, edges/s |"
  echo "|---|---|---|"
  for d in "${designs[@]}"; do
    echo "| $d | $(get "$d" memory 3) | $(get "$d" load 3) |"
  done
  echo
  echo "## Throughput and latency"
  echo
  echo "| row | relgraph ops/s | redis ops/s | postgres ops/s | vs redis | vs postgres | relgraph p50/p99 µs | redis p50/p99 µs | postgres p50/p99 µs |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for w in ${rows//,/ }; do
    line="| $w"
    for d in "${designs[@]}"; do line="$line | $(get "$d" "$w" 3)"; done
    line="$line | $(row_ratio redis "$w")×"
    line="$line | $(row_ratio postgres "$w")×"
    for d in "${designs[@]}"; do
      if [[ $w == *_unpipelined ]]; then
        line="$line | $(get "$d" "$w" 4) / $(get "$d" "$w" 5)"
      else
        line="$line | -"
      fi
    done
    echo "$line |"
  done
  echo
  echo "## Targets"
  echo
  if [ $smoke = 1 ]; then
    echo "Not judged in a smoke run."
  else
    echo "| target | measured | met |"
    echo "|---|---|---|"
    rm_=$(get relgraph memory 3) xm=$(get redis memory 3) pm=$(get postgres memory 3)
    check "memory per edge ≤ 1/6 of Redis's" "$(ratio "$xm" "$rm_")× smaller" "$xm >= 6 * $rm_"
    check "memory per edge ≤ 1/15 of PostgreSQL's" "$(ratio "$pm" "$rm_")× smaller" "$pm >= 15 * $rm_"
    for w in following_page relations_100 follow; do
      target_row "$w" 3 "multi-command in Redis, ${CONNECTIONS:-4} clients"
    done
    for w in relation counts fans_page_deep friends_page unfollow timeline_first_page; do
      target_row "$w" 1 "single command in Redis"
      target_row "${w}_unpipelined" 1 "single command in Redis"
    done
    a=$(get relgraph timeline_first_page_unpipelined 5) b=$(get redis timeline_first_page_unpipelined 5)
    check "timeline page p99 below Redis's" "$a µs vs $b µs" "$a < $b"
  fi
  echo
  echo "Error replies and other notes, from every run (rounds.csv keeps them all):"
  echo
  awk -F, '$NF != "\"\"" && $3 != "memory" && $3 != "load" { n[$1 " " $3]++; note[$1 " " $3] = $0 }
    END { for (k in n) print "- " k " (" n[k] " runs): " substr(note[k], index(note[k], "\"")) }' \
    "$out/rounds.csv" | sort
  awk -F, '$3 == "memory" { print "- " $1 " memory: " substr($0, index($0, "\"")) }' "$out/rounds.csv"
} >"$out/report.md"

# ---- charts ----------------------------------------------------------------------------------
chart_data() {  # rows (space separated), column -> "row relgraph redis postgres" lines
  for w in $1; do
    echo "$w $(get relgraph "$w" "$2") $(get redis "$w" "$2") $(get postgres "$w" "$2")"
  done
}
pipelined=${rows%%,relation_unpipelined*}
chart_data "${pipelined//,/ }" 3 >"$work/throughput.dat"
chart_data "$(echo "${rows//,/ }" | tr ' ' '\n' | grep _unpipelined | tr '\n' ' ')" 4 >"$work/p50.dat"
chart_data "$(echo "${rows//,/ }" | tr ' ' '\n' | grep _unpipelined | tr '\n' ' ')" 5 >"$work/p99.dat"
chart_data memory 3 >"$work/memory.dat"
# Bars start at zero; the log-scale throughput chart starts at a power of ten below its
# smallest bar (the title says which), so no design's bar is hidden under the floor.
floor=$(log_floor "$work/throughput.dat" 2 3 4)
gnuplot <<EOF
set terminal pngcairo size 1200,600 noenhanced
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -30
set key top right
set grid ytics
set output "$out/throughput.png"
set title "Pipelined throughput, ${CONNECTIONS:-4} connections x ${PIPELINE:-64} (ops/s, log scale from $floor, below the smallest bar) - $edges edges$([ $smoke = 1 ] && echo ", smoke run: compares nothing"), $cpu"
set logscale y
set yrange [$floor:*]
plot "$work/throughput.dat" using 2:xtic(1) title "relgraph", '' using 3 title "redis", '' using 4 title "postgres"
unset logscale y
set yrange [0:*]
set output "$out/latency_p50.png"
set title "Unpipelined latency p50, one connection (microseconds)"
plot "$work/p50.dat" using 2:xtic(1) title "relgraph", '' using 3 title "redis", '' using 4 title "postgres"
set output "$out/latency_p99.png"
set title "Unpipelined latency p99, one connection (microseconds)"
plot "$work/p99.dat" using 2:xtic(1) title "relgraph", '' using 3 title "redis", '' using 4 title "postgres"
set output "$out/memory.png"
set title "Memory per edge, each server's own accounting (bytes)"
set xtics norotate
plot "$work/memory.dat" using 2:xtic(1) title "relgraph", '' using 3 title "redis", '' using 4 title "postgres"
EOF
echo "compare: report in $out/report.md (charts: throughput.png, latency_p50.png, latency_p99.png, memory.png)" >&2
