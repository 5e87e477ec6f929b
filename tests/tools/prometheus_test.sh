#!/usr/bin/env bash
# /metrics as Prometheus sees it (docs/http.md): `promtool check metrics` passes on a real
# relgraphd's page, and a real Prometheus scraping it every second gives back, through its query
# API, the rate of the follows sent meanwhile. Everything on free loopback ports in a temp dir,
# stopped by PID.
# Usage: tests/tools/prometheus_test.sh REPO_ROOT BUILD_DIR
set -euo pipefail
root=$1
bin=$2
source "$root/tools/free_port.sh"
for tool in promtool prometheus curl; do
  command -v $tool >/dev/null || { echo "prometheus_test: $tool missing (tools/install-deps.sh)"; exit 1; }
done
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -n "${RELGRAPH_KEEP_TEST_DIRS:-}" ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
fail() { echo "prometheus_test: $*"; for f in "$work"/*.log; do echo "== $f"; tail -20 "$f"; done; exit 1; }

port=$(free_port); http=$(free_port); prom=$(free_port)
"$bin/relgraphd" --listen=127.0.0.1:$port --http=127.0.0.1:$http --data-dir="$work/data" \
  >"$work/relgraphd.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$http/readyz" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$http/readyz" | grep -q '"ready":true' || fail "relgraphd not ready"
"$bin/relgraph-cli" -p $port follow 1 2 >/dev/null
"$bin/relgraph-cli" -p $port follow 1 1 >/dev/null 2>&1 || true  # an error, by code

# 1. promtool's lint of the exposition format and its naming conventions.
curl -sf "http://127.0.0.1:$http/metrics" >"$work/metrics.txt"
promtool check metrics <"$work/metrics.txt" >"$work/promtool.log" 2>&1 ||
  fail "promtool check metrics failed: $(cat "$work/promtool.log")"
grep -q 'relgraph_command_errors_total{command="follow",code="self_follow"} 1' "$work/metrics.txt" ||
  fail "no self_follow error counted"

# 2. A real Prometheus scraping every second; the follow rate read back from its query API.
cat >"$work/prometheus.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: relgraphd
    static_configs:
      - targets: ['127.0.0.1:$http']
YML
# Started again on another port if its port was taken between the pick and the bind.
for attempt in 1 2 3; do
  prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address=127.0.0.1:$prom >"$work/prometheus.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 50); do
    grep -q "address already in use\|Server is ready" "$work/prometheus.log" && break
    sleep 0.1
  done
  grep -q "address already in use" "$work/prometheus.log" || break
  prom=$(free_port)
done
query() {
  curl -sf -G "http://127.0.0.1:$prom/api/v1/query" --data-urlencode "query=$1" 2>/dev/null || true
}
# Follows keep coming while Prometheus scrapes, until it reports a rate above zero.
rate=""
for i in $(seq 1 25); do
  "$bin/relgraph-cli" -p $port follow $((100 + i)) 1 >/dev/null
  "$bin/relgraph-cli" -p $port follow $((200 + i)) 1 >/dev/null
  got=$(query 'rate(relgraph_commands_total{command="follow"}[10s])')
  rate=$(echo "$got" | sed -n 's/.*"value":\[[0-9.]*,"\([0-9.e+-]*\)"\].*/\1/p')
  if [ -n "$rate" ] && awk -v r="$rate" 'BEGIN { exit !(r > 0) }'; then break; fi
  rate=""
  sleep 1
done
[ -n "$rate" ] || fail "Prometheus never reported a follow rate above 0 (last answer: ${got:-none})"
up=$(query 'up{job="relgraphd"}')
echo "$up" | grep -q '"value":\[[0-9.]*,"1"\]' || fail "the target is not up: $up"
echo "prometheus_test: ok (promtool passes; follow rate $rate/s read back from Prometheus)"
