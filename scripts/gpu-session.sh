#!/usr/bin/env bash
# One time-boxed session of experiments on a GPU machine (how the committed results/ are
# produced): the experiments of `nearfield reproduce`, each under its own time limit, resuming
# from a copy of the committed results/ (points already recorded are skipped, so only what is
# missing is measured), then the results packed into OUTDIR/results.tgz. Every step is logged to
# OUTDIR/session.log. The single-threaded cpu-serial column of Table III is not rerun here (it
# takes minutes at P = 512: `nearfield experiment experiments/table3.ini --kernel cpu-serial
# --remeasure` does it).
# Usage: scripts/gpu-session.sh OUTDIR [BIN_DIR] [SECONDS]   (default build/bin, 560 s in all)
# Experiments to run: $EXPERIMENTS (default: every one of reproduce but table3's CPU columns).
set -uo pipefail
OUTDIR="$1"
BIN="${2:-build/bin}"
BUDGET="${3:-560}"
NF="$BIN/nearfield"
if [ -d "$BIN/lib" ]; then export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"; fi
LOG="$OUTDIR/session.log"
mkdir -p "$OUTDIR"
rm -rf "$OUTDIR/results" && cp -r results "$OUTDIR/results"
start=$(date +%s)
pack() { tar czf "$OUTDIR/results.tgz" -C "$OUTDIR" results; }
trap pack EXIT
step() { echo "=== $(date +%T) $*" | tee -a "$LOG"; }

# name, limit in seconds, extra arguments; the limit is cut to what is left of the budget.
run_exp() {
  local name=$1 limit=$2
  shift 2
  local left=$((BUDGET - ($(date +%s) - start)))
  if [ "$left" -lt 15 ]; then
    step "experiment $name skipped: the session's time is spent"
    return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  step "experiment $name (limit ${limit} s) $*"
  timeout "$limit" "$NF" experiment "experiments/$name.ini" --results-dir "$OUTDIR/results" "$@" >> "$LOG" 2> "$OUTDIR/exp.err"
  echo "exit status $?" >> "$LOG"
  grep -vE "^\[|already in" "$OUTDIR/exp.err" >> "$LOG"
  rm -f "$OUTDIR/exp.err"
  pack
}

if [ -n "${EXPERIMENTS:-}" ]; then
  for e in $EXPERIMENTS; do run_exp "$e" 200; done
else
  run_exp table3 60 --kernel ppt,bpt,bpb,bpb-n3,bpb-lb,n3-shfl,n3-rotate,n3-colour
  run_exp newton3 60
  run_exp newton3-3d 70
  run_exp nonuniform 150
  run_exp nonuniform-2d 100
  run_exp validation-extreme 60
  run_exp validation 60
  run_exp ppb 80
  run_exp depth 60
fi
step done
