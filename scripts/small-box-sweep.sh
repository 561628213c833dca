#!/usr/bin/env bash
# Tuning sweep of the small-box limits (src/nearfield/small_boxes.cuh, NEARFIELD_SMALL_BOX) on the
# GPU machine: the kernels with small boxes (bpb-lb, n3-rotate, n3-shfl, n3-colour) on Table III's
# small boxes (2D uniform-exact, level 7, P = 8..64, where bpb is the bar), on 3D Plummer N = 2M
# (levels 7, 8) and on 2D clusters N = 2M (levels 10, 11), for each setting
# COUNT,SOURCES[,REMAINDER[,THREAD]]; bpb and ppt once, without a setting, for comparison.
# Writes OUTDIR/sweep.tgz (one bench CSV per setting), OUTDIR/sweep-log.txt and a table of medians
# (ms) per point and setting, OUTDIR/sweep-table.txt.
# Usage: scripts/small-box-sweep.sh OUTDIR [BIN_DIR] [SETTINGS...]
set -uo pipefail
OUTDIR="$1"
BIN="${2:-build/bin}"
shift 2 || shift $#
settings="${*:-32,2048,24,16 32,2048,24,8 32,2048,24,32 64,4096,24,16 0,0,0}"
NF="$BIN/nearfield"
if [ -d "$BIN/lib" ]; then export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"; fi
mkdir -p "$OUTDIR/sweep"
LOG="$OUTDIR/sweep-log.txt"
KERNELS="${KERNELS:-bpb-lb,n3-rotate,n3-shfl,n3-colour}"
common=(--precision float --reps 7 --warmup 2)
bench() {  # CSV LIMIT-SECONDS ARGS...
  local csv=$1 limit=$2
  shift 2
  timeout "$limit" "$NF" bench "${common[@]}" --output "$csv" "$@" >> "$LOG" 2>&1
  echo "exit status $?" >> "$LOG"
}
points() {  # CSV KERNELS
  bench "$1" 40 --kernel "$2" --dist uniform-exact --dim 2 --level 7 --ppb 8,16,32,64 --seed 1
  [ -n "${UNIFORM_ONLY:-}" ] && return
  bench "$1" 40 --kernel "$2" --dist plummer --dim 3 --n 2000000 --level 7,8 --seed 1
  bench "$1" 40 --kernel "$2" --dist clusters --dim 2 --n 2000000 --level 10,11 --seed 1
}
unset NEARFIELD_SMALL_BOX
echo "=== $(date +%T) reference (bpb, ppt)" | tee -a "$LOG"
points "$OUTDIR/sweep/reference.csv" bpb,ppt
for s in default $settings; do
  if [ "$s" = default ]; then unset NEARFIELD_SMALL_BOX; else export NEARFIELD_SMALL_BOX="$s"; fi
  echo "=== $(date +%T) $s" | tee -a "$LOG"
  points "$OUTDIR/sweep/small-${s//,/-}.csv" "$KERNELS"
done
unset NEARFIELD_SMALL_BOX
python3 - "$OUTDIR/sweep" > "$OUTDIR/sweep-table.txt" <<'PY'
import csv, glob, os, sys
rows = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.csv"))):
    s = os.path.basename(f)[:-4].replace("small-", "")
    for r in csv.DictReader(open(f)):
        point = f"{r['dim']}D {r['distribution']} L{r['level']}" + (f" P={r['ppb']}" if r['distribution'] == 'uniform-exact' else "")
        rows.setdefault(point, {})[f"{r['kernel']}@{s}"] = float(r['median_ms'])
for point, d in rows.items():
    print(point)
    for k, v in sorted(d.items(), key=lambda x: x[1]):
        print(f"  {v:9.4f}  {k}")
PY
cat "$OUTDIR/sweep-table.txt"
tar czf "$OUTDIR/sweep.tgz" -C "$OUTDIR" sweep
echo "=== $(date +%T) done" | tee -a "$LOG"
