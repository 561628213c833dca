#!/usr/bin/env bash
# Tuning sweep of the small-box limits (src/nearfield/small_boxes.cuh, NEARFIELD_SMALL_BOX) on the
# GPU machine: the load-balanced kernels (bpb-lb, n3-rotate) against ppt on the points of issue 9
# where ppt led (3D Plummer N = 2M at levels 5..8, 2D clusters N = 2M at levels 9..11) and on
# 2D uniform-exact at level 7 (P = 32, 64, 512, where bpb is the bar), for each setting
# COUNT,SOURCES[,REMAINDER].
# Writes OUTDIR/sweep.tgz (one bench CSV per setting) and OUTDIR/sweep-log.txt.
# Usage: scripts/small-box-sweep.sh OUTDIR [BIN_DIR] [SETTINGS...]
set -uo pipefail
OUTDIR="$1"
BIN="${2:-build/bin}"
shift 2 || shift $#
settings="${*:-32,2048 32,2048,0 32,2048,12 32,16384 64,4096 128,16384 0,0,0}"
NF="$BIN/nearfield"
if [ -d "$BIN/lib" ]; then export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"; fi
mkdir -p "$OUTDIR/sweep"
LOG="$OUTDIR/sweep-log.txt"
common=(--precision float --reps 5 --warmup 1)
bench() {  # CSV LIMIT-SECONDS ARGS...
  local csv=$1 limit=$2
  shift 2
  timeout "$limit" "$NF" bench "${common[@]}" --output "$csv" "$@" >> "$LOG" 2>&1
  echo "exit status $?" >> "$LOG"
}
for s in ppt $settings; do
  if [ "$s" = ppt ]; then kernels=ppt; unset NEARFIELD_SMALL_BOX; csv="$OUTDIR/sweep/ppt.csv"
  else kernels=bpb-lb,n3-rotate; export NEARFIELD_SMALL_BOX="$s"; csv="$OUTDIR/sweep/small-${s//,/-}.csv"; fi
  echo "=== $(date +%T) $s" | tee -a "$LOG"
  bench "$csv" 60 --kernel "$kernels" --dist plummer --dim 3 --n 2000000 --level 5,6,7,8 --seed 1
  bench "$csv" 40 --kernel "$kernels" --dist clusters --dim 2 --n 2000000 --level 9,10,11 --seed 1
  bench "$csv" 40 --kernel "$kernels" --dist uniform-exact --dim 2 --level 7 --ppb 32,64,512 --seed 1
  [ "$s" = ppt ] && bench "$csv" 40 --kernel bpb --dist uniform-exact --dim 2 --level 7 --ppb 32,64,512 --seed 1
done
tar czf "$OUTDIR/sweep.tgz" -C "$OUTDIR" sweep
echo "=== $(date +%T) done" | tee -a "$LOG"
