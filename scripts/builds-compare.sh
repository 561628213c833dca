#!/usr/bin/env bash
# Times builds of nearfield (or one build under several settings) against each other on the GPU
# machine, alternated twice in one call (the same inputs, bench rows of 3 repetitions after one
# warm-up): the medians of each variant's rows of a case (one a round) of upward_ms (P2M + M2M), m2l_ms, downward_ms (L2L +
# L2P) and of the evaluation (median_ms), by case, to stdout and $OUT/builds-compare.txt; the rows to
# $OUT/builds-NAME.csv. A variant is BIN_DIR or BIN_DIR@VAR=value (the variable set for its runs);
# NAME is the directory's last component, then -value (two variants of one name are refused: give
# the builds directories of different names). Each row names the commit its binary was built from;
# the last two columns compare the upward and the downward pass of the last variant with the first's. Every binary finds
# its libraries in the first variant's BIN_DIR/lib (one LD_LIBRARY_PATH for all).
# Cases (float): fmm on 3D uniform 2^24 at level 5 (p = 8, 10, 12, 14) and 6 (p = 8, 10, 12), 3D
# Plummer 2^24 at level 7 (p = 6, 8, 10), 2D uniform 2^22 at level 7 (p = 8, 14); fmm-adaptive on 3D
# Plummer 2^24 (p = 10, 12) and uniform 2^24 (p = 8), automatic leaf size. CASES=small: uniform 2^22 at level 6 (p = 8) and fmm-adaptive on Plummer 2^22
# (p = 10) only. CASES=levels (M2L's levels at once, NEARFIELD_M2L_LEVELS): fmm-adaptive on 3D
# Plummer 2^20 (p = 10, 11, 12), 2^22 (p = 10, 12) and 2^24 (p = 10, 12), 3D shell 2^22 (p = 11); fmm
# on 3D uniform 2^20 at level 4 and 2^24 at level 6 (p = 10), 2D uniform 2^22 at level 7 (p = 14).
# CASES=levels-thread (the same at the thread kernel's orders): fmm on 3D uniform 2^24 level 6 p = 8
# and 2^20 level 4 p = 6, fmm-adaptive on 3D Plummer 2^24 and 2D clusters 2^22 at p = 8. CASES=m2l (the sibling-group kernel's orders): fmm-adaptive on 3D Plummer 2^24
# (p = 10, 12), fmm on 3D uniform 2^24 at level 6 (p = 10) and 5 (p = 12). CASES=plans (the orders
# that take M2L's balanced plans, the tensor cores' at 3D p = 14): CASES=m2l's and 3D uniform 2^24 at
# level 6 p = 11 and level 5 p = 14, 2D uniform 2^22 at level 7 (p = 14, 16), 3D double uniform
# 2^22 at level 6 (p = 8, 10). CASES=plans-rest (the group kernel's other float shapes): 3D uniform
# 2^24 at level 5 (p = 9; p = 17, in slices), 2D uniform 2^22 at level 7 (p = 13, contiguous plan;
# 18, 20). CASES=shifts (M2M and L2L): 3D uniform 2^24 at level 6 (p = 4, 6, 8, 10, 12) and
# 5 (p = 10, 14), 3D Plummer 2^24 at level 7 (p = 6, 10), 3D uniform 2^22 at level 8 (p = 4, 8), 3D
# double uniform 2^22 at level 6 (p = 4, 8, 12) and 2^18 at level 4 (p = 16, 20), 2D uniform 2^22 at level 7 (p = 8, 14) and
# fmm-adaptive on 3D Plummer 2^24 (p = 12). CASES=passes (P2M and L2P): fmm on 3D uniform 2^24 at level 6 (p = 4,
# 6, 8, 10) and 5 (p = 10), 3D Plummer 2^24 at level 7 (p = 4, 6, 10), 3D uniform 2^22 at level 8
# (p = 4, 8), 2D uniform 2^22 at level 7 (p = 8, 14), 3D double uniform 2^22 at level 6 (p = 4, 8);
# fmm-adaptive on 3D Plummer 2^24 (p = 10, 12) and uniform 2^24 (p = 8).
# Usage: scripts/builds-compare.sh VARIANT VARIANT [VARIANT...]
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: scripts/builds-compare.sh BIN_DIR[@VAR=value] BIN_DIR[@VAR=value] ..." >&2; exit 2; }
OUT="${OUT:-$PWD/builds-compare-out}"
mkdir -p "$OUT"
work="$(mktemp -d)"
names=() bins=() envs=()
for v in "$@"; do
  bin="${v%%@*}" env=""
  [ "$bin" = "$v" ] || env="${v#*@}"
  [ -x "$bin/nearfield" ] || { echo "builds-compare.sh: no nearfield in $bin" >&2; exit 2; }
  case "$env" in
    "" | [A-Za-z_]*=*) ;;
    *) echo "builds-compare.sh: '$v': expected BIN_DIR@VAR=value" >&2; exit 2 ;;
  esac
  name="$(basename "$bin")${env:+-${env#*=}}"
  name="${name//[^A-Za-z0-9._-]/_}"
  for n in "${names[@]}"; do
    [ "$n" != "$name" ] || { echo "builds-compare.sh: two variants named $name" >&2; exit 2; }
  done
  names+=("$name") bins+=("$bin") envs+=("$env")
  rm -f "$OUT/builds-$name.csv"
