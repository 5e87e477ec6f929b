#!/usr/bin/env bash
# Installs what is missing, builds, and starts relgraphd in the foreground with its defaults:
# listening on 127.0.0.1:7707, data in ./data, WAL fsync everysec. Arguments are passed to
# relgraphd (see `tools/run.sh --help`), e.g. tools/run.sh --fsync=always. Stop it with Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)"
exec build/relgraphd "$@"
