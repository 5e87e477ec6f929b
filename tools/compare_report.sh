# The comparison report's figures and verdicts (tools/compare.sh, docs/comparison.md), sourced
# by compare.sh and by tests/tools/compare_report_test.sh. Every ratio reads "higher is better
# for relgraph": a pipelined row compares throughput (relgraph's ops/s over the other's), an
# unpipelined row compares latency (the other's p50 over relgraph's), because the report shows
# those rows' p50 and a verdict must agree with the figures beside it.
#
# Needs $medians, the CSV compare.sh writes: design,row,ops_per_sec,p50_us,p99_us (memory
# rows: bytes per edge in ops_per_sec).

get() {  # design, row, column (3 ops/s, 4 p50, 5 p99) -> the value, or nothing
  awk -F, -v d="$1" -v w="$2" -v c="$3" '$1 == d && $2 == w { print $c }' "$medians"
}
ratio() {  # a, b -> a / b with two decimals, or "-" when b is missing or zero
  awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0 && a != "") printf "%.2f", a / b; else print "-" }'
}
# row_ratio DESIGN ROW -> how many times better relgraph is than DESIGN on ROW.
row_ratio() {
  if [[ $2 == *_unpipelined ]]; then
    ratio "$(get "$1" "$2" 4)" "$(get relgraph "$2" 4)"
  else
    ratio "$(get relgraph "$2" 3)" "$(get "$1" "$2" 3)"
  fi
}
check() {  # name, measured text, pass expression (awk) -> a table row
  echo "| $1 | $2 | $(awk "BEGIN { print ($3) ? \"yes\" : \"**no**\" }") |"
}
# target_row ROW FACTOR TEXT: the row's target against Redis, relgraph at least FACTOR times
# better: ops/s for a pipelined row, p50 for an unpipelined one.
target_row() {
  local row=$1 factor=$2 text=$3 a b
  if [[ $row == *_unpipelined ]]; then
    a=$(get relgraph "$row" 4) b=$(get redis "$row" 4)
    check "$row ($text) p50 ≤ Redis's / $factor" \
      "$a µs vs $b µs: $(row_ratio redis "$row")× faster" "$a > 0 && $a * $factor <= $b"
  else
    a=$(get relgraph "$row" 3) b=$(get redis "$row" 3)
    check "$row ($text) ≥ $factor× Redis's ops/s" \
      "$a vs $b ops/s: $(row_ratio redis "$row")×" "$b > 0 && $a >= $factor * $b"
  fi
}
# log_floor FILE COLUMNS...: a power of ten below the smallest positive value in those columns
# of a whitespace-separated data file (a log-scale chart's floor, so every bar shows).
log_floor() {
  local file=$1
  shift
  awk -v cols="$*" 'BEGIN { n = split(cols, c, " "); min = 0 }
    { for (i = 1; i <= n; i++) { v = $(c[i]) + 0; if (v > 0 && (min == 0 || v < min)) min = v } }
    END { if (min == 0) { print 1; exit } e = int(log(min) / log(10)); if (10 ^ e >= min) e--
          printf "%g\n", 10 ^ e }' "$file"
}
