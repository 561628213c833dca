#!/usr/bin/env bash
# Run on the GPU machine before resolving any issue that touches GPU code:
#   1. the GPU test suite with NEARFIELD_REQUIRE_GPU=1 (a missing device is a failure);
#   2. compute-sanitizer memcheck and racecheck on small cases of every GPU kernel and the GPU
#      tree builder (clustered input, so boxes larger than a block take the chunked paths);
#   3. a short benchmark table.
# Logs go under $OUT (default ./gpu-check-out); the summary table is printed last.
# Usage: scripts/gpu-check.sh [BIN_DIR]   (default build/bin; needs nearfield and test_gpu)
set -uo pipefail
BIN="${1:-build/bin}"
OUT="${OUT:-$PWD/gpu-check-out}"
mkdir -p "$OUT"
NF="$BIN/nearfield"
# A binary built elsewhere may bring its OpenMP runtime along.
if [ -d "$BIN/lib" ]; then export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"; fi
summary=()
record() { summary+=("$(printf '%-34s %s' "$1" "$2")"); }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$OUT/device.txt" 2>&1
cat "$OUT/device.txt"

# 1. GPU tests
if NEARFIELD_REQUIRE_GPU=1 "$BIN/test_gpu" --test-suite=gpu > "$OUT/gpu-tests.log" 2>&1; then
  record "GPU tests (REQUIRE_GPU=1)" "PASS $(grep -o 'test cases:.*' "$OUT/gpu-tests.log" | tr -s ' ')"
else
  record "GPU tests (REQUIRE_GPU=1)" "FAIL (see gpu-tests.log)"
  tail -n 60 "$OUT/gpu-tests.log"
fi

# 2. compute-sanitizer on small cases
work="$(mktemp -d)"
"$NF" generate --dist clusters --dim 2 --n 3000 --clusters 3 --seed 4 --mass random --output "$work/c2.csv" > /dev/null
"$NF" generate --dist plummer --dim 3 --n 1500 --seed 5 --mass random --output "$work/p3.csv" > /dev/null
cases=()
for k in allpairs-naive allpairs-tiled allpairs-2d ppt bpt bpb bpb-n3; do
  cases+=("$k|forces --input $work/c2.csv --level 4 --kernel $k --mask near --output $work/a.csv")
  cases+=("$k 3D double|forces --input $work/p3.csv --level 3 --kernel $k --precision double --softening 0 --output $work/a.csv")
done
cases+=("tree builder|tree --input $work/c2.csv --level 5 --builder gpu")
cases+=("tree builder 3D|tree --input $work/p3.csv --level 3 --builder gpu")
for tool in memcheck racecheck; do
  clean=0 total=0
  : > "$OUT/sanitizer-$tool.log"
  for c in "${cases[@]}"; do
    name="${c%%|*}" args="${c#*|}"
    total=$((total + 1))
    echo "=== $tool: $name: nearfield $args" >> "$OUT/sanitizer-$tool.log"
    # shellcheck disable=SC2086
    if compute-sanitizer --tool "$tool" --error-exitcode 99 "$NF" $args >> "$OUT/sanitizer-$tool.log" 2>&1; then
      clean=$((clean + 1))
    else
      echo "!!! $tool reported errors for $name" >> "$OUT/sanitizer-$tool.log"
    fi
  done
  record "compute-sanitizer $tool" "$clean/$total clean"
done
rm -rf "$work"

# 3. short benchmark table (2D float, level 7: the paper's setting, at two box sizes)
"$NF" bench --kernel ppt,bpt,bpb,bpb-n3 --dist uniform-exact --dim 2 --level 7 --ppb 64,512 --reps 5 --warmup 1 \
  --output "$OUT/bench.csv" > "$OUT/bench.txt" 2> "$OUT/bench.err" && record "benchmark" "done" || record "benchmark" "FAIL"
"$NF" bench --kernel allpairs-tiled --dist uniform --dim 3 --n 262144 --level 1 --reps 5 --warmup 1 \
  --output "$OUT/bench.csv" >> "$OUT/bench.txt" 2>> "$OUT/bench.err" || record "benchmark all-pairs" "FAIL"

echo
cat "$OUT/bench.txt"
echo
echo "summary ($(head -2 "$OUT/device.txt" | tail -1 | cut -d, -f1)):"
printf '%s\n' "${summary[@]}"
grep -q FAIL <<< "${summary[*]}" && exit 1
exit 0
