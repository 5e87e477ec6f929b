#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite with CTest.
#   tools/test.sh              release build in build/
#   tools/test.sh --sanitize   ASan + UBSan build in build-asan/
# Extra arguments after the options go to ctest (e.g. -R graph).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build
flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
if [ "${1:-}" = "--sanitize" ]; then
  shift
  build=build-asan
  flags=(-DCMAKE_BUILD_TYPE=Debug -DRELGRAPH_SANITIZE=address,undefined -DCMAKE_CXX_FLAGS=-O1)
fi

tools/install-deps.sh
cmake -S . -B "$build" "${flags[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)"
cd "$build"
ctest --output-on-failure -j "$(nproc)" "$@"
