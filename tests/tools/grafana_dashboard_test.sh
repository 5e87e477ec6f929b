#!/usr/bin/env bash
# tools/grafana: the dashboard is valid JSON that Grafana can provision (panels with targets,
# the provisioning file naming its folder), and every metric name its queries use is on a real
# relgraphd's /metrics page (docs/http.md). relgraphd on free loopback ports in a temp dir,
# stopped by PID.
# Usage: tests/tools/grafana_dashboard_test.sh REPO_ROOT BUILD_DIR
set -euo pipefail
root=$1
bin=$2
source "$root/tools/free_port.sh"
work=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  if [ -n "${RELGRAPH_KEEP_TEST_DIRS:-}" ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
fail() { echo "grafana_dashboard_test: $*"; tail -20 "$work/relgraphd.log" 2>/dev/null; exit 1; }

port=$(free_port); http=$(free_port)
"$bin/relgraphd" --listen=127.0.0.1:$port --http=127.0.0.1:$http --data-dir="$work/data" \
  >"$work/relgraphd.log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$http/readyz" >/dev/null && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$http/readyz" | grep -q '"ready":true' || fail "relgraphd not ready"
# What makes the labelled families appear: an error by code, a named cursor.
"$bin/relgraph-cli" -p $port follow 1 2 >/dev/null
"$bin/relgraph-cli" -p $port follow 1 1 >/dev/null 2>&1 || true
"$bin/relgraph-cli" -p $port ack dashboard 1 >/dev/null
curl -sf "http://127.0.0.1:$http/metrics" >"$work/metrics.txt" || fail "no /metrics"

/usr/bin/python3 - "$root/tools/grafana" "$work/metrics.txt" <<'PY' || fail "the dashboard does not match /metrics"
import json, re, sys
grafana, metrics = sys.argv[1], sys.argv[2]
dash = json.load(open(grafana + "/relgraph.json"))
assert dash["uid"] and dash["title"], "a dashboard needs a uid and a title"
names = set(re.findall(r"^(relgraph_[a-z_]+)", open(metrics).read(), re.M))
used, ids = set(), set()
for p in dash["panels"]:
    assert p["id"] not in ids, "panel ids are unique"
    ids.add(p["id"])
    if p["type"] == "row":
        continue
    assert p["targets"], p["title"] + ": no query"
    for t in p["targets"]:
        found = re.findall(r"relgraph_[a-z_]+", t["expr"])
        assert found, p["title"] + ": a query without a relgraph metric"
        used.update(found)
missing = sorted(used - names)
if missing:
    sys.exit("queried but not on /metrics: " + ", ".join(missing))
prov = open(grafana + "/provisioning/dashboards.yaml").read()
assert "type: file" in prov and "path:" in prov, "the provider loads files"
print("dashboard: %d panels, %d metrics, all on /metrics" % (len(ids), len(used)))
PY