done
rm -f "$OUT/errors.log"
[ -d "${bins[0]}/lib" ] && export LD_LIBRARY_PATH="${bins[0]}/lib:${LD_LIBRARY_PATH:-}"
if [ "${CASES:-}" != small ]; then
  for input in "uniform 3 16777216 u3" "plummer 3 16777216 p3" "uniform 2 4194304 u2"; do
    set -- $input
    "${bins[0]}/nearfield" generate --dist "$1" --dim "$2" --n "$3" --seed 1 --output "$work/$4.bin" > /dev/null ||
      { echo "builds-compare.sh: generate $input failed" >&2; exit 1; }
  done
fi
for round in 1 2; do
  for i in "${!names[@]}"; do
    name="${names[$i]}" bin="${bins[$i]}" env="${envs[$i]}"
    b() { env ${env:+"$env"} "$bin/nearfield" bench "$@" --reps 3 --warmup 1 --output "$OUT/builds-$name.csv" \
            > /dev/null 2>> "$OUT/errors.log" || echo "failed: $name $*" >> "$OUT/errors.log"; }
    if [ "${CASES:-}" = small ]; then
      b --kernel fmm --dist uniform --dim 3 --n 4194304 --level 6 --order 8
      b --kernel fmm-adaptive --dist plummer --dim 3 --n 4194304 --level auto --order 10
    elif [ "${CASES:-}" = m2l ]; then
      b --kernel fmm-adaptive --input "$work/p3.bin" --level auto --order 10,12
      b --kernel fmm --input "$work/u3.bin" --level 6 --order 10
      b --kernel fmm --input "$work/u3.bin" --level 5 --order 12
    elif [ "${CASES:-}" = levels-thread ]; then
      b --kernel fmm --input "$work/u3.bin" --level 6 --order 8
      b --kernel fmm --dist uniform --dim 3 --n 1048576 --level 4 --order 6
      b --kernel fmm-adaptive --input "$work/p3.bin" --level auto --order 8
      b --kernel fmm-adaptive --dist clusters --dim 2 --n 4194304 --level auto --order 8
    elif [ "${CASES:-}" = levels ]; then
      b --kernel fmm-adaptive --dist plummer --dim 3 --n 1048576 --level auto --order 10,11,12
      b --kernel fmm-adaptive --dist plummer --dim 3 --n 4194304 --level auto --order 10,12
      b --kernel fmm-adaptive --dist shell --dim 3 --n 4194304 --level auto --order 11
      b --kernel fmm-adaptive --input "$work/p3.bin" --level auto --order 10,12
      b --kernel fmm --dist uniform --dim 3 --n 1048576 --level 4 --order 10
      b --kernel fmm --input "$work/u3.bin" --level 6 --order 10
      b --kernel fmm --input "$work/u2.bin" --level 7 --order 14
    elif [ "${CASES:-}" = plans ]; then
      b --kernel fmm-adaptive --input "$work/p3.bin" --level auto --order 10,12
      b --kernel fmm --input "$work/u3.bin" --level 6 --order 10,11
      b --kernel fmm --input "$work/u3.bin" --level 5 --order 12,14
      b --kernel fmm --input "$work/u2.bin" --level 7 --order 14,16
      b --kernel fmm --dist uniform --dim 3 --n 4194304 --level 6 --order 8,10 --precision double
    elif [ "${CASES:-}" = plans-rest ]; then
      b --kernel fmm --input "$work/u3.bin" --level 5 --order 9,17
      b --kernel fmm --input "$work/u2.bin" --level 7 --order 13,18,20
    elif [ "${CASES:-}" = passes ]; then
      b --kernel fmm --input "$work/u3.bin" --level 6 --order 4,6,8,10
      b --kernel fmm --input "$work/u3.bin" --level 5 --order 10
      b --kernel fmm --input "$work/p3.bin" --level 7 --order 4,6,10
      b --kernel fmm --dist uniform --dim 3 --n 4194304 --level 8 --order 4,8
      b --kernel fmm --input "$work/u2.bin" --level 7 --order 8,14
      b --kernel fmm --dist uniform --dim 3 --n 4194304 --level 6 --order 4,8 --precision double
      b --kernel fmm-adaptive --input "$work/p3.bin" --level auto --order 10,12
      b --kernel fmm-adaptive --input "$work/u3.bin" --level auto --order 8
    elif [ "${CASES:-}" = shifts ]; then
      b --kernel fmm --input "$work/u3.bin" --level 6 --order 4,6,8,10,12
      b --kernel fmm --input "$work/u3.bin" --level 5 --order 10,14
      b --kernel fmm --input "$work/p3.bin" --level 7 --order 6,10
      b --kernel fmm --dist uniform --dim 3 --n 4194304 --level 8 --order 4,8
      b --kernel fmm --dist uniform --dim 3 --n 4194304 --level 6 --order 4,8,12 --precision double
      b --kernel fmm --dist uniform --dim 3 --n 262144 --level 4 --order 16,20 --precision double
      b --kernel fmm --input "$work/u2.bin" --level 7 --order 8,14
      b --kernel fmm-adaptive --input "$work/p3.bin" --level auto --order 12
    else
      b --kernel fmm --input "$work/u3.bin" --level 5 --order 8,10,12,14
      b --kernel fmm --input "$work/u3.bin" --level 6 --order 8,10,12
      b --kernel fmm --input "$work/p3.bin" --level 7 --order 6,8,10
      b --kernel fmm-adaptive --input "$work/p3.bin" --level auto --order 10,12
      b --kernel fmm-adaptive --input "$work/u3.bin" --level auto --order 8
      b --kernel fmm --input "$work/u2.bin" --level 7 --order 8,14
    fi
  done
