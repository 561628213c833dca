#!/usr/bin/env bash
# Measures again, on the GPU machine, the committed results/ rows of some kernels after a change to
# them (the other kernels' rows stay): each experiment runs with --remeasure and --kernel set to
# the changed kernels it lists, under its own time limit, on a copy of results/ packed into
# OUTDIR/results.tgz after every experiment. Log: OUTDIR/remeasure.log.
# Usage: scripts/remeasure.sh OUTDIR BIN_DIR "EXPERIMENT:KERNELS:SECONDS" ...
#   e.g.  scripts/remeasure.sh out build-device/bin nonuniform:bpb-lb,n3-rotate:120 table3:bpb-lb:40
set -uo pipefail
OUTDIR="$1"
BIN="$2"
shift 2
NF="$BIN/nearfield"
if [ -d "$BIN/lib" ]; then export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"; fi
LOG="$OUTDIR/remeasure.log"
mkdir -p "$OUTDIR"
[ -d "$OUTDIR/results" ] || cp -r results "$OUTDIR/results"
for spec in "$@"; do
  IFS=: read -r name kernels limit <<< "$spec"
  echo "=== $(date +%T) $name: $kernels (limit $limit s)" | tee -a "$LOG"
  timeout "$limit" "$NF" experiment "experiments/$name.ini" --results-dir "$OUTDIR/results" --remeasure \
    --kernel "$kernels" >> "$LOG" 2> "$OUTDIR/err.txt"
  echo "exit status $?" | tee -a "$LOG"
  grep -vE "^\[" "$OUTDIR/err.txt" >> "$LOG"
  rm -f "$OUTDIR/err.txt"
  tar czf "$OUTDIR/results.tgz" -C "$OUTDIR" results
done
echo "=== $(date +%T) done" | tee -a "$LOG"
