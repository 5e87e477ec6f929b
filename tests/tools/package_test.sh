#!/usr/bin/env bash
# relgraph as others consume it (docs/install.md), from this build:
#   1. `cmake --install` into a scratch prefix: relgraphd.conf names every key of --help, the
#      systemd unit passes systemd-analyze verify;
#   2. the installed relgraphd starts from the installed config (data dir and port overridden)
#      and stops on SIGTERM with exit 0;
#   3. docs/examples/embed and docs/examples/client build with find_package against the prefix
#      and run (the client against that relgraphd); the client links nothing of the engine;
#      both also build with pkg-config;
#   4. every target relgraphTargets.cmake exports links into a program, with find_package and
#      with the pkg-config file that covers it;
#   5. the examples build from the source tree as sub-projects (embed by FetchContent, client
#      by add_subdirectory) and run;
#   6. cpack -G DEB builds relgraph, relgraph-tools and relgraph-dev; their contents and
#      dependencies are checked (the server package needs neither hiredis nor libpq), the
#      relgraphd extracted from the package starts from its own config, and the maintainer
#      scripts stop and disable the service on remove and keep the data on purge, with and
#      without a running systemd.
# Usage: package_test.sh SOURCE_DIR BUILD_DIR [SANITIZERS]
set -euo pipefail
src=$1
build=$2
sanitize=${3:-}
work=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }
# Static libraries built with sanitizers need them at link time too.
flags=()
if [ -n "$sanitize" ]; then
  flags=(-DCMAKE_CXX_FLAGS=-fsanitize=$sanitize -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=$sanitize)
fi
cflags=${sanitize:+-fsanitize=$sanitize}

# start_relgraphd BINARY CONFIG DATA_DIR: starts it on a free loopback port, sets pid and port.
start_relgraphd() {
  "$1" --config="$2" --data-dir="$3" --listen=127.0.0.1:0 2>"$work/relgraphd.log" &
  pid=$!
  port=
  for _ in $(seq 500); do
    port=$(grep -oE 'listening on [0-9.]+:[0-9]+' "$work/relgraphd.log" | grep -oE '[0-9]+$' || true)
    [ -n "$port" ] && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$work/relgraphd.log" >&2; fail "$1 exited"; }
    sleep 0.02
  done
  fail "$1 did not start listening"
}
stop_relgraphd() {
  kill -TERM "$pid"
  local rc=0
  wait "$pid" || rc=$?
  pid=
  [ "$rc" = 0 ] || { cat "$work/relgraphd.log" >&2; fail "relgraphd exited $rc on SIGTERM"; }
  grep -q "stopped cleanly" "$work/relgraphd.log" || fail "relgraphd did not log a clean stop"
}

step "cmake --install into a prefix"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/relgraphd bin/relgraph-cli bin/relgraph-admin bin/relgraph-bridge \
         etc/relgraph/relgraphd.conf lib/systemd/system/relgraphd.service \
         lib/sysusers.d/relgraph.conf lib/cmake/relgraph/relgraphConfig.cmake \
         lib/pkgconfig/relgraph.pc lib/pkgconfig/relgraph-client.pc \
         lib/pkgconfig/relgraph-server.pc lib/pkgconfig/relgraph-cluster.pc bin/relgraph-bench \
         include/relgraph/engine/db.h include/relgraph/net/client/client.h; do
  [ -e "$prefix/$f" ] || fail "the install lacks $f"
done
conf=$prefix/etc/relgraph/relgraphd.conf
keys=$("$prefix/bin/relgraphd" --help | grep -oE '^  --[a-z-]+' | sed 's/^  --//' |
       grep -vxE 'config|help|version')
[ "$(echo "$keys" | wc -l)" -gt 20 ] || fail "could not read the keys of relgraphd --help"
for key in $keys; do
  grep -qE "^(# )?$key =" "$conf" || fail "relgraphd.conf does not name --$key"
done
unit=$prefix/lib/systemd/system/relgraphd.service
grep -qx "ExecStart=$prefix/bin/relgraphd --config=$conf" "$unit" || fail "ExecStart in $unit"
systemd-analyze verify "$unit" || fail "systemd-analyze verify $unit"

step "the installed relgraphd, from the installed config"
start_relgraphd "$prefix/bin/relgraphd" "$conf" "$work/data"
"$prefix/bin/relgraph-cli" -p "$port" ping | grep -q . || fail "relgraph-cli ping"

