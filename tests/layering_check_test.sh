#!/usr/bin/env bash
# Proves tests/layering_check.sh can fail: in a scratch copy of the sources it passes, then
# each planted forbidden include (or a C++ folder with no stated purpose) must make it fail,
# naming the file. Usage: tests/layering_check_test.sh ROOT
set -u
root=$(cd "${1:-$(dirname "$0")/..}" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
(cd "$root" && find engine net storage tools \( -name '*.h' -o -name '*.cpp' -o -name README.md \) \
   -print0 | tar -cf - --null -T -) | tar -C "$scratch" -xf -
check="$root/tests/layering_check.sh"
status=0
"$check" "$scratch" >/dev/null || { echo "FAIL: the unmodified copy does not pass"; status=1; }

plant() {  # file, line to add, why it is forbidden
  local file=$1 add=$2 why=$3 out
  cp "$scratch/$file" "$scratch/$file.orig"
  echo "$add" >>"$scratch/$file"
  if out=$("$check" "$scratch"); then
    echo "FAIL: not caught: $why ($file: $add)"; status=1
  elif ! grep -q "$file" <<<"$out"; then
    echo "FAIL: caught but the report does not name $file: $out"; status=1
  else
    echo "caught: $why"
  fi
  mv "$scratch/$file.orig" "$scratch/$file"
}
plant engine/graph/graph.h '#include "engine/feed/feed.h"' "graph/ reaching up into feed/"
plant engine/mem/block_pool.h '#include "engine/types.h"' "mem/ knowing engine types"
plant engine/db.h '#include "net/service.h"' "the engine including net/"
plant net/protocol/frame.h '#include "storage/env/env.h"' "net/ including storage/ beyond status.h"
plant storage/wal/wal_writer.h '#include "net/service.h"' "storage/ including net/"
plant storage/env/env.h '#include "storage/wal/wal_format.h"' "env/ including wal/"
plant tools/cli/cli_commands.h '#include "engine/db.h"' "the CLI including the engine"
plant tools/relgraphd/daemon_config.h '#include "net/server/server_core.h"' "a net-internal header used outside net/server/"
plant engine/durable/recovery.h '#include "engine/cluster/user_place.h"' "durable/ reaching up into cluster/"
plant engine/cluster/remote_applier.h '#include "net/service.h"' "an engine room including net/"
plant engine/cluster/bucket_move.h '#include "engine/replication/replica_applier.h"' "cluster/ reaching into replication/"
plant net/protocol/command_table.h '#include "engine/db.h"' "the protocol including the engine"
plant net/roles/replication/replication.h '#include "net/roles/cluster/shard_node.h"' "replication/ reaching up into the shard"

mkdir -p "$scratch/engine/unnamed_room"
echo '#include "engine/db.h"' >"$scratch/engine/unnamed_room/stream.cpp"
if out=$("$check" "$scratch"); then
  echo "FAIL: a folder without a README passed"; status=1
elif grep -q "engine/unnamed_room/ has no README" <<<"$out"; then
  echo "caught: a C++ folder with no stated purpose"
else
  echo "FAIL: unexpected report: $out"; status=1
fi
[ $status -eq 0 ] && echo "layering_check_test: ok"
exit $status
