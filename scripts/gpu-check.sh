#!/usr/bin/env bash
# Run on the GPU machine before resolving any issue that touches GPU code:
#   1. the GPU test suite with NEARFIELD_REQUIRE_GPU=1 (a missing device is a failure);
#   2. compute-sanitizer memcheck and racecheck on small cases of every GPU kernel and of the GPU
#      tree builder (one clustered case has a box larger than a block, so the chunked paths run);
#   3. a short benchmark table (the near-field kernels, and fmm).
# Every step is time-boxed. Logs are packed into $OUT/gpu-check-logs.tgz after each step and the
# summary table goes to $OUT/gpu-check-summary.txt and stdout (two files, however many steps).
# Usage: scripts/gpu-check.sh [BIN_DIR]   (default build/bin; needs nearfield and test_gpu)
# STEPS="tests sanitizer bench" (the default) chooses the steps, so that a session can split them
# over calls of limited length; TEST_LIMIT (seconds, default 400) bounds the GPU tests, which take
# about 230 s on an H100. SANITIZER_CASES=PATTERN runs only the sanitizer cases whose name matches
# the extended regular expression PATTERN (for a session short of device time: the cases its change
# touches; the summary says the filter).
set -uo pipefail
BIN="${1:-build/bin}"
OUT="${OUT:-$PWD/gpu-check-out}"
mkdir -p "$OUT"
NF="$BIN/nearfield"
if [ -d "$BIN/lib" ]; then export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"; fi
LOGS="$(mktemp -d)"
work="$(mktemp -d)"
summary=()
record() {
  summary+=("$(printf '%-28s %s' "$1" "$2")")
  printf '%s\n' "${summary[@]}" > "$OUT/gpu-check-summary.txt"
  tar czf "$OUT/gpu-check-logs.tgz" -C "$LOGS" . 2>/dev/null
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$LOGS/device.txt" 2>&1
record "device" "$(tail -1 "$LOGS/device.txt")"

STEPS="${STEPS:-tests sanitizer bench}"
step() { case " $STEPS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# 1. GPU tests
if step tests; then
  NEARFIELD_REQUIRE_GPU=1 timeout "${TEST_LIMIT:-400}" "$BIN/test_gpu" --test-suite=gpu > "$LOGS/gpu-tests.log" 2>&1
  rc=$?
  record "GPU tests" "$([ $rc -eq 0 ] && echo PASS || echo "FAIL (exit $rc)"): $(grep -o 'test cases:.*' "$LOGS/gpu-tests.log" | tr -s ' ')"
fi

# 2. compute-sanitizer on small cases
"$NF" generate --dist clusters --clusters 1 --dim 2 --n 1100 --seed 4 --mass random --output "$work/c2.csv" > /dev/null
"$NF" generate --dist plummer --dim 3 --n 400 --seed 5 --mass random --output "$work/p3.csv" > /dev/null
cases=()
# Every registered GPU kernel (the registry's listing) in one process per case: validate runs each
# kernel on the input and checks it against the float64 reference, so a case is clean only if
# the sanitizer finds nothing and every kernel passes. A deep-level case for the kernels on the
# compact tree (the dense ones cannot take level 12 in 3D).
list=$("$NF" bench --list)
all_gpu=$(echo "$list" | awk 'NR > 1 && $2 ~ /^gpu/ {print $1}' | paste -sd, -)
compact=$(echo "$list" | awk 'NR > 1 && $2 ~ /^gpu/ && /near-field/ && !/far-field/ && !/dense tree/ {print $1}' | paste -sd, -)
cases+=("every GPU kernel, 2D float clustered (a box > 512)|validate --input $work/c2.csv --level 3 --kernel $all_gpu")
cases+=("every GPU kernel, 3D double, eps = 0|validate --input $work/p3.csv --level 2 --kernel $all_gpu --precision double --softening 0")
cases+=("compact-tree kernels, 3D level 12|validate --input $work/p3.csv --level 12 --kernel $compact")
cases+=("small boxes' warp path, 2D float P = 20|validate --dist uniform-exact --dim 2 --level 3 --ppb 20 --kernel $compact")
cases+=("small boxes' warp path, 3D double P = 48|validate --dist uniform-exact --dim 3 --level 2 --ppb 48 --kernel $compact --precision double")
cases+=("tree builder 2D|tree --input $work/c2.csv --level 5 --builder gpu")
cases+=("tree builder 3D|tree --input $work/p3.csv --level 3 --builder gpu")
cases+=("tree builder 2D dense|tree --input $work/c2.csv --level 6 --dense --builder gpu")
cases+=("tree builder 3D level 21|tree --input $work/p3.csv --level 21 --builder gpu")
# The adaptive FMM on a deep tree: its flags, kept levels, near field and passes.
cases+=("fmm-adaptive 3D Plummer|validate --dist plummer --dim 3 --n 3000 --level auto --kernel fmm-adaptive --leaf-size 16 --order 4")
# Its near field's split items: leaves of more than 128 targets, or more than 1024 sources (atomics).
cases+=("fmm-adaptive 3D Plummer, big leaves|validate --dist plummer --dim 3 --n 20000 --level auto --kernel fmm-adaptive --leaf-size 200 --order 4")
cases+=("fmm-adaptive 2D clusters, big leaves|validate --dist clusters --dim 2 --n 20000 --level auto --kernel fmm-adaptive --leaf-size 300 --order 6")
# The near field's items with segments of 32 sources (most leaves take several items, adding with
# atomics) and M2L's levels forked onto streams of their own at p = 10 (the sibling groups).
cases+=("fmm-adaptive 3D Plummer, 32-source items, levels at once|NEARFIELD_NEAR_SEGMENT=32 validate --dist plummer --dim 3 --n 5000 --level auto --kernel fmm-adaptive --leaf-size 64 --order 10")
# M2L a thread per target (low orders), its lists split among threads on small levels (atomics),
# its moments copied to padded rows (3D p = 4: 35 terms; 2D p = 9: 55).
cases+=("fmm thread-per-target M2L, 3D p = 4|validate --dist uniform --dim 3 --n 5000 --level 4 --kernel fmm --order 4")
cases+=("fmm thread-per-target M2L, 2D p = 9|validate --dist clusters --dim 2 --n 5000 --level 5 --kernel fmm --order 9")
# Its moments staged by the warp (by default on well-filled levels: above) on every level of a
# sparse input in double, and read by each lane (off).
cases+=("fmm thread-per-target M2L staged everywhere, 3D double p = 4|NEARFIELD_M2L_STAGED=on validate --dist plummer --dim 3 --n 5000 --level 4 --kernel fmm --order 4 --precision double")
cases+=("fmm thread-per-target M2L unstaged, 3D p = 4|NEARFIELD_M2L_STAGED=off validate --dist uniform --dim 3 --n 5000 --level 4 --kernel fmm --order 4")
cases+=("fmm-adaptive M2L staged everywhere, 3D p = 5|NEARFIELD_M2L_STAGED=on validate --dist plummer --dim 3 --n 3000 --level auto --kernel fmm-adaptive --leaf-size 16 --order 5")
# Its wide variant (derivatives read a row at a time from the L1): 3D float p = 7 on a level small
# enough to split the lists, 3D float p = 8 (the lists grouped by order per offset, split too) and
# 3D double p = 5.
# The sibling-group kernel in slices of its row quads (the operator table does not fit beside the
# moments): 3D float p = 14 (forced: the tensor cores run it by default) and 3D double p = 12, on
# level 3 (at level 4 the two cases had taken racecheck about 5 minutes).
cases+=("fmm M2L in slices, 3D float p = 14|NEARFIELD_M2L=group validate --dist plummer --dim 3 --n 1000 --level 3 --kernel fmm --order 14")
# M2L's sibling groups on the tensor cores (3D float p = 13..16 by default; forced at p = 10 and in 2D
# on an adaptive tree, over its split boxes).
cases+=("fmm M2L on tensor cores, 3D p = 14|validate --dist plummer --dim 3 --n 1000 --level 3 --kernel fmm --order 14")
cases+=("fmm M2L on tensor cores, one buffer, 3D p = 16|validate --dist uniform --dim 3 --n 1000 --level 3 --kernel fmm --order 16")
cases+=("fmm M2L on tensor cores, forced, 3D p = 10|NEARFIELD_M2L=tensor validate --dist uniform --dim 3 --n 3000 --level 4 --kernel fmm --order 10")
cases+=("fmm-adaptive M2L on tensor cores, forced, 2D p = 14|NEARFIELD_M2L=tensor validate --dist clusters --dim 2 --n 5000 --level auto --kernel fmm-adaptive --leaf-size 16 --order 14")
# Two row quads a unit in the sibling-group kernel (by default in 2D float, here two targets a lane
# at p = 14, and in 3D float p = 12, the line cases below; forced with two targets a lane at 3D p = 9).
cases+=("fmm M2L two quads a unit, 2D p = 14|validate --dist clusters --dim 2 --n 5000 --level 5 --kernel fmm --order 14")
cases+=("fmm M2L two quads a unit, forced, 2 targets a lane, 3D p = 9|NEARFIELD_M2L_ROWS=8 validate --dist uniform --dim 3 --n 3000 --level 3 --kernel fmm --order 9")
# M2L's moments copied as bfloat16 from their high degrees on (farfield/m2l_group_plan.h,
# packs_moments: by default at 3D float p >= 11, here two targets a lane in one stage at p = 11 and
# fmm-adaptive's one target a lane with two quads a unit at p = 12; forced in 2D at p = 14).
cases+=("fmm M2L moments in bfloat16, 3D p = 11|validate --dist plummer --dim 3 --n 5000 --level 4 --kernel fmm --order 11")
cases+=("fmm-adaptive M2L moments in bfloat16, 3D p = 12|validate --dist plummer --dim 3 --n 5000 --level auto --kernel fmm-adaptive --leaf-size 16 --order 12")
cases+=("fmm M2L moments in bfloat16, forced, 2D p = 14|NEARFIELD_M2L_MOMENTS=bf16 validate --dist clusters --dim 2 --n 5000 --level 5 --kernel fmm --order 14")
cases+=("fmm M2L in slices, 3D double p = 12|validate --dist uniform --dim 3 --n 1000 --level 3 --kernel fmm --order 12 --precision double")
cases+=("fmm thread-per-target M2L, wide, 3D p = 7|validate --dist uniform --dim 3 --n 5000 --level 4 --kernel fmm --order 7")
cases+=("fmm thread-per-target M2L, wide by order, 3D p = 8|validate --dist plummer --dim 3 --n 5000 --level 4 --kernel fmm --order 8")
cases+=("fmm thread-per-target M2L, wide, 3D double p = 5|validate --dist plummer --dim 3 --n 5000 --level 4 --kernel fmm --order 5 --precision double")
# M2M and L2L a thread per child (by default on levels of more children than the GPU's resident
# threads), on fmm's and fmm-adaptive's levels (leading VAR=value words set the environment).
cases+=("fmm shifts a thread per child, 3D p = 4|NEARFIELD_SHIFTS=thread validate --dist uniform --dim 3 --n 5000 --level 4 --kernel fmm --order 4")
cases+=("fmm-adaptive shifts a thread per child, 3D p = 6|NEARFIELD_SHIFTS=thread validate --dist plummer --dim 3 --n 3000 --level auto --kernel fmm-adaptive --leaf-size 16 --order 6")
# The shifts by lines (farfield/shifts_line.cuh), the default in 3D from p = 10 (forced below that):
# families that straddle blocks (a Plummer level's parents hold 1..8 children), 2D double at p = 16
# (forced, 32 children a block), an adaptive tree's split and unsplit parents, and fewer children a
# block, so that a warp's lanes take several lines of one child and a family spans up to 4 blocks:
# 3D float p = 12 (16 children a block) and 3D double p = 20 (2 children a block) at level 3.
cases+=("fmm shifts by lines, 3D p = 10, families across blocks|validate --dist plummer --dim 3 --n 20000 --level 4 --kernel fmm --order 10")
cases+=("fmm shifts by lines, 2D double p = 16|NEARFIELD_SHIFTS=line validate --dist clusters --dim 2 --n 5000 --level 5 --kernel fmm --order 16 --precision double")
cases+=("fmm-adaptive shifts by lines, 3D p = 8|NEARFIELD_SHIFTS=line validate --dist plummer --dim 3 --n 3000 --level auto --kernel fmm-adaptive --leaf-size 16 --order 8")
cases+=("fmm shifts by lines, 16 children a block, 3D p = 12|validate --dist plummer --dim 3 --n 3000 --level 3 --kernel fmm --order 12")
# The 2-children case runs memcheck only: under racecheck it did not finish within the case's 150 s,
# at N = 1000 or 300 (H200; neither with P2M's kernels left out of the check), while the 16-children
# case above is racecheck clean.
cases+=("fmm shifts by lines, 2 children a block, 3D double p = 20 (memcheck only)|validate --dist plummer --dim 3 --n 300 --level 3 --kernel fmm --order 20 --precision double")
# P2M's tiles (farfield/p2m_tiles.cuh): boxes of many chunks taken from the list that the thread
# per small box leaves (3D float p = 4: 5 tiles, 6 particle groups a warp), the 3D double tiles of
# p = 20 (five tiles a lane, 132 KB of shared memory), and 2D float p = 13 by a block per box.
cases+=("fmm P2M tiles, the list of large boxes, 3D p = 4|validate --dist plummer --dim 3 --n 20000 --level 3 --kernel fmm --order 4")
cases+=("fmm P2M tiles, 3D double p = 20|validate --dist plummer --dim 3 --n 2000 --level 2 --kernel fmm --order 20 --precision double")
cases+=("fmm P2M tiles, 2D p = 13|validate --dist clusters --dim 2 --n 20000 --level 4 --kernel fmm --order 13")
# The far field on a stream of its own beside the near field (methods/far_stream.h).
cases+=("fmm far field beside the near field, 3D p = 8|NEARFIELD_OVERLAP=on validate --dist plummer --dim 3 --n 6000 --level 4 --kernel fmm --order 8")
cases+=("fmm-adaptive far field beside the near field, 3D p = 6|NEARFIELD_OVERLAP=high validate --dist plummer --dim 3 --n 5000 --level auto --kernel fmm-adaptive --leaf-size 16 --order 6")
# The step of a simulation: the drift that reduces the bounds, the build from them, the reorder.
cases+=("simulate steps, 3D bpb-lb|simulate --input $work/p3.csv --kernel bpb-lb --level 3 --dt 0.001 --steps 3 --output-dir $work/sim")
for tool in memcheck racecheck; do
  step sanitizer || break
  clean=0 total=0 dirty=""
  for c in "${cases[@]}"; do
    name="${c%%|*}" args="${c#*|}" envs=()
    while [[ "$args" =~ ^([A-Z_0-9]+=[^ ]*)\ (.*)$ ]]; do envs+=("${BASH_REMATCH[1]}"); args="${BASH_REMATCH[2]}"; done
    if [ -n "${SANITIZER_CASES:-}" ] && ! [[ "$name" =~ $SANITIZER_CASES ]]; then continue; fi
    if [ "$tool" = racecheck ] && [[ "$name" == *"(memcheck only)" ]]; then continue; fi
    total=$((total + 1))
    echo "=== $tool: $name: ${envs[*]:+${envs[*]} }nearfield $args" >> "$LOGS/sanitizer-$tool.log"
    rm -rf "$work/sim"  # the simulate case's output folder, fresh for each tool
    # shellcheck disable=SC2086
    if timeout 150 env "${envs[@]}" compute-sanitizer --tool "$tool" --error-exitcode 99 "$NF" $args \
        >> "$LOGS/sanitizer-$tool.log" 2>&1; then
      clean=$((clean + 1))
    else
      dirty="$dirty; $name"
    fi
  done
  [ "$total" -gt 0 ] || dirty="; no case matches SANITIZER_CASES"  # a filter that runs nothing fails
  record "compute-sanitizer $tool" "$clean/$total runs clean${dirty}${SANITIZER_CASES:+ (cases matching '$SANITIZER_CASES')}"
done

# 3. short benchmark table (2D float, level 7: the paper's setting, at two box sizes; fmm in 3D)
if step bench; then
  timeout 180 "$NF" bench --kernel ppt,bpt,bpb,bpb-n3,bpb-lb,n3-shfl,n3-rotate,n3-colour --dist uniform-exact --dim 2 \
    --level 7 --ppb 64,512 --reps 5 --warmup 1 > "$LOGS/bench.txt" 2>/dev/null
  rc=$?
  # and the full method on a 3D Plummer sphere of 2^20 particles at p = 4 (M2L a thread per target)
  # and p = 10 (the sibling-group kernel; the order its default accuracy 1e-4 takes)
  timeout 120 "$NF" bench --kernel fmm --dist plummer --dim 3 --n 1048576 --level 5 --order 4,10 --reps 5 --warmup 1 \
    >> "$LOGS/bench.txt" 2>/dev/null
  record "benchmark" "exit $rc, fmm exit $? (table below)"
fi
rm -rf "$work"
echo
[ -f "$LOGS/bench.txt" ] && cat "$LOGS/bench.txt"
echo
cat "$OUT/gpu-check-summary.txt"
grep -qE "FAIL|[0-9]+/[0-9]+ runs clean;" "$OUT/gpu-check-summary.txt" && exit 1
exit 0
