#!/usr/bin/env bash
# Where one full evaluation's time goes, kernel by kernel: Nsight Compute (ncu) on the GPU machine
# over one bench run (no warm-up, one repetition) of fmm on 3D uniform 2^24 at level 6, p = 10, and of
# fmm-adaptive on 3D Plummer 2^24 at the automatic level and leaf size, p = 12 (the default order
# at 1e-4) and p = 10. Every kernel of the run is profiled, the tree's and plan's included (they are
# outside the evaluation's time, tree_ms and plan_ms). Per kernel: its duration, issue slots busy,
# warps resident, SM and memory throughput, registers and block size. ncu replays each kernel and
# runs with the clocks as they are (--clock-control none), so a kernel's duration is close to, not
# equal to, its time in an unprofiled run. Writes $OUT/<case>.csv (ncu's CSV) and <case>.txt (the
# kernels by total time: scripts/ncu-summary.py).
# Usage: scripts/fmm-profile.sh [BIN_DIR]   (default build/bin)
set -uo pipefail
BIN="${1:-build/bin}"
NF="$BIN/nearfield"
OUT="${OUT:-$PWD/fmm-profile-out}"
mkdir -p "$OUT"
[ -d "$BIN/lib" ] && export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"
NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
[ -n "$NCU" ] || { echo "fmm-profile.sh: ncu not found" >&2; exit 2; }
metrics=gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed
metrics+=,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,launch__registers_per_thread,launch__grid_size,launch__block_size,smsp__inst_executed.sum
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
status=0
profile() {  # case bench-arguments...
  local name=$1
  shift
  if timeout 180 "$NCU" --clock-control none --metrics "$metrics" --csv --print-units base --log-file "$OUT/$name.csv" \
      "$NF" bench "$@" --reps 1 --warmup 0 > "$OUT/$name.out" 2>&1; then
    python3 "$here/ncu-summary.py" "$OUT/$name.csv" 40 > "$OUT/$name.txt"
  else
    echo "fmm-profile.sh: $name failed (see $OUT/$name.out)" >&2
    status=1
  fi
}
profile uniform-p10 --kernel fmm --dist uniform --dim 3 --n 16777216 --level 6 --order 10
profile adaptive-p12 --kernel fmm-adaptive --dist plummer --dim 3 --n 16777216 --level auto
profile adaptive-p10 --kernel fmm-adaptive --dist plummer --dim 3 --n 16777216 --level auto --order 10
exit $status
