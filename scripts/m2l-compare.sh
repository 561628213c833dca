#!/usr/bin/env bash
# Times fmm's M2L with two of its kernels (VARIANTS below; by default the sibling-group kernel
# against the thread-per-target kernel, docs/design.md §16, "M2L at low orders") on the GPU machine,
# in one process pair per case, alternating the two (A, B, A, B), and checks that both give the
# same error. Cases: 3D float uniform 2^24 at levels 5 and 6 and Plummer 2^24 at level 7 (orders
# 2..6; 7 and 8 at level 6 and on Plummer: the wide variant; see M2L_CASES below), 3D double uniform
# 2^22 at level 6 (orders 2..6; 5 and 6 the wide variant), 2D float clusters 2^22 at level 9 (orders
# 4..12) and 2D double (orders 4..8). Rows go to $OUT/m2l-compare-{A,B}.csv, the table (median of
# each variant's two medians of m2l_ms, B over A) to stdout and $OUT/m2l-compare.txt; sampled
# errors of both to $OUT/m2l-errors.txt.
# VARIANTS="A B" (default "group thread") names the two compared, B over A: group
# (NEARFIELD_M2L=group), thread (the thread kernel as it runs by default), unstaged (the thread
# kernel with NEARFIELD_M2L_STAGED=off: each lane reads its sources' moments itself), tensor (the
# sibling groups on the tensor cores, NEARFIELD_M2L=tensor, float only), rows4 and rows8 (the
# sibling-group kernel where it runs by default, with one / two row quads a unit at every shape:
# NEARFIELD_M2L_ROWS=4 / 8, float only; results/fmm-m2l-rows).
# M2L_CASES=wide runs only the wide variant's cases (3D float p = 7, 8; double p = 5, 6), low all
# the others (all: both); high the group kernel's float orders (3D uniform 2^24 at level 5, p = 10
# to 16, and level 6, p = 10 and 12; Plummer 2^24 at level 7, p = 10, 12; 2D clusters 2^22 at
# level 9, p = 13, 14, 16, 20; errors at 3D p = 9..14 and 2D p = 13..20); full2d only 2D uniform 2^22 at level 9, whose levels are all full (float
# and double, p = 4, 6, 8: the staged curve of methods/full_level_rule.h in 2D); rows the sibling-group
# kernel's float orders with one target a lane (3D uniform 2^24 at level 5, p = 11, 12, and level 6,
# p = 12; Plummer 2^24 at level 7, p = 12, and fmm-adaptive's default run of it, p = 12; 2D clusters
# 2^22 at level 9, p = 16, 20) and two (3D uniform level 6, p = 9, 10; 2D p = 13, 14). At 3D float p = 8
# both take the orders per offset (the default).
# Usage: scripts/m2l-compare.sh [BIN_DIR]   (default build/bin)
set -uo pipefail
bin="${1:-build/bin}"
NF="$bin/nearfield"
read -r -a variants <<< "${VARIANTS:-group thread}"
[ "${#variants[@]}" = 2 ] && [ "${variants[0]}" != "${variants[1]}" ] ||
  { echo "m2l-compare.sh: VARIANTS names two different variants" >&2; exit 2; }
for v in "${variants[@]}"; do
  case "$v" in group | thread | unstaged | tensor | rows4 | rows8) ;; *) echo "m2l-compare.sh: unknown variant '$v' (group, thread, unstaged, tensor, rows4, rows8)" >&2; exit 2 ;; esac
