#!/usr/bin/env bash
# A replication group on this machine, failed over and switched over on purpose
# (docs/benchmarks.md, "Automatic failover"): starts nats-server and three relgraphd members
# of one group (--fsync=always --sync-replicas=1) on loopback, runs writers through a
# GroupClient (relgraph-bench --target=group), then
#   - --failovers=N times: kill -9 of the primary, the time from the kill to the first write
#     the new primary acknowledged (the killed member restarts and rejoins after it);
#   - --switchovers=N times: relgraph-admin group switchover, the longest time a writer saw
#     between its last acknowledged write on the old primary and its first on the new;
# and prints p50 / p99 / max of each, with the writers' totals. Stops what it started by PID.
# --cost=OPS: instead, the cost of the lease and the members' reports on pipelined follows:
# relgraph-bench's `follow` row (OPS ops) against a primary with two replicas, in a group and
# not, paired runs alternated three times, medians and their ratio.
# Usage: tools/bench/failover_bench.sh [--failovers=50] [--switchovers=20] | --cost=2000000
set -euo pipefail
cd "$(dirname "$0")/../.."
failovers=50
switchovers=20
cost=0
for a in "$@"; do
  case "$a" in
    --failovers=*) failovers="${a#--failovers=}" ;;
    --switchovers=*) switchovers="${a#--switchovers=}" ;;
    --cost=*) cost="${a#--cost=}" ;;
    *) echo "failover_bench.sh: unknown flag $a" >&2; exit 2 ;;
  esac
done
source tools/free_port.sh
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [[ -n ${KEEP_WORK:-} ]]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
nats_bin=$(command -v nats-server || echo /usr/sbin/nats-server)
nats_port=$(free_port)
"$nats_bin" -js -sd "$work/nats" -a 127.0.0.1 -p "$nats_port" >"$work/nats.log" 2>&1 &
pids+=($!)
url="nats://127.0.0.1:$nats_port"
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$nats_port") 2>/dev/null && break; sleep 0.05; done
lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print "cpu: " $2}'
group=bench

declare -A port pid_of
nodes=""
for i in 1 2 3; do
  port[$i]=$(free_port)
  nodes+="${nodes:+,}127.0.0.1:${port[$i]}"
done
# start_member I [flags...]: relgraphd member I in the background.
start_member() {
  local i=$1
  shift
  build/relgraphd --data-dir="$work/m$i" --listen="127.0.0.1:${port[$i]}" --rate-limit=off \
    --snapshot-interval-s=0 "$@" 2>>"$work/m$i.log" &
  pid_of[$i]=$!
  pids+=($!)
  for _ in $(seq 200); do
    build/relgraph-cli -p "${port[$i]}" ping >/dev/null 2>&1 && return
    sleep 0.05
  done
}
# The member the lease names.
holder() {
  build/relgraph-admin group status --group="$group" --nats="$url" --json |
    sed -n 's/.*"lease":{"holder":"\([^"]*\)".*/\1/p'
}
member_of() {
  for i in 1 2 3; do
    if [[ "127.0.0.1:${port[$i]}" == "$1" ]]; then echo "$i"; fi
  done
}
wait_primary() {
  for _ in $(seq 400); do
    local h
    h=$(holder)
    if [[ -n $h ]] && build/relgraph-cli -h 127.0.0.1 -p "${h##*:}" replication 2>/dev/null |
      grep -q "^role: primary"; then
      echo "$h"
      return
    fi
    sleep 0.05
  done
  echo "failover_bench.sh: no primary" >&2
  exit 1
}
# p50 p99 max of numbers on stdin.
stats() {
  sort -n | awk '{v[NR]=$1} END {
    if (NR == 0) { print "none"; exit }
    i50 = int(0.5 * NR + 0.5); if (i50 < 1) i50 = 1
    i99 = int(0.99 * NR + 0.999); if (i99 > NR) i99 = NR
    printf "p50 %.0f ms, p99 %.0f ms, max %.0f ms over %d\n", v[i50], v[i99], v[NR], NR }'
}

