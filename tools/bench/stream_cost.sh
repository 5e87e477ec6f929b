#!/usr/bin/env bash
# The change stream's cost to a primary (docs/benchmarks.md, "Change stream"). Each row starts
# a fresh relgraphd on core 0 in an empty directory, so that every row meets the same graph;
# relgraph-bench on core 1 pipelines OPS follows of new random pairs (default 1M) over 4
# connections while 0, 1 or 4 subscribers read every event from now.
# Rows run in the order ROWS (default "0 1 4 4 1 0 0 1 4"); the script prints each row's line.
# Usage: tools/bench/stream_cost.sh   (after building; port 17861)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
for row in ${ROWS:-0 1 4 4 1 0 0 1 4}; do
  rm -rf "$work/data"
  taskset -c 0 build/relgraphd --data-dir="$work/data" --listen=127.0.0.1:17861 \
    --rate-limit=off --snapshot-interval-s=0 2>>"$work/relgraphd.log" &
  pid=$!
  until build/relgraph-cli -p 17861 ping >/dev/null 2>&1; do sleep 0.05; done
  taskset -c 1 build/relgraph-bench --target=server --server=127.0.0.1:17861 --edges=1000 \
    --ops="${OPS:-1000000}" --workloads="follow_subscribers_$row" | grep -E "^follow_subscribers"
  kill "$pid"
  wait "$pid" || true
  pid=
done