done
cases="${M2L_CASES:-all}"
case "$cases" in all | low | wide | full2d | high | rows) ;; *) echo "m2l-compare.sh: M2L_CASES=$cases: expected all, low, wide, full2d, high or rows" >&2; exit 2 ;; esac
# The environment of variant $1, for env(1); NEARFIELD_M2L_STAGED set empty (the default rule)
# unless the variant sets it, so that the caller's own value cannot blur the comparison.
variant_env() {
  case "$1" in
    group) echo NEARFIELD_M2L=group NEARFIELD_M2L_STAGED= ;;
    thread) echo NEARFIELD_M2L=thread NEARFIELD_M2L_STAGED= ;;
    unstaged) echo NEARFIELD_M2L=thread NEARFIELD_M2L_STAGED=off ;;
    tensor) echo NEARFIELD_M2L=tensor NEARFIELD_M2L_STAGED= ;;
    rows4) echo NEARFIELD_M2L_ROWS=4 NEARFIELD_M2L= NEARFIELD_M2L_STAGED= ;;
    rows8) echo NEARFIELD_M2L_ROWS=8 NEARFIELD_M2L= NEARFIELD_M2L_STAGED= ;;
  esac
}
[ -d "$bin/lib" ] && export LD_LIBRARY_PATH="$bin/lib:${LD_LIBRARY_PATH:-}"
OUT="${OUT:-$PWD/m2l-compare-out}"
mkdir -p "$OUT"
work="$(mktemp -d)"
rm -f "$OUT"/m2l-compare-*.csv "$OUT/m2l-errors.txt"
run() {  # input level orders precision reps [kernel]
  for round in 1 2; do
    for v in "${variants[@]}"; do
      # shellcheck disable=SC2046
      env $(variant_env "$v") "$NF" bench --kernel "${6:-fmm}" --input "$1" --level "$2" --order "$3" \
        --precision "$4" --reps "$5" --warmup 1 --output "$OUT/m2l-compare-$v.csv" > /dev/null 2>> "$OUT/errors.log" ||
        echo "failed: $v $*" >> "$OUT/errors.log"
    done
  done
}
if [ "$cases" = full2d ]; then
  "$NF" generate --dist uniform --dim 2 --n 4194304 --seed 1 --output "$work/u2.bin" > /dev/null
  run "$work/u2.bin" 9 4,6,8 float 5
  run "$work/u2.bin" 9 4,6,8 double 3
fi
if [ "$cases" = low ] || [ "$cases" = all ]; then
  "$NF" generate --dist uniform --dim 3 --n 16777216 --seed 1 --output "$work/u3.bin" > /dev/null
  run "$work/u3.bin" 5 2,3,4,5,6 float 5
  run "$work/u3.bin" 6 2,3,4,5,6 float 5
  rm -f "$work/u3.bin"
  "$NF" generate --dist plummer --dim 3 --n 16777216 --seed 1 --output "$work/p3.bin" > /dev/null
  run "$work/p3.bin" 7 2,3,4,5,6 float 5
  rm -f "$work/p3.bin"
  "$NF" generate --dist uniform --dim 3 --n 4194304 --seed 1 --output "$work/u3s.bin" > /dev/null
  run "$work/u3s.bin" 6 2,3,4 double 3
  "$NF" generate --dist clusters --dim 2 --n 4194304 --seed 1 --output "$work/c2.bin" > /dev/null
  run "$work/c2.bin" 9 4,6,8,10,12 float 5
  run "$work/c2.bin" 9 4,6,8 double 3
fi
# The group kernel's float orders.
if [ "$cases" = high ]; then
  "$NF" generate --dist uniform --dim 3 --n 16777216 --seed 1 --output "$work/u3.bin" > /dev/null
  run "$work/u3.bin" 5 10,11,12,13,14,15,16 float 3
  run "$work/u3.bin" 6 10,12 float 3
  rm -f "$work/u3.bin"
  "$NF" generate --dist plummer --dim 3 --n 16777216 --seed 1 --output "$work/p3.bin" > /dev/null
  run "$work/p3.bin" 7 10,12 float 3
  rm -f "$work/p3.bin"
  "$NF" generate --dist clusters --dim 2 --n 4194304 --seed 1 --output "$work/c2.bin" > /dev/null
  run "$work/c2.bin" 9 13,14,16,20 float 3
fi
# One quad a unit against two.
if [ "$cases" = rows ]; then
  "$NF" generate --dist uniform --dim 3 --n 16777216 --seed 1 --output "$work/u3.bin" > /dev/null
  run "$work/u3.bin" 5 11,12 float 3
  run "$work/u3.bin" 6 9,10,12 float 3
  rm -f "$work/u3.bin"
  "$NF" generate --dist plummer --dim 3 --n 16777216 --seed 1 --output "$work/p3.bin" > /dev/null
  run "$work/p3.bin" 7 12 float 3
  run "$work/p3.bin" auto 12 float 3 fmm-adaptive
  rm -f "$work/p3.bin"
  "$NF" generate --dist clusters --dim 2 --n 4194304 --seed 1 --output "$work/c2.bin" > /dev/null
  run "$work/c2.bin" 9 13,14,16,20 float 3
