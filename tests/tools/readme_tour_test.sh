#!/usr/bin/env bash
# The README's "A two-minute tour with the CLI", run as a newcomer copies it: every command of
# its code block, in order, against a fresh relgraphd on a free loopback port (with -p PORT
# after the program's name, and the port in place of 7707). Each must exit 0 and print the key
# fact its comment states, listed below; a command of the tour without an entry here fails, so
# the two cannot drift apart.
# Usage: readme_tour_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
bin=$2
work=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# What each command (as written after build/) must print: fixed strings, all of them.
declare -A want=(
  ["relgraph-cli ping"]="pong"
  ["relgraph-cli follow 1 2 1700000001000"]=$'created: true\nrelation: following\n'
  ["relgraph-cli follow 2 1 1700000002000"]="relation: mutual"
  ["relgraph-cli follow 3 2 1700000003000"]="created: true"
  ["relgraph-cli follow 1 3 1700000004000"]="relation: following"
  ["relgraph-cli fans 2 --viewer=1"]=$'3\tts=1700000003000\tmutual with 2: no\t1 to 3: following\n1\tts=1700000001000\tmutual with 2: yes\t'
  ["relgraph-cli fans 2 --limit=1"]=$'3\tts=1700000003000\tmutual with 2: no\n(1 entries)\nnext: relgraph-cli fans 2 --limit=1 --after=1700000003000:3\n'
  ["relgraph-cli fans 2 --limit=1 --after=1700000003000:3"]=$'1\tts=1700000001000\tmutual with 2: yes\n(1 entries)\n'
  ["relgraph-cli counts 2"]=$'following: 1\nfans: 2\nfriends: 1\n'
  ["relgraph-cli known-followers 1 2"]=$'total: 1\nusers: [3]\n'
  ["relgraph-cli --json relations 1 2 3 4"]='{"2":"mutual","3":"following","4":"none"}'
  ["relgraph-cli publish 2 500"]="retained: true"
  ["relgraph-cli publish 3 501 2"]="retained: true"
  ["relgraph-cli timeline 1"]=$'501\tby=3\t'
  ["relgraph-cli timeline 3 --kinds=2 --limit=20"]=$'501\tby=3\t'
  ["relgraph-cli mute 1 2"]="changed: true"
  ["relgraph-cli hide 3 1"]="changed: true"
  ["relgraph-cli user-posts 2"]=$'500\tby=2\t'
  ["relgraph-cli delete-post 2 500"]="deleted: true"
  ["relgraph-cli info"]=$'edges: 4\n'
  ["relgraph-admin snapshot --server=127.0.0.1:7707"]="snapshot"
  ["relgraph-cli"]="fans: 2"
)
# A second fact for some: the order of a timeline, the version in INFO.
declare -A also=(
  ["relgraph-cli timeline 1"]=$'500\tby=2\t'
  ["relgraph-cli info"]="server_version: "
)

"$bin/relgraphd" --listen=127.0.0.1:0 --data-dir="$work/data" 2>"$work/relgraphd.log" &
pid=$!
port=
for _ in $(seq 500); do
  port=$(grep -oE 'listening on [0-9.]+:[0-9]+' "$work/relgraphd.log" | grep -oE '[0-9]+$' || true)
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/relgraphd.log" >&2; fail "relgraphd exited"; }
  sleep 0.02
done
[ -n "$port" ] || fail "relgraphd did not start listening"

# The tour's code block: from its heading to the block's closing fence.
tour=$(awk '/^## A two-minute tour with the CLI/ { on = 1 } on && /^```sh/ { block = 1; next }
            block && /^```/ { exit } block { print }' "$src/README.md")
[ "$(grep -c . <<<"$tour")" -ge 15 ] || fail "could not find the tour in README.md"
ran=0
while IFS= read -r line; do
  [ -n "$line" ] || continue
  command=$(sed -E 's/[[:space:]]*#.*$//' <<<"$line")
  [[ $command == build/* ]] || fail "a tour line that does not run a built program: $line"
  key=${command#build/}
  [ -n "${want[$key]+x}" ] || fail "the tour runs '$key', which this test has no expectation for"
  program=${key%% *}
  args=${key#"$program"}
  args=${args//7707/$port}
  stdin=/dev/null
  if [ "$key" = relgraph-cli ]; then  # the interactive session: two commands typed
    printf 'counts 2\nquit\n' >"$work/stdin"
    stdin=$work/stdin
  fi
  rc=0
  if [ "$program" = relgraph-cli ]; then
    # shellcheck disable=SC2086
    out=$("$bin/$program" -p "$port" $args <"$stdin" 2>&1) || rc=$?
  else
    # shellcheck disable=SC2086
    out=$("$bin/$program" $args <"$stdin" 2>&1) || rc=$?
  fi
  out+=$'\n'
  [ "$rc" = 0 ] || fail "'$key' exited $rc: $out"
  [[ $out == *"${want[$key]}"* ]] || fail "'$key' printed:
$out
which lacks:
${want[$key]}"
  if [ -n "${also[$key]+x}" ]; then
    [[ $out == *"${also[$key]}"* ]] || fail "'$key' printed $out, which lacks ${also[$key]}"
  fi
  ran=$((ran + 1))
done <<<"$tour"
[ "$ran" = "${#want[@]}" ] || fail "ran $ran commands of the tour, expected ${#want[@]}"
echo "README tour: ok ($ran commands)"
