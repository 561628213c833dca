#!/usr/bin/env bash
# The CPU side of the honest speedups (issue 19), on the GPU machine's host: the vectorized
# multi-threaded kernels at Table III's points (2D, level 7, P = 8..512, float) and at the 3D
# Plummer points of the non-uniform experiment (N = 2M, levels 6..8), all cores, into
# OUTDIR/results/{table3,nonuniform}/<device>.csv beside the GPU rows (merge them into results/).
#   scripts/cpu-baseline.sh OUTDIR [BIN_DIR]
set -uo pipefail
OUTDIR="$1"
BIN="${2:-build/bin}"
NF="$BIN/nearfield"
if [ -d "$BIN/lib" ]; then export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"; fi
export OMP_PROC_BIND=close OMP_PLACES=cores
mkdir -p "$OUTDIR/results"
LOG="$OUTDIR/cpu-baseline.txt"
run() {
  echo "=== $(date +%T) $*" >> "$LOG"
  timeout "${LIMIT:-200}" "$NF" experiment "$@" --results-dir "$OUTDIR/results" >> "$LOG" 2>&1
  echo "exit status $?" >> "$LOG"
}
run experiments/table3.ini --kernel cpu-simd-omp,cpu-simd-omp-n3 --cpu-reps 5 --cpu-warmup 1
run experiments/nonuniform.ini --dist plummer --level 6,7,8 --kernel cpu-simd-omp,cpu-simd-omp-n3 --cpu-reps 3 --cpu-warmup 1
