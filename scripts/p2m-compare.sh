#!/usr/bin/env bash
# Times fmm's upward pass with P2M's thread per small box (the default up to 336 bytes of moments a
# thread; docs/design.md §16, "P2M of small boxes") against a block per box (NEARFIELD_P2M_SMALL=off)
# on the GPU machine, the two alternated twice in one call: 3D float Plummer 2^22 at level 8 (p = 4,
# 6, 8), uniform 2^22 at levels 6 and 8 and 2^24 at level 6 (p = 4, 6), clusters 2^22 at level 9
# (p = 4), fmm-adaptive on Plummer 2^22 (p = 6). Rows to $OUT/p2m-{off,on}.csv, the medians of
# upward_ms and of the evaluation (median_ms) to stdout and $OUT/p2m-compare.txt.
# Usage: scripts/p2m-compare.sh [BIN_DIR]   (default build/bin)
set -uo pipefail
bin="${1:-build/bin}"
NF="$bin/nearfield"
[ -d "$bin/lib" ] && export LD_LIBRARY_PATH="$bin/lib:${LD_LIBRARY_PATH:-}"
OUT="${OUT:-$PWD/p2m-compare-out}"
mkdir -p "$OUT"
work="$(mktemp -d)"
rm -f "$OUT"/p2m-off.csv "$OUT"/p2m-on.csv
"$NF" generate --dist uniform --dim 3 --n 16777216 --seed 1 --output "$work/u3.bin" > /dev/null
for round in 1 2; do
  for v in off on; do
    e=""
    [ "$v" = off ] && e=off
    b() { NEARFIELD_P2M_SMALL="$e" "$NF" bench "$@" --reps 3 --warmup 1 --output "$OUT/p2m-$v.csv" > /dev/null 2>> "$OUT/errors.log" ||
          echo "failed: $v $*" >> "$OUT/errors.log"; }
    b --kernel fmm --dist plummer --dim 3 --n 4194304 --level 8 --order 4,6,8
    b --kernel fmm --dist uniform --dim 3 --n 4194304 --level 6,8 --order 4,6
    b --kernel fmm --input "$work/u3.bin" --level 6 --order 4,6
    b --kernel fmm --dist clusters --dim 3 --n 4194304 --level 9 --order 4
    b --kernel fmm-adaptive --dist plummer --dim 3 --n 4194304 --level auto --order 6
  done
done
rm -rf "$work"
python3 - "$OUT" <<'PY' | tee "$OUT/p2m-compare.txt"
import csv, os, statistics, sys
rows = {}
for v in ("off", "on"):
    for r in csv.DictReader(open(os.path.join(sys.argv[1], f"p2m-{v}.csv"))):
        d = r["distribution"]
        key = (r["kernel"], "uniform" if d.endswith("u3.bin") else d, r["n"], r["level"], int(r["p"]))
        rows.setdefault(key, {}).setdefault(v, []).append(r)
print("| kernel | input | N | level | p | upward ms, block per box -> thread per small box | evaluation ms |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for key in sorted(rows):
    off, on = rows[key].get("off", []), rows[key].get("on", [])
    if not off or not on:
        continue
    med = lambda rs, c: statistics.median(float(r[c]) for r in rs)
    print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {key[4]} | {med(off, 'upward_ms'):.3f} -> "
          f"{med(on, 'upward_ms'):.3f} | {med(off, 'median_ms'):.2f} -> {med(on, 'median_ms'):.2f} |")
PY