done
rm -rf "$work"
python3 - "$OUT" "${names[@]}" <<'PY' | tee "$OUT/builds-compare.txt"
import csv, os, statistics, sys
out, names = sys.argv[1], sys.argv[2:]
rows = {}
for n in names:
    path = os.path.join(out, f"builds-{n}.csv")
    for r in csv.DictReader(open(path)) if os.path.exists(path) else []:
        d = os.path.basename(r["distribution"])
        d = {"u3.bin": "uniform", "p3.bin": "plummer", "u2.bin": "uniform 2D"}.get(d, d)
        key = (r["kernel"], d, r["n"], r["level"], r["precision"], int(r["p"]))
        rows.setdefault(key, {}).setdefault(n, []).append(r)
commits = {n: sorted({r["git_commit"] for k in rows for r in rows[k].get(n, [])}) for n in names}
print("builds: " + ", ".join(f"{n} ({' '.join(commits[n])})" for n in names))
print("medians of upward / M2L / downward / evaluation ms, each build's rows")
print("| kernel | input | N | level | precision | p | " + " | ".join(names) +
      f" | upward {names[-1]} / {names[0]} | downward {names[-1]} / {names[0]} |")
print("|" + " --- |" * (8 + len(names)))
med = lambda rs, c: statistics.median(float(r[c]) for r in rs)
for key in sorted(rows):
    cells, up, down = [], [], []
    for n in names:
        rs = rows[key].get(n)
        if not rs:
            cells.append("-")
            continue
        cells.append(" / ".join(f"{med(rs, c):.3g}" for c in ("upward_ms", "m2l_ms", "downward_ms", "median_ms")))
        up.append(med(rs, "upward_ms"))
        down.append(med(rs, "downward_ms"))
    ratio = lambda v: f"{v[-1] / v[0]:.2f}" if len(v) == len(names) else "-"
    print(f"| {' | '.join(str(k) for k in key)} | {' | '.join(cells)} | {ratio(up)} | {ratio(down)} |")
PY
