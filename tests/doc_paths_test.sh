#!/usr/bin/env bash
# Every scripts/NAME that the build files, the docs, the scripts and the sources point users to
# exists (a message naming a script that is not there sends a new user nowhere).
set -euo pipefail
src="$1"
cd "$src"
status=0
files=$(find . -path ./.git -prune -o -path './build*' -prune -o -type f \
          \( -name 'CMakeLists.txt' -o -name '*.cmake' -o -name '*.md' -o -name '*.sh' -o -name '*.py' \
             -o -name '*.cc' -o -name '*.h' -o -name '*.cu' -o -name '*.ini' \) -print)
for ref in $(grep -ohE 'scripts/[A-Za-z0-9_.-]+\.(sh|py)' $files | sort -u); do
  if [ ! -e "$ref" ]; then
    echo "missing: $ref, named in:"; grep -lF "$ref" $files | sed 's/^/  /'
    status=1
  fi
done
[ $status -eq 0 ] && echo "every scripts/ path named exists"
exit $status
