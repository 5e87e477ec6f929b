#!/bin/bash
# Checks that prefetch hints survive the compiler (engine/mem/prefetch.h):
#   1. a loop that calls a helper marked RELGRAPH_PREFETCH_HELPER keeps the helper's prefetch;
#   2. the fan-out's object keeps its three hints a fan (slot, header, newest entry), which
#      are all helpers;
#   3. a loop over IdMap::Prefetch keeps its hint (the id slots of Import and of every batch
#      of writes: unmarked, it compiled to nothing);
#   4. the id map's object keeps the hint of IdMap::PlaceIds (the home slots of a growth's
#      moves: 2x on a large map).
# It also reports whether an unmarked helper keeps its hint, which is what the macro is for.
# usage: prefetch_check.sh SOURCE_ROOT CXX FANOUT_OBJECT ID_MAP_OBJECT
set -euo pipefail
root=$1; cxx=$2; fanout_object=$3; id_map_object=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
hints='prefetch|prfm'

cat > "$work/helper.cpp" <<'CPP'
#include "engine/mem/prefetch.h"
struct Table {
  const int* slots;
  int n;
  RELGRAPH_PREFETCH_HELPER void Marked(int i) const { if (i < n) __builtin_prefetch(&slots[i]); }
  void Unmarked(int i) const { if (i < n) __builtin_prefetch(&slots[i]); }
};
int SumMarked(const Table& t, const int* idx, int m) {
  int s = 0;
  for (int i = 0; i + 8 < m; ++i) { t.Marked(idx[i + 8]); s += t.slots[idx[i]]; }
  return s;
}
int SumUnmarked(const Table& t, const int* idx, int m) {
  int s = 0;
  for (int i = 0; i + 8 < m; ++i) { t.Unmarked(idx[i + 8]); s += t.slots[idx[i]]; }
  return s;
}
CPP
"$cxx" -std=c++20 -O2 -I"$root" -S -o "$work/helper.s" "$work/helper.cpp"
# The assembly of one function: from its label to the next .cfi_endproc.
body() { awk -v f="$1" '$0 ~ "^"f":" {p=1} p {print} p && /\.cfi_endproc/ {exit}' "$work/helper.s"; }
marked=$(body '_Z9SumMarked[^:]*' | grep -cE "$hints" || true)
unmarked=$(body '_Z11SumUnmarked[^:]*' | grep -cE "$hints" || true)
echo "prefetch hints in a loop: marked helper $marked, unmarked helper $unmarked"
if [ "$marked" -lt 1 ]; then
  echo "FAIL: the compiler dropped a RELGRAPH_PREFETCH_HELPER's prefetch" >&2
  exit 1
fi

cat > "$work/id_map.cpp" <<'CPP'
#include "engine/graph/id_map.h"
void PrefetchAll(const relgraph::IdMap& m, const relgraph::UserId* users, int n) {
  for (int i = 0; i < n; ++i) m.Prefetch(users[i]);
}
CPP
"$cxx" -std=c++20 -O2 -I"$root" -S -o "$work/id_map.s" "$work/id_map.cpp"
id_hints=$(awk '/^_Z11PrefetchAll[^:]*:/ {p=1} p {print} p && /\.cfi_endproc/ {exit}' \
  "$work/id_map.s" | grep -cE "$hints" || true)
echo "prefetch hints in a loop over IdMap::Prefetch: $id_hints"
if [ "$id_hints" -lt 1 ]; then
  echo "FAIL: the compiler dropped IdMap::Prefetch's hint" >&2
  exit 1
fi

fanout=$(objdump -d "$fanout_object" | grep -cE "$hints" || true)
echo "prefetch hints in $(basename "$fanout_object"): $fanout"
if [ "$fanout" -lt 3 ]; then
  echo "FAIL: the fan-out lost its prefetch hints (want at least 3: slot, header, newest)" >&2
  exit 1
fi
place=$(objdump -d "$id_map_object" |
  awk '/<_ZN8relgraph5IdMap8PlaceIds[^>]*>:$/ {p=1; next} p && /^$/ {exit} p {print}' |
  grep -cE "$hints" || true)
echo "prefetch hints in IdMap::PlaceIds: $place"
if [ "$place" -lt 1 ]; then
  echo "FAIL: IdMap::PlaceIds lost its prefetch of the home slots" >&2
  exit 1
fi
echo "prefetch: ok"
