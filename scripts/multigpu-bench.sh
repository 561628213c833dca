#!/usr/bin/env bash
# Issue 12 on a machine with 2 GPUs (nvidia-h200-x2), time-boxed to about 8 minutes in all:
#   1. what the binary finds (devices, libnccl) and how the GPUs are linked (nvidia-smi topo);
#   2. the multi-GPU tests of the GPU suite (NEARFIELD_REQUIRE_GPUS=2: a missing GPU or libnccl fails);
#   3. validate --gpus 2 against the float64 ground truth (bitwise with one GPU where it must be);
#   4. experiments/multigpu.ini (strong scaling, N = 5e8) and experiments/multigpu-capacity.ini
#      (N = 1.5e9 over 2 GPUs).
# Results go to OUTDIR/results/{multigpu,multigpu-capacity,validation-multigpu}/<device>.csv, the log
# to OUTDIR/log.txt. Time limits (seconds, environment): TEST_LIMIT 100, VALIDATE_LIMIT 60,
# SCALING_LIMIT 170, CAPACITY_LIMIT 180.
# libnccl is loaded at run time: when the loader does not find it, the Python package
# nvidia-nccl-cu13 is asked (python3 -c "import nvidia.nccl"), or set NEARFIELD_NCCL_LIB.
# Usage: scripts/multigpu-bench.sh OUTDIR [BIN_DIR]
set -uo pipefail
OUTDIR="$1"
BIN="${2:-build/bin}"
NF="$BIN/nearfield"
if [ -d "$BIN/lib" ]; then export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"; fi
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off (the binary sets it too)
LOG="$OUTDIR/log.txt"
slug=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9]+/-/g; s/-$//')
mkdir -p "$OUTDIR/results/validation-multigpu"
step() { echo "=== $(date +%T) $*" | tee -a "$LOG"; }

step "devices and NCCL"
"$NF" --version 2>&1 | tee -a "$LOG"
nvidia-smi --query-gpu=index,name,memory.total,clocks.max.sm --format=csv >> "$LOG" 2>&1
nvidia-smi topo -m >> "$LOG" 2>&1
free -g >> "$LOG" 2>&1

step "multi-GPU tests (NEARFIELD_REQUIRE_GPUS=2)"
NEARFIELD_REQUIRE_GPUS=2 timeout "${TEST_LIMIT:-100}" "$BIN/test_gpu" --test-suite=gpu \
  --test-case='*2 GPUs*,*--gpus*' > "$OUTDIR/multigpu-tests.log" 2>&1
echo "test_gpu exit status $?" | tee -a "$LOG"
grep -E -B4 -A12 "ERROR|FATAL" "$OUTDIR/multigpu-tests.log" | head -150 >> "$LOG"
grep -E "NCCL:|skipped|test cases|assertions" "$OUTDIR/multigpu-tests.log" | sort -u | tee -a "$LOG"

step "validate --gpus 2"
timeout "${VALIDATE_LIMIT:-60}" "$NF" validate --gpus 2 --cross-pairs auto,twice --dist uniform,clusters --dim 2,3 \
  --n 20000 --level 4 --precision float,double --output "$OUTDIR/results/validation-distributed/$slug.csv" 2>/dev/null \
  | tee -a "$LOG"
echo "validate exit status ${PIPESTATUS[0]}" | tee -a "$LOG"

run_exp() {  # name, time limit in seconds
  step "experiment $1"
  timeout "$2" "$NF" experiment "experiments/$1.ini" --results-dir "$OUTDIR/results" >> "$LOG" 2> "$OUTDIR/$1.err"
  echo "exit status $?" | tee -a "$LOG"
  grep -vE "^\[|already in" "$OUTDIR/$1.err" >> "$LOG"
}
run_exp multigpu "${SCALING_LIMIT:-170}"
run_exp multigpu-capacity "${CAPACITY_LIMIT:-180}"
step done
