#!/usr/bin/env bash
# Installs what is missing, builds, and runs relgraph's main program with its defaults.
# Until relgraphd exists (issue 4) that is the embedded benchmark on its default workload
# (10M generated edges); arguments are passed through, e.g. tools/run.sh --edges=1000000.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)"
exec build/relgraph-bench "$@"