step "examples against the installed package (find_package)"
for example in embed client; do
  cmake -S "$src/docs/examples/$example" -B "$work/$example" -DCMAKE_PREFIX_PATH="$prefix" \
    "${flags[@]}" >/dev/null || fail "configuring docs/examples/$example with find_package"
  cmake --build "$work/$example" >/dev/null || fail "building docs/examples/$example"
done
"$work/embed/relgraph-embed-example" "$work/embedded" | grep -qx "user 2 has 1 fans" ||
  fail "the embed example"
"$work/client/relgraph-client-example" "127.0.0.1:$port" | grep -qx "user 2 has 1 fans" ||
  fail "the client example"
client_symbols=$(nm -C "$work/client/relgraph-client-example")
if grep -qE 'relgraph::(Db|Graph|Feed)::' <<<"$client_symbols"; then
  fail "the client example links engine code"
fi

step "examples with pkg-config"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046
g++ $cflags "$src/docs/examples/embed/main.cpp" $(pkg-config --cflags --libs relgraph) \
  -o "$work/pc-embed" || fail "pkg-config relgraph"
"$work/pc-embed" "$work/pc-data" | grep -qx "user 2 has 1 fans" || fail "the pkg-config embed"
# shellcheck disable=SC2046
g++ $cflags "$src/docs/examples/client/main.cpp" $(pkg-config --cflags --libs relgraph-client) \
  -o "$work/pc-client" || fail "pkg-config relgraph-client"
"$work/pc-client" "127.0.0.1:$port" | grep -qx "user 2 has 1 fans" || fail "the pkg-config client"

step "every exported target, with find_package and with pkg-config"
# One program per target: a header of it and a call into its library, so that linking needs it.
declare -A probe_include=(
  [status]='storage/status.h' [storage]='storage/env/env.h' [protocol]='net/protocol/messages.h'
  [client]='net/client/client.h' [server]='net/server/server.h'
  [net]='net/server/server.h net/client/client.h'
  [mem]='engine/mem/resident.h' [graph]='engine/graph/graph.h' [feed]='engine/feed/feed.h'
  [durable]='engine/durable/wal_records.h' [stream]='engine/stream/change_reader.h'
  [import]='engine/import/edge_list.h' [engine]='engine/db.h' [cluster]='net/cluster/nats_link.h'
  [http]='net/http/prometheus_text.h' [tls]='net/tls/tls_flags.h'
  [auth]='net/auth/client_registry.h')
declare -A probe_call=(
  [status]='(void)relgraph::Status::InvalidArgument("x").ToString();'
  [storage]='(void)relgraph::JoinPath("a", "b");'
  [protocol]='(void)relgraph::net::RelationCodeName(relgraph::net::RelationCode::kNone);'
  [client]='auto f = &relgraph::net::Client::Connect; (void)f;'
  [server]='auto f = &relgraph::net::Server::Start; (void)f;'
  [net]='auto f = &relgraph::net::Server::Start; auto g = &relgraph::net::Client::Connect; (void)f; (void)g;'
  [mem]='(void)relgraph::ResidentBytes();'
  [graph]='relgraph::Graph g; (void)g.Follow(1, 2);'
  [feed]='(void)relgraph::ValidateFeedOptions({});'
  [durable]='(void)relgraph::DescribeWalRecord(0, "");'
  [stream]='(void)relgraph::DecodeChangeEvent(1, 0, "");'
  [import]='auto f = &relgraph::EdgeListReader::Open; (void)f;'
  [engine]='auto f = &relgraph::Db::Open; (void)f;'
  [cluster]='auto f = &relgraph::net::NatsLink::Connect; (void)f;'
  [http]='(void)relgraph::net::EscapeLabelValue("a");'
  [tls]='relgraph::net::TlsClientOptions o; (void)relgraph::net::ApplyTlsFlag("--tls", &o);'
  [auth]='(void)relgraph::net::TokenCredential("t");')
declare -A probe_pc=(
  [status]=relgraph [storage]=relgraph [mem]=relgraph [graph]=relgraph [feed]=relgraph
  [durable]=relgraph [stream]=relgraph [import]=relgraph [engine]=relgraph
  [protocol]=relgraph-client [client]=relgraph-client [server]=relgraph-server
  [net]=relgraph-server [cluster]=relgraph-cluster [http]=relgraph-server
  [tls]=relgraph-client [auth]=relgraph-server)