if [[ $cost != 0 ]]; then
  # Pipelined follows on a primary with two replicas, without and with the group's lease.
  declare -a plain_rates group_rates
  for round in 1 2 3; do
    for kind in plain group; do
      for i in 1 2 3; do
        if [[ -n ${pid_of[$i]:-} ]]; then
          kill -9 "${pid_of[$i]}" 2>/dev/null || true
          wait "${pid_of[$i]}" 2>/dev/null || true
        fi
      done
      for i in 1 2 3; do rm -rf "$work/m$i"; done
      group="cost$round"
      if [[ $kind == group ]]; then
        for i in 1 2 3; do start_member "$i" --group="$group" --group-nats="$url"; done
        h=$(wait_primary)
      else
        start_member 1
        start_member 2 --replica-of="127.0.0.1:${port[1]}"
        start_member 3 --replica-of="127.0.0.1:${port[1]}"
        h="127.0.0.1:${port[1]}"
      fi
      rate=$(build/relgraph-bench --target=server --server="$h" \
        --workloads=follow --ops="$cost" --edges=100000 --format=csv | awk -F, '$1=="follow" {print $4}')
      echo "round $round $kind: follow $rate ops/s"
      if [[ $kind == group ]]; then group_rates+=("$rate"); else plain_rates+=("$rate"); fi
    done
  done
  pm=$(printf '%s\n' "${plain_rates[@]}" | sort -n | sed -n 2p)
  gm=$(printf '%s\n' "${group_rates[@]}" | sort -n | sed -n 2p)
  awk -v p="$pm" -v g="$gm" 'BEGIN { printf "median: plain %.0f, group %.0f ops/s, ratio %.3f\n", p, g, g / p }'
  exit 0
fi

for i in 1 2 3; do
  start_member "$i" --fsync=always --sync-replicas=1 --group=bench --group-nats="$url"
done
wait_primary >/dev/null
seconds=$((failovers * 9 + switchovers * 4 + 30))
build/relgraph-bench --target=group --group-nodes="$nodes" --connections=4 --seconds="$seconds" \
  >"$work/writers.txt" 2>&1 &
writer=$!
pids+=($writer)
sleep 3
: >"$work/failover_ms.txt"
for n in $(seq "$failovers"); do
  old=$(wait_primary)
  i=$(member_of "$old")
  seen=$(grep -c primary_change "$work/writers.txt" || true)
  killed_us=$(date +%s%6N)
  kill -9 "${pid_of[$i]}"
  wait "${pid_of[$i]}" 2>/dev/null || true
  # The first write acknowledged by another primary, from any writer.
  for _ in $(seq 600); do
    first=$(tail -n +"$((seen + 1))" "$work/writers.txt" |
      awk -v old="to=$old" '/^primary_change/ && $3 != old { sub(/first_ack_unix_us=/, "", $4); print $4 }' |
      sort -n | head -1)
    [[ -n $first ]] && break
    sleep 0.05
  done
  if [[ -z $first ]]; then
    echo "failover $n: no write acknowledged by a new primary within 30 s" >&2
    exit 1
  fi
  echo $(((first - killed_us) / 1000)) >>"$work/failover_ms.txt"
  start_member "$i" --fsync=always --sync-replicas=1 --group=bench --group-nats="$url"
  sleep 4  # it rejoins and catches up; the lease moves on
done
: >"$work/switchover_ms.txt"
for n in $(seq "$switchovers"); do
  seen=$(grep -c primary_change "$work/writers.txt" || true)
  build/relgraph-admin group switchover --group=bench --nats="$url" >/dev/null
  sleep 2
  tail -n +"$((seen + 1))" "$work/writers.txt" |
    awk '/^primary_change/ { sub(/gap_ms=/, "", $5); print $5 }' | sort -n | tail -1 \
    >>"$work/switchover_ms.txt"
done
kill "$writer" 2>/dev/null || true
echo "failover (kill -9 of the primary to the first write the new one acknowledged): $(stats <"$work/failover_ms.txt")"
echo "switchover pause (longest gap a writer saw): $(stats <"$work/switchover_ms.txt")"
echo "primary changes seen by writers: $(grep -c primary_change "$work/writers.txt" || true)"
