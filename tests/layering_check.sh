#!/usr/bin/env bash
# Fails when a layer includes a layer above it or a sibling (docs/design.md, "Layers"):
#   storage/ includes nothing of ours but storage/;
#   net/ includes only net/ and the vocabulary header storage/status.h;
#   engine/ includes engine/, storage/ and only the interface headers of net/ (service,
#   messages, protocol, wire_codec), never its server or client, never tools/.
set -u
root=${1:-$(dirname "$0")/..}
fail=0
check() {  # folder, allowed-include regex
  local bad
  bad=$(grep -rnE '#include "(engine|net|storage|tools)/' "$root/$1" 2>/dev/null | grep -vE "#include \"($2)")
  if [ -n "$bad" ]; then
    echo "layering violation in $1/:"; echo "$bad"; fail=1
  fi
}
check storage 'storage/'
check net 'net/|storage/status\.h'
check engine 'engine/|storage/|net/(service|messages|protocol|wire_codec)\.h'
[ $fail -eq 0 ] && echo "layering: ok"
exit $fail
