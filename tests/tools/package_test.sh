#!/usr/bin/env bash
# relgraph as others consume it (docs/install.md), from this build:
#   1. `cmake --install` into a scratch prefix: relgraphd.conf names every key of --help, the
#      systemd unit passes systemd-analyze verify;
#   2. the installed relgraphd starts from the installed config (data dir and port overridden)
#      and stops on SIGTERM with exit 0;
#   3. docs/examples/embed and docs/examples/client build with find_package against the prefix
#      and run (the client against that relgraphd); the client links nothing of the engine;
#      both also build with pkg-config;
#   4. the examples build from the source tree as sub-projects (embed by FetchContent, client
#      by add_subdirectory) and run;
#   5. cpack -G DEB builds relgraph and relgraph-dev; their contents and dependencies are
#      checked, and the relgraphd extracted from the package starts from its own config.
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
         include/relgraph/engine/db.h include/relgraph/net/client/client.h; do
  [ -e "$prefix/$f" ] || fail "the install lacks $f"
done
conf=$prefix/etc/relgraph/relgraphd.conf
keys=$("$prefix/bin/relgraphd" --help | grep -oE '^  --[a-z-]+' | sed 's/^  --//' |
       grep -vxE 'config|help')
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
deb_files=$(dpkg-deb -c "$deb" | awk '{print $6}')
dev_files=$(dpkg-deb -c "$dev" | awk '{print $6}')
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
grep -qx /etc/relgraph/relgraphd.conf <<<"$(dpkg-deb -I "$deb" conffiles)" || fail "conffiles"
grep -q sysusers <<<"$(dpkg-deb -I "$deb" postinst)" || fail "postinst"
root=$work/root
dpkg-deb -x "$deb" "$root"
grep -qx "ExecStart=/usr/bin/relgraphd --config=/etc/relgraph/relgraphd.conf" \
  "$root/usr/lib/systemd/system/relgraphd.service" || fail "the package's ExecStart"
start_relgraphd "$root/usr/bin/relgraphd" "$root/etc/relgraph/relgraphd.conf" "$work/pkg-data"
"$root/usr/bin/relgraph-cli" -p "$port" follow 3 4 >/dev/null || fail "the package's relgraph-cli"
stop_relgraphd
echo "package test: ok"
