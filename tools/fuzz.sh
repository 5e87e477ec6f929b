#!/usr/bin/env bash
# Builds the protocol decoder's libFuzzer target with clang (ASan + UBSan) and runs it for
# SECONDS (default 60). Crashes are written to build-fuzz/crashes/. Usage: tools/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
RELGRAPH_WITH_CLANG=1 tools/install-deps.sh
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DRELGRAPH_FUZZ=ON \
  -DRELGRAPH_BUILD_TOOLS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target net_decoder_fuzzer
mkdir -p build-fuzz/corpus build-fuzz/crashes
build-fuzz/tests/net_decoder_fuzzer -max_total_time="$seconds" -max_len=8192 \
  -artifact_prefix=build-fuzz/crashes/ build-fuzz/corpus