exported=$(grep -oE 'add_library\(relgraph::[a-z_]+' "$prefix/lib/cmake/relgraph/relgraphTargets.cmake" |
           sed 's/.*:://' | sort)
[ "$(echo "$exported" | wc -l)" -ge 14 ] || fail "relgraphTargets.cmake exports only: $exported"
grep -qx cluster <<<"$exported" || fail "relgraph::cluster is not exported"
probes=$work/targets
mkdir -p "$probes"
{
  echo 'cmake_minimum_required(VERSION 3.21)'
  echo 'project(relgraph_targets LANGUAGES CXX)'
  echo 'find_package(relgraph REQUIRED)'
} >"$probes/CMakeLists.txt"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
for t in $exported; do
  [ -n "${probe_call[$t]:-}" ] || fail "relgraph::$t is exported but this test has no program for it"
  {
    for h in ${probe_include[$t]}; do echo "#include \"$h\""; done
    printf 'int main() {\n  %s\n  return 0;\n}\n' "${probe_call[$t]}"
  } >"$probes/$t.cpp"
  echo "add_executable(use_$t $t.cpp)" >>"$probes/CMakeLists.txt"
  echo "target_link_libraries(use_$t PRIVATE relgraph::$t)" >>"$probes/CMakeLists.txt"
  # shellcheck disable=SC2046
  g++ $cflags "$probes/$t.cpp" $(pkg-config --cflags --libs "${probe_pc[$t]}") \
    -o "$work/pc-use-$t" || fail "relgraph::$t through pkg-config ${probe_pc[$t]}"
done
cmake -S "$probes" -B "$work/targets-build" -DCMAKE_PREFIX_PATH="$prefix" "${flags[@]}" \
  >/dev/null || fail "find_package(relgraph) for every exported target"
cmake --build "$work/targets-build" -j "$(nproc)" >/dev/null ||
  fail "linking every exported target with find_package"

step "the examples as sub-projects of the source tree (FetchContent, add_subdirectory)"
for example in embed client; do
  cmake -S "$src/docs/examples/$example" -B "$work/sub-$example" -DRELGRAPH_SOURCE_DIR="$src" \
    -DCMAKE_BUILD_TYPE=Debug "${flags[@]}" >/dev/null || fail "configuring sub-project $example"
  cmake --build "$work/sub-$example" -j "$(nproc)" >/dev/null || fail "building sub-project $example"
done
"$work/sub-embed/relgraph-embed-example" "$work/sub-data" | grep -qx "user 2 has 1 fans" ||
  fail "the sub-project embed example"
"$work/sub-client/relgraph-client-example" "127.0.0.1:$port" | grep -qx "user 2 has 1 fans" ||
  fail "the sub-project client example"
stop_relgraphd

step "Debian packages (cpack -G DEB)"
(cd "$build" && cpack -G DEB -B "$work/deb" >/dev/null) || fail "cpack -G DEB"
deb=$(ls "$work"/deb/relgraph_*.deb)
dev=$(ls "$work"/deb/relgraph-dev_*.deb)
tools=$(ls "$work"/deb/relgraph-tools_*.deb)
deb_files=$(dpkg-deb -c "$deb" | awk '{print $6}')
dev_files=$(dpkg-deb -c "$dev" | awk '{print $6}')
tools_files=$(dpkg-deb -c "$tools" | awk '{print $6}')
grep -qx ./usr/bin/relgraph-bench <<<"$tools_files" || fail "relgraph-tools lacks relgraph-bench"
! grep -q relgraph-bench <<<"$deb_files" || fail "relgraph-bench is in the server package"
tools_depends=$(dpkg-deb -f "$tools" Depends)
[[ "$tools_depends" == *libhiredis* && "$tools_depends" == *libpq* ]] ||
  fail "relgraph-tools does not depend on hiredis and libpq: $tools_depends"
[[ "$(dpkg-deb -f "$dev" Depends)" == *libnats-dev* ]] || fail "relgraph-dev lacks libnats-dev"
for f in ./usr/bin/relgraphd ./usr/bin/relgraph-cli ./usr/bin/relgraph-admin \
         ./etc/relgraph/relgraphd.conf ./usr/lib/systemd/system/relgraphd.service \
         ./usr/lib/sysusers.d/relgraph.conf; do
  grep -qx "$f" <<<"$deb_files" || fail "the relgraph package lacks $f"
