#!/usr/bin/env bash
# Nsight Compute profile of the near-field kernels of a few bench points, on the GPU machine (ncu
# reads the hardware counters on the Firecracker H100 machine; --clock-control none leaves the
# clocks alone, as METHOD.md asks). Each case is one `nearfield bench` run with one timed rep;
# only the near-field kernels are profiled (not the tree build or the plan), every launch of them.
# Writes one text report per case into a tarball under $OUT, and a one-line-per-kernel summary
# (name, duration, achieved occupancy, issue-slot use) to $OUT/ncu-summary.txt.
# Usage: scripts/ncu-profile.sh BIN_DIR 'name|bench args' ...
#   e.g. scripts/ncu-profile.sh build-device/bin \
#          'c11|--dist clusters --dim 2 --n 2000000 --level 11 --kernel ppt,bpb-lb'
set -uo pipefail
BIN="${1:?usage: scripts/ncu-profile.sh BIN_DIR 'name|bench args' ...}"
shift
OUT="${OUT:-$PWD/ncu-out}"
mkdir -p "$OUT"
if [ -d "$BIN/lib" ]; then export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"; fi
NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
[ -n "$NCU" ] || { echo "ncu not found" >&2; exit 2; }
logs="$(mktemp -d)"
# NCU_KERNELS overrides which kernels are profiled (an ncu --kernel-name value).
kernels="${NCU_KERNELS:-regex:ppt_kernel|bpb_kernel|bpb_lb_kernel|small_box_kernel|gather_kernel|item_kernel|colour}"
sections=(--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats
  --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis)
: > "$OUT/ncu-summary.txt"
for c in "$@"; do
  name="${c%%|*}" args="${c#*|}"
  # shellcheck disable=SC2086
  timeout 300 "$NCU" --clock-control none --kernel-name "$kernels" "${sections[@]}" \
    "$BIN/nearfield" bench $args --reps 1 --warmup 0 > "$logs/$name.txt" 2>&1
  echo "== $name (exit $?): bench $args" >> "$OUT/ncu-summary.txt"
  # Per profiled launch: the kernel's name (template arguments cut) and a few key figures.
  awk '
    /^  [a-zA-Z_].*\(.*\)$|^  void / { if (k != "") print k, d, o, t, i; k = $0; sub(/^ +/, "", k); sub(/<.*/, "", k); sub(/\(.*/, "", k); d = o = t = i = "-" }
    /^ +Duration / { d = $NF $(NF-1) }
    /^ +Achieved Occupancy / { o = "occ=" $NF "%" }
    /^ +Theoretical Occupancy / { t = "theo=" $NF "%" }
    /^ +Issue Slots Busy / { i = "issue=" $NF "%" }
    /^ +Grid Size / { g = $NF }
    END { if (k != "") print k, d, o, t, i }' "$logs/$name.txt" >> "$OUT/ncu-summary.txt"
  tar czf "$OUT/ncu-logs.tgz" -C "$logs" .
done
cat "$OUT/ncu-summary.txt"
