#!/usr/bin/env bash
# tools/compare_report.sh: each verdict agrees with the figures printed beside it, every ratio
# reads "higher is better for relgraph", and a log chart's floor sits below its smallest bar.
# Usage: compare_report_test.sh SOURCE_DIR
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
medians=$work/medians.csv
# The case of issue 43: relgraph's unpipelined counts p50 is lower (better) than Redis's, while
# its ops/s, from the mean latency, is lower too.
cat >"$medians" <<'CSV'
postgres,counts,20000,0,0
postgres,counts_unpipelined,3000,310.5,900.0
redis,counts,400000,0,0
redis,counts_unpipelined,16000,54.2,80.0
redis,follow,100000,0,0
relgraph,counts,900000,0,0
relgraph,counts_unpipelined,12000,47.6,120.0
relgraph,follow,250000,0,0
CSV
# shellcheck source=/dev/null
source "$1/tools/compare_report.sh"

[ "$(row_ratio redis counts_unpipelined)" = 1.14 ] ||
  fail "unpipelined ratio: $(row_ratio redis counts_unpipelined), want 54.2 / 47.6 = 1.14"
[ "$(row_ratio postgres counts_unpipelined)" = 6.52 ] || fail "unpipelined ratio vs postgres"
[ "$(row_ratio redis counts)" = 2.25 ] || fail "pipelined ratio: $(row_ratio redis counts)"
[ "$(row_ratio redis fans_page)" = - ] || fail "a missing row gives a ratio"

line=$(target_row counts_unpipelined 1 "single command in Redis")
[[ $line == *"47.6 µs vs 54.2 µs: 1.14× faster | yes |" ]] || fail "unpipelined verdict: $line"
line=$(target_row counts 1 "single command in Redis")
[[ $line == *"| yes |" ]] || fail "pipelined verdict: $line"
line=$(target_row follow 3 "multi-command in Redis")
[[ $line == *"250000 vs 100000 ops/s: 2.50× | **no** |" ]] || fail "a 3× target at 2.5×: $line"
# Slower at p50 is a no, whatever the ops/s.
sed -i 's/^relgraph,counts_unpipelined,12000,47.6/relgraph,counts_unpipelined,30000,60.0/' "$medians"
line=$(target_row counts_unpipelined 1 "single command in Redis")
[[ $line == *"60.0 µs vs 54.2 µs: 0.90× faster | **no** |" ]] || fail "slower p50: $line"

printf 'relation 900000 400000 4200\nfollow 250000 100000 15000\n' >"$work/throughput.dat"
[ "$(log_floor "$work/throughput.dat" 2 3 4)" = 1000 ] || fail "floor below 4200"
printf 'relation 900000 400000 10000\n' >"$work/exact.dat"
[ "$(log_floor "$work/exact.dat" 2 3 4)" = 1000 ] || fail "floor below an exact power of ten"
echo "compare report test: ok"
