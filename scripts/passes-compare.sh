#!/usr/bin/env bash
# Times fmm's passes with P2M's thread per small box (docs/design.md §16, "P2M of small boxes") and
# the shifts' thread per box ("Shifts a thread per box") against their block kernels on the GPU
# machine, the variants alternated twice in one call: 3D float Plummer 2^22 at level 8 (p = 4,
# 6, 8), uniform 2^22 at levels 6 and 8 and 2^24 at level 6 (p = 4, 6), clusters 2^22 at level 9
# (p = 4), fmm-adaptive on Plummer 2^22 (p = 6). Rows to $OUT/passes-VARIANT.csv, the medians of
# upward_ms, downward_ms and of the evaluation (median_ms) to stdout and $OUT/passes-compare.txt.
# VARIANTS (default "on off shifts-block"): on = the defaults, off = NEARFIELD_P2M_SMALL=off (P2M a
# block per box), shifts-block / shifts-thread = NEARFIELD_SHIFTS=block / thread (M2M and L2L a
# block per parent / a thread per child wherever the order allows), a number
# n = NEARFIELD_P2M_SMALL_MAX=n (the largest box a P2M thread takes). CASES=big: uniform 2^24 level
# 6 and Plummer 2^24 level 7 at p = 4, 6, 8, 10 instead.
# Usage: scripts/passes-compare.sh [BIN_DIR]   (default build/bin)
set -uo pipefail
bin="${1:-build/bin}"
NF="$bin/nearfield"
[ -d "$bin/lib" ] && export LD_LIBRARY_PATH="$bin/lib:${LD_LIBRARY_PATH:-}"
OUT="${OUT:-$PWD/passes-compare-out}"
mkdir -p "$OUT"
work="$(mktemp -d)"
variants="${VARIANTS:-on off shifts-block}"
for v in $variants; do rm -f "$OUT/passes-$v.csv"; done
"$NF" generate --dist uniform --dim 3 --n 16777216 --seed 1 --output "$work/u3.bin" > /dev/null
for round in 1 2; do
  for v in $variants; do
    small="" max="" shifts=""
    case "$v" in
      off) small=off ;; on) ;; shifts-block) shifts=block ;; shifts-thread) shifts=thread ;;
      *[!0-9]* | "") echo "passes-compare.sh: unknown variant '$v' (on, off, shifts-block, shifts-thread or a count)" >&2
                     exit 2 ;;
      *) max="$v" ;;
    esac
    b() { NEARFIELD_P2M_SMALL="$small" NEARFIELD_P2M_SMALL_MAX="$max" NEARFIELD_SHIFTS="$shifts" "$NF" bench "$@" \
            --reps 3 --warmup 1 --output "$OUT/passes-$v.csv" > /dev/null 2>> "$OUT/errors.log" ||
            echo "failed: $v $*" >> "$OUT/errors.log"; }
    if [ "${CASES:-}" = big ]; then
      b --kernel fmm --input "$work/u3.bin" --level 6 --order 4,6,8,10
      b --kernel fmm --dist plummer --dim 3 --n 16777216 --level 7 --order 4,6,8,10
    else
      b --kernel fmm --dist plummer --dim 3 --n 4194304 --level 8 --order 4,6,8
      b --kernel fmm --dist uniform --dim 3 --n 4194304 --level 6,8 --order 4,6
      b --kernel fmm --input "$work/u3.bin" --level 6 --order 4,6
      b --kernel fmm --dist clusters --dim 3 --n 4194304 --level 9 --order 4
      b --kernel fmm-adaptive --dist plummer --dim 3 --n 4194304 --level auto --order 6
    fi
  done
done
rm -rf "$work"
python3 - "$OUT" $variants <<'PY' | tee "$OUT/passes-compare.txt"
import csv, os, statistics, sys
out, variants = sys.argv[1], sys.argv[2:]
rows = {}
for v in variants:
    path = os.path.join(out, f"passes-{v}.csv")
    for r in csv.DictReader(open(path)) if os.path.exists(path) else []:
        d = r["distribution"]
        key = (r["kernel"], "uniform" if d.endswith("u3.bin") else d, r["n"], r["level"], int(r["p"]))
        rows.setdefault(key, {}).setdefault(v, []).append(r)
print("upward / downward ms (evaluation ms), medians, by variant: " + ", ".join(variants))
print("| kernel | input | N | level | p | " + " | ".join(variants) + " |")
print("| --- | --- | --- | --- | --- | " + " | ".join("---" for _ in variants) + " |")
med = lambda rs, c: statistics.median(float(r[c]) for r in rs)
for key in sorted(rows):
    cells = [f"{med(rows[key][v], 'upward_ms'):.3f} / {med(rows[key][v], 'downward_ms'):.3f} "
             f"({med(rows[key][v], 'median_ms'):.2f})" if v in rows[key] else "-"
             for v in variants]
    print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {key[4]} | " + " | ".join(cells) + " |")
PY