done
for f in ./usr/include/relgraph/engine/db.h ./usr/lib/cmake/relgraph/relgraphConfig.cmake \
         ./usr/lib/pkgconfig/relgraph.pc ./usr/lib/librelgraph_engine.a; do
  grep -qx "$f" <<<"$dev_files" || fail "the relgraph-dev package lacks $f"
done
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libxxhash0 liblz4-1 libstdc++6; do
  [[ "$depends" == *"$lib"* ]] || fail "the relgraph package does not depend on $lib: $depends"
done
for lib in libhiredis libpq; do
  [[ "$depends" != *"$lib"* ]] || fail "the relgraph package depends on $lib: $depends"
done
grep -qx /etc/relgraph/relgraphd.conf <<<"$(dpkg-deb -I "$deb" conffiles)" || fail "conffiles"
grep -q sysusers <<<"$(dpkg-deb -I "$deb" postinst)" || fail "postinst"
root=$work/root
dpkg-deb -x "$deb" "$root"
grep -qx "ExecStart=/usr/bin/relgraphd --config=/etc/relgraph/relgraphd.conf" \
  "$root/usr/lib/systemd/system/relgraphd.service" || fail "the package's ExecStart"
start_relgraphd "$root/usr/bin/relgraphd" "$root/etc/relgraph/relgraphd.conf" "$work/pkg-data"
"$root/usr/bin/relgraph-cli" -p "$port" follow 3 4 >/dev/null || fail "the package's relgraph-cli"
stop_relgraphd

step "maintainer scripts: stop and disable on remove, keep the data on purge"
# The scripts from the package, run as dpkg runs them, with systemctl, deb-systemd-helper and
# deb-systemd-invoke replaced by stubs that log their arguments; DPKG_ROOT points the scripts'
# checks (a running systemd, the data directory) at a scratch root.
scripts=$work/scripts
dpkg-deb -e "$deb" "$scripts"
for s in postinst prerm postrm; do [ -x "$scripts/$s" ] || fail "the package has no $s"; done
stubs=$work/stubs
mkdir -p "$stubs"
for tool in systemctl deb-systemd-helper deb-systemd-invoke; do
  printf '#!/bin/sh\necho "%s $*" >>"%s"\nexit ${STUB_EXIT:-0}\n' "$tool" "$work/calls" \
    >"$stubs/$tool"
  chmod +x "$stubs/$tool"
done
fake=$work/fakeroot
run_script() {  # script args... -> its stderr in $work/script.err; fails the test on nonzero
  : >"$work/calls"
  PATH=$stubs:$PATH DPKG_ROOT=$fake "$scripts/$1" "${@:2}" 2>"$work/script.err" ||
    fail "$1 $* exited nonzero: $(cat "$work/script.err")"
}
mkdir -p "$fake/run/systemd/system" "$fake/var/lib/relgraph"
run_script prerm remove
grep -qx "deb-systemd-invoke stop relgraphd.service" "$work/calls" || fail "prerm remove does not stop"
run_script prerm upgrade 0.1.0
[ ! -s "$work/calls" ] || fail "prerm upgrade stops the service: $(cat "$work/calls")"
run_script postrm remove
grep -qx "deb-systemd-helper disable relgraphd.service" "$work/calls" ||
  fail "postrm remove does not disable"
grep -qx "systemctl daemon-reload" "$work/calls" || fail "postrm remove does not reload systemd"
run_script postrm purge
grep -qx "deb-systemd-helper purge relgraphd.service" "$work/calls" || fail "postrm purge"
grep -q "kept the data in /var/lib/relgraph" "$work/script.err" || fail "purge does not say the data is kept"
[ -d "$fake/var/lib/relgraph" ] || fail "purge removed the data"
# Without a running systemd (a container, a chroot) and with every helper failing, the scripts
# still succeed and call nothing that needs systemd.
rm -r "$fake/run/systemd/system"
export STUB_EXIT=1
run_script prerm remove
[ ! -s "$work/calls" ] || fail "prerm remove without systemd called: $(cat "$work/calls")"
run_script postrm remove
! grep -q systemctl "$work/calls" || fail "postrm remove without systemd called systemctl"
run_script postrm purge
unset STUB_EXIT
echo "package test: ok"
