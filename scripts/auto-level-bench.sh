#!/usr/bin/env bash
# The per-kernel --level auto on the GPU machine (issue 19): the auto-level experiment (3D uniform,
# plummer, clusters, mixed; levels 7..11 and auto) and the automatic level of the depth (2D uniform)
# and non-uniform (3D) experiments, whose fixed levels are already in results/. Results go to
# OUTDIR/results/<experiment>/<device>.csv (merge them into results/), the log to OUTDIR/auto-level.txt.
#   scripts/auto-level-bench.sh OUTDIR [BIN_DIR]
set -uo pipefail
OUTDIR="$1"
BIN="${2:-build/bin}"
NF="$BIN/nearfield"
if [ -d "$BIN/lib" ]; then export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"; fi
mkdir -p "$OUTDIR/results"
LOG="$OUTDIR/auto-level.txt"
run() {
  echo "=== $(date +%T) $*" >> "$LOG"
  timeout "${LIMIT:-300}" "$NF" experiment "$@" --results-dir "$OUTDIR/results" >> "$LOG" 2>&1
  echo "exit status $?" >> "$LOG"
}
run experiments/auto-level.ini
run experiments/depth.ini --level auto
run experiments/nonuniform.ini --level auto
