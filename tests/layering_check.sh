#!/usr/bin/env bash
# Fails when a folder includes what its README does not allow (docs/design.md, "Layers").
#
# Every folder under engine/, net/, storage/ and tools/ that holds C++ files has a README.md
# with its purpose and a line
#   May include: `prefix` ...     a prefix ending in / names a folder, else one header
# and, optionally,
#   Internal: `header` ...        headers no other folder may include
# A file may include its own folder's headers and what its folder's line allows; nothing else
# of ours (engine/, net/, storage/, tools/). A C++ folder without such a README fails too.
# Usage: tests/layering_check.sh [ROOT]
set -u
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
fail=0
say() { echo "layering: $*"; fail=1; }

rules_of() {  # folder, key -> the backticked words of the line "key: ..." in its README
  sed -n "s/^$2:\(.*\)/\1/p" "$1/README.md" 2>/dev/null | grep -o '`[^`]*`' | tr -d '`'
}

folders=$(find engine net storage tools -type f \( -name '*.h' -o -name '*.cpp' \) -printf '%h\n' | sort -u)
if [ -z "$folders" ]; then echo "layering: no C++ folders under $root"; exit 2; fi
internal=()
for d in $folders; do
  for h in $(rules_of "$d" Internal); do internal+=("$d|$h"); done
done

for d in $folders; do
  if ! grep -q '^May include:' "$d/README.md" 2>/dev/null; then
    say "$d/ has no README.md with a 'May include:' line (every folder states its purpose and rule)"
    continue
  fi
  allowed=$(rules_of "$d" 'May include')
  while IFS=: read -r file line inc; do
    [ -n "$file" ] || continue
    inc=${inc#*\"}; inc=${inc%%\"*}
    ok=0
    [ "$(dirname "$inc")" = "$d" ] && ok=1
    for a in $allowed; do
      case $a in
        */) [[ $inc == "$a"* ]] && ok=1 ;;
        *) [ "$inc" = "$a" ] && ok=1 ;;
      esac
    done
    for entry in "${internal[@]}"; do
      owner=${entry%%|*}; header=${entry#*|}
      [ "$inc" = "$header" ] && [ "$owner" != "$d" ] && ok=0
    done
    [ $ok -eq 1 ] || say "$file:$line includes \"$inc\", which $d/README.md does not allow"
  done < <(grep -nE '^#include "(engine|net|storage|tools)/' "$d"/*.h "$d"/*.cpp 2>/dev/null |
           sed -E 's/^([^:]*):([0-9]*):(.*)$/\1:\2:\3/')
done
[ $fail -eq 0 ] && echo "layering: ok ($(echo "$folders" | wc -l) folders)"
exit $fail