fi
# The wide variant.
if [ "$cases" = wide ] || [ "$cases" = all ]; then
  "$NF" generate --dist uniform --dim 3 --n 16777216 --seed 1 --output "$work/u3.bin" > /dev/null
  for p in 7 8; do run "$work/u3.bin" 6 $p float 5; done
  rm -f "$work/u3.bin"
  "$NF" generate --dist plummer --dim 3 --n 16777216 --seed 1 --output "$work/p3.bin" > /dev/null
  for p in 7 8; do run "$work/p3.bin" 7 $p float 5; done
  rm -f "$work/p3.bin"
  "$NF" generate --dist uniform --dim 3 --n 4194304 --seed 1 --output "$work/u3s.bin" > /dev/null
  run "$work/u3s.bin" 6 5,6 double 3
fi
# Errors: both variants on the same sampled targets (3D Plummer and uniform 10^5, 2D clusters).
error_cases=("--dist plummer --dim 3 --n 100000 --level 4 --order 2,4,6,7,8"
             "--dist uniform --dim 3 --n 100000 --level 4 --order 4,5,6 --precision double"
             "--dist clusters --dim 2 --n 100000 --level 7 --order 4,8,12")
[ "$cases" != high ] || error_cases=("--dist plummer --dim 3 --n 100000 --level 4 --order 9,10,12,14"
                                     "--dist uniform --dim 3 --n 100000 --level 4 --order 9,10,12,14"
                                     "--dist clusters --dim 2 --n 100000 --level 7 --order 13,16,20")
# (rows: the group kernel's orders only; 3D p = 14 runs on the tensor cores)
[ "$cases" != rows ] || error_cases=("--dist plummer --dim 3 --n 100000 --level 4 --order 9,10,12"
                                     "--dist uniform --dim 3 --n 100000 --level 4 --order 9,10,12"
                                     "--dist clusters --dim 2 --n 100000 --level 7 --order 13,16,20")
for v in "${variants[@]}"; do
  for c in "${error_cases[@]}"; do
    [ "$cases" != wide ] || [[ "$c" != *clusters* ]] || continue
    [ "$cases" != full2d ] || [[ "$c" == *clusters* ]] || continue
    echo "== $v: validate $c" >> "$OUT/m2l-errors.txt"
    # shellcheck disable=SC2046
    env $(variant_env "$v") "$NF" validate --kernel fmm $c --sample 2000 >> "$OUT/m2l-errors.txt" 2>&1 ||
      echo "validate failed: $v $c" >> "$OUT/errors.log"
  done
done
rm -rf "$work"
python3 - "$OUT" "${variants[@]}" <<'PY' | tee "$OUT/m2l-compare.txt"
import csv, os, statistics, sys
out, a, b = sys.argv[1:4]
rows = {}
for v in (a, b):
    path = os.path.join(out, f"m2l-compare-{v}.csv")
    if not os.path.exists(path):
        continue
    for r in csv.DictReader(open(path)):
        key = (r["dim"], r["distribution"] + (" (" + r["kernel"] + ")" if r["kernel"] != "fmm" else ""), r["n"],
               r["level"], r["precision"], int(r["p"]))
        rows.setdefault(key, {}).setdefault(v, []).append(r)
print(f"| dim | input | N | level | precision | p | {a} M2L ms | {b} M2L ms | {b}/{a} | evaluation ms {a} / {b} | M2L TFLOP/s {b} |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for key in sorted(rows):
    g, t = rows[key].get(a, []), rows[key].get(b, [])
    if not g or not t:
        continue
    med = lambda rs, c: statistics.median(float(r[c]) for r in rs)
    gm, tm = med(g, "m2l_ms"), med(t, "m2l_ms")
    rate = 2 * float(t[0]["m2l_madds"]) / (tm * 1e-3) / 1e12
    print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {key[4]} | {key[5]} | {gm:.3f} | {tm:.3f} | {tm / gm:.2f} | "
          f"{med(g, 'median_ms'):.2f} / {med(t, 'median_ms'):.2f} | {rate:.1f} |")
PY
