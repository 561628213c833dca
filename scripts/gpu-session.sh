#!/usr/bin/env bash
# One time-boxed session on a GPU machine (how the committed results/ were produced): the GPU test
# suite, the tree-build and all-pairs figures, and the experiments of `nearfield reproduce`, with the
# single-threaded cpu-serial column of Table III run concurrently with the GPU experiments (on its
# own core; the foreground uses the other cores) so the whole session fits a short lease. cpu-omp
# runs alone at the end. Results go to OUTDIR/results/NAME/*.csv, everything else to OUTDIR/log.txt.
# Usage: scripts/gpu-session.sh OUTDIR [BIN_DIR]
set -uo pipefail
OUTDIR="$1"
BIN="${2:-build/bin}"
NF="$BIN/nearfield"
if [ -d "$BIN/lib" ]; then export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"; fi
LOG="$OUTDIR/log.txt"
mkdir -p "$OUTDIR/results"
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9]+/-/g; s/-$//')
step() { echo "=== $(date +%T) $*" | tee -a "$LOG"; }

step "background: table3 cpu-serial"
timeout "${CPU_SERIAL_LIMIT:-520}" "$NF" experiment experiments/table3.ini --kernel cpu-serial \
  --output "$OUTDIR/results/table3/$slug-cpu-serial.csv" > /tmp/cpu-serial.txt 2>&1 &
bg=$!
export OMP_NUM_THREADS=$(( $(nproc) - 1 ))

step "GPU tests (NEARFIELD_REQUIRE_GPU=1)"
NEARFIELD_REQUIRE_GPU=1 timeout 200 "$BIN/test_gpu" --test-suite=gpu > /tmp/gpu-tests.log 2>&1
echo "test_gpu exit status $?" | tee -a "$LOG"
grep -E -B4 -A10 "ERROR|FATAL" /tmp/gpu-tests.log | head -200 >> "$LOG"
grep -E "test cases|assertions" /tmp/gpu-tests.log >> "$LOG"

run_exp() {  # name, timeout, extra args
  local name=$1 limit=$2
  shift 2
  step "experiment $name $*"
  timeout "$limit" "$NF" experiment "experiments/$name.ini" --results-dir "$OUTDIR/results" "$@" >> "$LOG" 2> /tmp/exp.err
  echo "exit status $?" >> "$LOG"
  grep -vE "^\[|already in" /tmp/exp.err >> "$LOG"
}
run_exp table3 150 --kernel ppt,bpt,bpb,bpb-n3
run_exp validation-large 120
step "perf: tree build and all-pairs"
OUT="$OUTDIR" timeout 120 scripts/gpu-perf.sh "$BIN" tree allpairs > /dev/null 2>&1
cat "$OUTDIR/perf.txt" >> "$LOG" 2>/dev/null && rm -f "$OUTDIR/perf.txt"
run_exp depth 90
run_exp ppb 100
run_exp validation 150

step "waiting for cpu-serial"
wait $bg
echo "cpu-serial exit status $?" >> "$LOG"
tail -n 12 /tmp/cpu-serial.txt >> "$LOG"
unset OMP_NUM_THREADS
run_exp table3 90 --kernel cpu-omp
step done
