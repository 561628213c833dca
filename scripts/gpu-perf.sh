#!/usr/bin/env bash
# Performance figures the issues ask for, on the GPU machine (tables to stdout and $OUT/perf.txt,
# rows to $OUT/perf.csv):
#   - GPU tree build at level 7, 512 per box, 2D (breakdown and bare CUB sort), and deep levels;
#   - all-pairs rates, 3D float N = 2^20, --mask all (tiled with 1 and 2 targets per thread,
#     2D-tiled, naive) and the 2D rate of the tiled kernel;
#   - near-field kernels at level 7, 2D float, P = 8..512;
#   - validate at level 7, 512 per box (N = 8388608) against allpairs-tiled --mask near.
# Usage: scripts/gpu-perf.sh [BIN_DIR] [sections...]   sections: tree allpairs nearfield validate
set -uo pipefail
BIN="${1:-build/bin}"
shift || true
sections="${*:-tree allpairs nearfield validate}"
OUT="${OUT:-$PWD/gpu-perf-out}"
mkdir -p "$OUT"
NF="$BIN/nearfield"
if [ -d "$BIN/lib" ]; then export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"; fi
log() { tee -a "$OUT/perf.txt"; }
for s in $sections; do
  case "$s" in
    tree)
      echo "## GPU tree build" | log
      "$NF" bench --tree --dist uniform-exact --dim 2 --level 7 --ppb 512 --reps 20 --warmup 3 --output "$OUT/perf.csv" 2>/dev/null | log
      echo "domain given (--domain 0,0,1: no GPU reduction stage)" | log
      "$NF" bench --tree --dist uniform-exact --dim 2 --level 7 --ppb 512 --domain 0,0,1 --reps 20 --warmup 3 --output "$OUT/perf.csv" 2>/dev/null | log
      "$NF" bench --tree --dist uniform --dim 3 --n 8388608 --level 6 --reps 20 --warmup 3 --output "$OUT/perf.csv" 2>/dev/null | log
      echo "deep levels (compact layout only: no dense stage)" | log
      "$NF" bench --tree --dist plummer --dim 3 --n 2000000 --level 12,21 --reps 10 --warmup 2 --output "$OUT/perf.csv" 2>/dev/null | log
      "$NF" bench --tree --dist clusters --dim 2 --n 2000000 --level 16,31 --reps 10 --warmup 2 --output "$OUT/perf.csv" 2>/dev/null | log
      ;;
    allpairs)
      echo "## all-pairs, 3D float, N = 1048576, mask all" | log
      for b in 1 2; do
        echo "targets per thread in allpairs-tiled: $b" | log
        NEARFIELD_TILED_BODIES_PER_THREAD=$b "$NF" bench --kernel allpairs-tiled --dist uniform --dim 3 --n 1048576 --level 1 \
          --reps 10 --warmup 2 2>/dev/null | log
      done
      "$NF" bench --kernel allpairs-tiled,allpairs-2d,allpairs-naive --dist uniform --dim 3 --n 1048576 --level 1 --reps 5 \
        --warmup 1 --output "$OUT/perf.csv" 2>/dev/null | log
      echo "## all-pairs, 2D float, N = 1048576" | log
      "$NF" bench --kernel allpairs-tiled --dist uniform --dim 2 --n 1048576 --level 1 --reps 10 --warmup 2 \
        --output "$OUT/perf.csv" 2>/dev/null | log
      ;;
    nearfield)
      echo "## near-field kernels, 2D float, level 7, uniform-exact" | log
      "$NF" bench --kernel ppt,bpt,bpb,bpb-n3 --dist uniform-exact --dim 2 --level 7 --ppb 8,16,32,64,128,256,512 \
        --reps 10 --warmup 2 --output "$OUT/perf.csv" 2>/dev/null | log
      ;;
    validate)
      echo "## validate, level 7, 512 per box" | log
      "$NF" validate --kernel ppt,bpt,bpb,bpb-n3 --dist uniform-exact --dim 2 --level 7 --ppb 512 --precision float 2>/dev/null | log
      ;;
  esac
done
