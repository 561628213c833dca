#!/usr/bin/env bash
# First measurements of the GPU fast multipole method (fmm), run on the GPU machine:
#   - 3D uniform, N = 2^24, levels 5 and 6, orders 4, 6, 8, 10 (float): time per stage;
#   - 3D Plummer, N = 2^24, level 7, the default accuracy (1e-4);
#   - 3D uniform, N = 2^20, level 4, default accuracy, against allpairs-tiled;
#   - accuracy against float64 all pairs (allpairs-tiled in double): 3D Plummer and uniform,
#     N = 2^20, orders 4..12, float and double.
# Rows go to RESULTS_DIR/fmm/<device>.csv (bench) and <device>-accuracy.csv (validate).
# Usage: scripts/fmm-bench.sh [BIN_DIR] [RESULTS_DIR]   (defaults build/bin, results)
set -euo pipefail
BIN="${1:-build/bin}"
RESULTS="${2:-results}"
NF="$BIN/nearfield"
if [ -d "$BIN/lib" ]; then export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"; fi
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z ' 'a-z-')
mkdir -p "$RESULTS/fmm"
out="$RESULTS/fmm/$device.csv"
acc="$RESULTS/fmm/$device-accuracy.csv"
"$NF" bench --kernel fmm --dist uniform --dim 3 --n 16777216 --level 5,6 --order 4,6,8,10 --reps 5 --output "$out"
"$NF" bench --kernel fmm --dist plummer --dim 3 --n 16777216 --level 7 --reps 5 --output "$out"
"$NF" bench --kernel fmm,allpairs-tiled --dist uniform --dim 3 --n 1048576 --level 4 --reps 5 --output "$out"
for dist in plummer uniform; do
  "$NF" validate --kernel fmm --dist "$dist" --dim 3 --n 1048576 --level 5 --order 4,6,8,10,12 \
    --precision float,double --output "$acc"
done
