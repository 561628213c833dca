#!/usr/bin/env bash
# Times two builds of nearfield on the same inputs in one session on the GPU machine: the table3
# points (2D float, level 7, uniform-exact, P = 8..512) and the 3D Plummer points of the
# nonuniform experiment (N = 2M, levels 5..8), for every GPU near-field kernel both builds have.
# The inputs are generated once (by the AFTER build) into .bin files that both builds read; per
# point the builds alternate, BEFORE, AFTER, BEFORE, AFTER, so slow drifts of the GPU's clocks fall
# on both. Rows go to $OUT/before-after.csv; the table (median of each build's two medians, the
# ratio after / before) to stdout and $OUT/before-after.txt.
# Usage: scripts/before-after.sh BEFORE_BIN_DIR AFTER_BIN_DIR [KERNELS]
set -uo pipefail
before="$1/nearfield"
after="$2/nearfield"
kernels="${3:-ppt,bpt,bpb,bpb-n3,bpb-lb,n3-shfl,n3-rotate,n3-colour}"
OUT="${OUT:-$PWD/before-after-out}"
mkdir -p "$OUT"
for lib in "$1/lib" "$2/lib"; do [ -d "$lib" ] && export LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}"; done
work="$(mktemp -d)"
csv="$OUT/before-after.csv"
rm -f "$OUT"/run-*.csv
run() {  # build tag, input, level, kernels, reps
  local bin="$1" tag="$2" input="$3" level="$4" ks="$5" reps="$6"
  "$bin" bench --input "$input" --level "$level" --kernel "$ks" --reps "$reps" --warmup 2 \
    --output "$OUT/run-$tag.csv" > /dev/null 2>> "$OUT/errors.log" || echo "failed: $tag $input $ks" >> "$OUT/errors.log"
}
for p in 8 16 32 64 128 256 512; do
  f="$work/u$p.bin"
  "$after" generate --dist uniform-exact --dim 2 --level 7 --ppb "$p" --seed 1 --output "$f" > /dev/null
  reps=10
  for round in 1 2; do
    run "$before" before "$f" 7 "$kernels" $reps
    run "$after" after "$f" 7 "$kernels" $reps
  done
  rm -f "$f"
done
f="$work/plummer.bin"
"$after" generate --dist plummer --dim 3 --n 2000000 --seed 1 --output "$f" > /dev/null
for level in 5 6 7 8; do
  ks="ppt,bpb-lb,n3-rotate"
  [ "$level" -ge 6 ] && ks="$ks,bpb"  # bpb at level 5 takes ~4.8 s an evaluation (one giant box per block)
  for round in 1 2; do
    run "$before" before "$f" "$level" "$ks" 5
    run "$after" after "$f" "$level" "$ks" 5
  done
done
rm -rf "$work"
python3 - "$OUT" <<'PY'
import csv, sys, statistics, os
out = sys.argv[1]
rows = {}
for tag in ("before", "after"):
    path = os.path.join(out, f"run-{tag}.csv")
    if not os.path.exists(path):
        continue
    for r in csv.DictReader(open(path)):
        key = (r["dim"], r["level"], r["ppb"], r["n"], r["kernel"])
        rows.setdefault(key, {}).setdefault(tag, []).append(r)
lines = ["| dim | level | P | N | kernel | before ms (two medians) | after ms (two medians) | after/before |",
         "| --- | --- | --- | --- | --- | --- | --- | --- |"]
with open(os.path.join(out, "before-after.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["dim", "level", "ppb", "n", "kernel", "before_median_ms", "after_median_ms", "ratio",
                "before_runs", "after_runs", "before_commit", "after_commit", "device"])
    for key in sorted(rows, key=lambda k: (int(k[0]), int(k[1]), float(k[2]), k[4])):
        b, a = rows[key].get("before", []), rows[key].get("after", [])
        if not b or not a:
            continue
        bm = statistics.median(float(r["median_ms"]) for r in b)
        am = statistics.median(float(r["median_ms"]) for r in a)
        ratio = am / bm if bm > 0 else float("nan")
        fmt = lambda rs: " / ".join(f"{float(r['median_ms']):.4g}" for r in rs)
        lines.append(f"| {key[0]} | {key[1]} | {float(key[2]):.4g} | {key[3]} | {key[4]} | {bm:.4g} ({fmt(b)}) | "
                     f"{am:.4g} ({fmt(a)}) | {ratio:.3f} |")
        w.writerow(list(key) + [bm, am, ratio, len(b), len(a), b[0]["git_commit"], a[0]["git_commit"], a[0]["device"]])
text = "\n".join(lines)
print(text)
open(os.path.join(out, "before-after.txt"), "w").write(text + "\n")
PY
