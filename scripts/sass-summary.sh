#!/usr/bin/env bash
# Instruction mix of the kernels whose mangled names match a regex, from cuobjdump -sass (run on
# the GPU machine, where cuobjdump is installed). Shows, e.g., how bpb-n3's shared-memory atomics
# are compiled. Usage: scripts/sass-summary.sh BINARY REGEX
set -euo pipefail
# Provenance: which build the counts come from.
echo "# $("$1" --version 2>/dev/null || echo "$1") , cuobjdump -sass"
cuobjdump -sass "$1" | awk -v pat="$2" '
  /Function : / { fn = $3; keep = (fn ~ pat); if (keep) { n[fn] = 0; order[++nf] = fn }; next }
  keep && /^[ \t]*\/\*[0-9a-f]+\*\// {
    line = $0
    sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]+/, "", line)
    split(line, t, /[ \t]+/)
    op = (t[1] ~ /^@/) ? t[2] : t[1]
    sub(/;$/, "", op)
    count[fn SUBSEP op]++
    n[fn]++
  }
  END {
    for (i = 1; i <= nf; ++i) {
      fn = order[i]
      printf "== %s (%d instructions)\n", fn, n[fn]
      for (k in count) {
        split(k, parts, SUBSEP)
        if (parts[1] == fn) printf "  %-28s %d\n", parts[2], count[k]
      }
    }
  }'
