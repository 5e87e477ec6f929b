#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan): the protocol decoder and the TLS
# handshake (a server's TLS channel), and runs them for SECONDS in all (default 60; two thirds
# for the decoder). Crashes are written to build-fuzz/crashes/. Usage: tools/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
RELGRAPH_WITH_CLANG=1 tools/install-deps.sh
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DRELGRAPH_FUZZ=ON \
  -DRELGRAPH_BUILD_TOOLS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target net_decoder_fuzzer net_tls_handshake_fuzzer
mkdir -p build-fuzz/corpus build-fuzz/tls-corpus build-fuzz/crashes
build-fuzz/tests/net_decoder_fuzzer -max_total_time=$(( seconds * 2 / 3 )) -max_len=8192 \
  -artifact_prefix=build-fuzz/crashes/ build-fuzz/corpus
build-fuzz/tests/net_tls_handshake_fuzzer -max_total_time=$(( seconds / 3 )) -max_len=4096 \
  -artifact_prefix=build-fuzz/crashes/ build-fuzz/tls-corpus
