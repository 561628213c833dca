#!/usr/bin/env bash
# Measurements of the GPU fast multipole method (fmm), run on the GPU machine; each section first
# removes its own results files, so that they hold the rows of this build only.
#   stages    3D uniform N = 2^24 at levels 5 and 6, orders 4, 5, 6, 8, 10; at accuracies 1e-3 and 1e-4 with
#             --level auto; Plummer 2^24 at level 7, orders 6..10: time per stage
#             -> RESULTS/fmm/<device>.csv
#   levels    experiments/fmm-levels.ini (level sweep, N = 2^22, with the auto rows)
#   levels-2d  fmm on 2D uniform 2^22 at levels 8, 9, 10 and auto, p = 4, 6, 8 (the check of the 2D
#             staged curve of --level auto's model) -> RESULTS/fmm-levels-2d/<device>.csv
#   levels-p12  fmm at p = 12 on 3D uniform, Plummer and clusters 2^22, levels 5 to 8 and --level auto
#             (the check of the slot curve's p = 12 point) -> RESULTS/fmm-levels-p12/<device>.csv
#   levels-p14  the same at p = 14 (M2L on tensor cores; uniform at levels 4 to 7, Plummer and clusters
#             5 to 8) -> RESULTS/fmm-levels-p14/<device>.csv
#   scaling   experiments/fmm-scaling.ini (fmm and fmm-adaptive, N = 2^16..2^24) and allpairs-tiled at 2^16..2^20 in the
#             same file
#   near      the near-field kernel inside fmm: --near n3-rotate, bpb-lb, bpb, ppt on 3D uniform 2^24 at
#             level 6 and Plummer 2^24 at level 7, order 8 -> RESULTS/fmm-near/<device>.csv
#   accuracy  experiments/fmm-accuracy.ini (error against the order, 2D and 3D, float and double)
#   adaptive  fmm-adaptive on 3D Plummer 2^24 (leaf sizes 128, 192, 256, 320; orders 6, 8, 10) and 3D
#             uniform 2^24 (leaf size 128; orders 5, 8) -> RESULTS/fmm-adaptive/<device>.csv
#   adaptive-leaf  fmm-adaptive against its leaf size S (the data of the automatic leaf size, whose
#             rows, leaf_rule = auto, come first for each input): 3D
#             Plummer 2^24 (S = 128..768; orders 6, 8, 10, and 12 from S = 256), 3D uniform 2^24 (S = 64..512; orders 5, 8,
#             10), 3D clusters 2^22 and 2D clusters and uniform 2^22 (orders 8, 12); every point three
#             times -> RESULTS/fmm-adaptive-leaf/<device>.csv
#   adaptive-leaf-high  the same at the high orders, since M2L's levels run at once: 3D Plummer 2^20,
#             2^22 and 2^24, the shell 2^22 and uniform 2^24, orders 10, 11 and 12, S = auto and 256 to
#             508 -> RESULTS/fmm-adaptive-leaf-high/<device>.csv
#   adaptive-leaf-check  the automatic leaf size at orders 11 and 12 on the same five inputs, 3D
#             clusters 2^22 at p = 12 (auto, 393, 508) and Plummer 2^22 at p = 14 (auto, 512, 768)
#             -> RESULTS/fmm-adaptive-leaf-high/<device>-check.csv
#   adaptive-leaf-tensor  the same at the tensor cores' orders 13 to 16: 3D Plummer 2^22 and 2^24 and
#             the shell 2^22, S = auto and 320 to 654 -> RESULTS/fmm-adaptive-leaf-high/<device>-tensor.csv
#   adaptive-leaf-tensor-wide  the same orders on two more inputs, after the refit: 3D uniform 2^24 and
#             Plummer 2^20, S = auto and 393 to 768 -> RESULTS/fmm-adaptive-leaf-high/<device>-tensor-wide.csv
#   adaptive-leaf-tensor-check  the automatic size there after the refit (orders 13 to 16, the same
#             three inputs) -> RESULTS/fmm-adaptive-leaf-high/<device>-tensor-check.csv
#   adaptive-accuracy  its error on a sample of 1000 targets (Plummer 2^24, leaf sizes 128 to 320,
#             orders 6, 8, 10) -> RESULTS/fmm-adaptive-accuracy/<device>.csv
#   slices    M2L in slices of its row quads against the fallback it replaced (3D float p = 14, double
#             p = 12, fmm-adaptive p = 14) -> RESULTS/fmm-m2l-slices/<device>{,-direct}.csv
#   sparse    fmm in double on 3D uniform 2^20 at levels 7 and 8, orders 8 and 10 (the sparse factor
#             of farfield/order.h at large N) -> RESULTS/fmm-sparse/<device>.csv
#   order-search  the measured order (--order-sample 4096, measure/order_search.h) at the default 1e-4:
#             fmm-adaptive on 3D Plummer 2^24 and 2^20 and the shell 2^22, fmm on 3D uniform 2^24 at --level
#             auto: bench rows (the search's order and time) and validate rows on 1000 other
#             targets, and Plummer 2^24 again at --order-sample 16384, Plummer 2^20 at --order-sample
#             1048576 (every particle: the exact error) with validate against all-pairs
#             -> RESULTS/fmm-order-search/<device>.csv and <device>-validate.csv
#   depth-error  the error against the tree's depth in 3D, fmm-adaptive on eight inputs (orders 6..12)
#             and fmm at levels 7 to 9 (the data of farfield/order.h's kAdaptiveMargin3)
#             -> RESULTS/fmm-depth-error/<device>.csv
# Usage: scripts/fmm-bench.sh [BIN_DIR] [RESULTS_DIR] [sections...]   (defaults build/bin, results,
# the sections stages to accuracy, in that order)
set -euo pipefail
BIN="${1:-build/bin}"
RESULTS="${2:-results}"
shift 2 || shift $#
sections="${*:-stages levels scaling near accuracy}"
NF="$BIN/nearfield"
if [ -d "$BIN/lib" ]; then export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"; fi
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9]+/-/g; s/-$//')
fresh() { mkdir -p "$(dirname "$1")"; rm -f "$1"; }
# fmm-adaptive's bench rows against its leaf size, 3 repetitions after one warm-up, into OUT; a size
# the method refuses leaves no row (and the sweep goes on).
leaf_rows() {  # OUT DIST DIM N ORDERS SIZES...   (auto: no --leaf-size, the automatic size)
  local out=$1 dist=$2 dim=$3 n=$4 orders=$5
  shift 5
  for size in "$@"; do
    local given=(--leaf-size "$size")
    [ "$size" = auto ] && given=()
    "$NF" bench --kernel fmm-adaptive --dist "$dist" --dim "$dim" --n "$n" --level auto "${given[@]}" \
      --order "$orders" --reps 3 --warmup 1 --output "$out" || echo "(leaf size $size: refused or failed, no row)"
  done
}
for s in $sections; do
  echo "=== $(date +%T) $s"
  case "$s" in
    stages)
      out="$RESULTS/fmm/$device.csv"
      fresh "$out"
      "$NF" bench --kernel fmm --dist uniform --dim 3 --n 16777216 --level 5,6 --order 4,5,6,8,10 --reps 5 --output "$out"
      for accuracy in 1e-3 1e-4; do
        "$NF" bench --kernel fmm --dist uniform --dim 3 --n 16777216 --level auto --accuracy "$accuracy" --reps 5 --output "$out"
      done
      "$NF" bench --kernel fmm --dist plummer --dim 3 --n 16777216 --level 7 --order 6,8,10 --reps 5 --output "$out"
      ;;
    levels)
      fresh "$RESULTS/fmm-levels/$device.csv"
      "$NF" experiment experiments/fmm-levels.ini --results-dir "$RESULTS"
      ;;
    levels-2d)
      out="$RESULTS/fmm-levels-2d/$device.csv"
      fresh "$out"
      "$NF" bench --kernel fmm --dist uniform --dim 2 --n 4194304 --level 8,9,10,auto --order 4,6,8 --reps 3 --warmup 1 \
        --output "$out"
      ;;
    levels-p12)
      out="$RESULTS/fmm-levels-p12/$device.csv"
      fresh "$out"
      for dist in uniform plummer clusters; do
        "$NF" bench --kernel fmm --dist "$dist" --dim 3 --n 4194304 --level 5,6,7,8 --order 12 --reps 3 --warmup 1 \
          --output "$out"
        "$NF" bench --kernel fmm --dist "$dist" --dim 3 --n 4194304 --level auto --order 12 --reps 3 --warmup 1 \
          --output "$out"
      done
      ;;
    levels-p14)
      out="$RESULTS/fmm-levels-p14/$device.csv"
      fresh "$out"
      for dist in uniform plummer clusters; do
        levels=5,6,7,8
        [ "$dist" = uniform ] && levels=4,5,6,7
        "$NF" bench --kernel fmm --dist "$dist" --dim 3 --n 4194304 --level "$levels" --order 14 --reps 3 --warmup 1 \
          --output "$out"
        "$NF" bench --kernel fmm --dist "$dist" --dim 3 --n 4194304 --level auto --order 14 --reps 3 --warmup 1 \
          --output "$out"
      done
      ;;
    scaling)
      out="$RESULTS/fmm-scaling/$device.csv"
      fresh "$out"
      "$NF" experiment experiments/fmm-scaling.ini --results-dir "$RESULTS"
      "$NF" bench --kernel allpairs-tiled --dist uniform,plummer --dim 3 --n 65536,262144,1048576 --level 2 --reps 5 \
        --output "$out"
      ;;
    near)
      out="$RESULTS/fmm-near/$device.csv"
      fresh "$out"
      for near in n3-rotate bpb-lb bpb ppt; do
        "$NF" bench --kernel fmm --near "$near" --dist uniform --dim 3 --n 16777216 --level 6 --order 8 --reps 5 --output "$out"
        "$NF" bench --kernel fmm --near "$near" --dist plummer --dim 3 --n 16777216 --level 7 --order 8 --reps 5 --output "$out"
      done
      ;;
    accuracy)
      fresh "$RESULTS/fmm-accuracy/$device.csv"
      "$NF" experiment experiments/fmm-accuracy.ini --results-dir "$RESULTS"
      ;;
    adaptive)
      out="$RESULTS/fmm-adaptive/$device.csv"
      fresh "$out"
      for size in 128 192 256 320; do
        "$NF" bench --kernel fmm-adaptive --dist plummer --dim 3 --n 16777216 --level auto --leaf-size "$size" \
          --order 6,8,10 --reps 5 --output "$out"
      done
      # the automatic leaf size at those orders, and the defaults (no --order: the order for 1e-4)
      "$NF" bench --kernel fmm-adaptive --dist plummer --dim 3 --n 16777216 --level auto --order 6,8,10,0 --reps 5 \
        --output "$out"
      "$NF" bench --kernel fmm-adaptive --dist uniform --dim 3 --n 16777216 --level auto --leaf-size 128 --order 5,8 \
        --reps 5 --output "$out"
      ;;
    adaptive-leaf)
      out="$RESULTS/fmm-adaptive-leaf/$device.csv"
      fresh "$out"
      leaf_rows "$out" plummer 3 16777216 6,8,10 auto 128 192 256 320 384 512 768
      leaf_rows "$out" plummer 3 16777216 12 256 384 512 768  # smaller leaves: p = 12 is slow there
      leaf_rows "$out" uniform 3 16777216 5,8,10 auto 64 128 192 256 384 512
      leaf_rows "$out" clusters 3 4194304 8,12 auto 64 128 256 384 512
      leaf_rows "$out" clusters 2 4194304 8,12 auto 32 64 128 192 256 384 512
      leaf_rows "$out" uniform 2 4194304 8,12 auto 32 64 128 192 256 384 512
      ;;
    adaptive-leaf-high)
      out="$RESULTS/fmm-adaptive-leaf-high/$device.csv"
      fresh "$out"
      for n in 1048576 4194304 16777216; do leaf_rows "$out" plummer 3 "$n" 10,11,12 auto 256 288 320 352 393 448 508; done
      leaf_rows "$out" shell 3 4194304 10,11,12 auto 256 320 393 448 508
      leaf_rows "$out" uniform 3 16777216 10,11,12 auto 256 320 393 448 508
      ;;
    adaptive-leaf-check)
      out="$RESULTS/fmm-adaptive-leaf-high/$device-check.csv"
      fresh "$out"
      for n in 1048576 4194304 16777216; do leaf_rows "$out" plummer 3 "$n" 11,12 auto; done
      leaf_rows "$out" shell 3 4194304 11,12 auto
      leaf_rows "$out" uniform 3 16777216 11,12 auto
      leaf_rows "$out" clusters 3 4194304 12 auto 393 508
      leaf_rows "$out" plummer 3 4194304 14 auto 512 768
      ;;
    adaptive-leaf-tensor)
      out="$RESULTS/fmm-adaptive-leaf-high/$device-tensor.csv"
      fresh "$out"
      leaf_rows "$out" plummer 3 4194304 13,14,15,16 auto 320 393 448 512 576 654
      leaf_rows "$out" plummer 3 16777216 13,14,15,16 auto 393 448 512 576 654
      leaf_rows "$out" shell 3 4194304 13,14,15,16 auto 393 448 512 654
      ;;
    adaptive-leaf-tensor-wide)
      out="$RESULTS/fmm-adaptive-leaf-high/$device-tensor-wide.csv"
      fresh "$out"
      leaf_rows "$out" uniform 3 16777216 13,14,15,16 auto 393 448 512 576 654 768
      leaf_rows "$out" plummer 3 1048576 13,14,15,16 auto 393 448 512 576 654 768
      ;;
    adaptive-leaf-tensor-check)
      out="$RESULTS/fmm-adaptive-leaf-high/$device-tensor-check.csv"
      fresh "$out"
      leaf_rows "$out" plummer 3 4194304 13,14,15,16 auto
      leaf_rows "$out" plummer 3 16777216 13,14,15,16 auto
      leaf_rows "$out" shell 3 4194304 13,14,15,16 auto
      ;;
    adaptive-accuracy)
      out="$RESULTS/fmm-adaptive-accuracy/$device.csv"
      fresh "$out"
      for size in 128 192 256 320; do
        "$NF" validate --kernel fmm-adaptive --dist plummer --dim 3 --n 16777216 --level auto --leaf-size "$size" \
          --order 6,8,10 --sample 1000 --output "$out" || true  # a row above its tolerance is still a row
      done
      "$NF" validate --kernel fmm-adaptive --dist plummer --dim 3 --n 16777216 --level auto --order 6,8,10,0 \
        --sample 1000 --output "$out" || true
      ;;
    slices)
      # M2L's sibling-group kernel in slices of its row quads (farfield/m2l_gpu.h) against the
      # farfield::m2l fallback those orders ran before (NEARFIELD_M2L=direct): fmm on 3D uniform 2^22
      # at level 5, float p = 14 and double p = 12; fmm-adaptive on galaxies 2^22 at leaf size 64 (a
      # tree of 12 levels), p = 14 -> RESULTS/fmm-m2l-slices/<device>.csv and <device>-direct.csv (the
      # group kernel forced: the tensor cores run float p = 14 by default since 53abe15)
      for variant in group direct; do
        out="$RESULTS/fmm-m2l-slices/$device.csv"
        [ "$variant" = direct ] && out="$RESULTS/fmm-m2l-slices/$device-direct.csv"
        fresh "$out"
        NEARFIELD_M2L=$variant "$NF" bench --kernel fmm --dist uniform --dim 3 --n 4194304 --level 5 --order 14 \
          --reps 3 --output "$out"
        NEARFIELD_M2L=$variant "$NF" bench --kernel fmm --dist uniform --dim 3 --n 4194304 --level 5 --order 12 \
          --precision double --reps 3 --output "$out"
        NEARFIELD_M2L=$variant "$NF" bench --kernel fmm-adaptive --dist galaxies --dim 3 --n 4194304 --level auto \
          --leaf-size 64 --order 14 --reps 3 --output "$out"
      done
      # Many slices (farfield::m2l_plan::kMostSlices): 3D uniform 2^22 at level 5, float p = 17 (10
      # slices) and double p = 13 (5), the sibling-group kernel (forced: NEARFIELD_M2L=group) against
      # the older kernel, two alternating rounds -> <device>-many.csv, <device>-many-direct.csv
      for round in 1 2; do
        for variant in group direct; do
          out="$RESULTS/fmm-m2l-slices/$device-many.csv"
          [ "$variant" = direct ] && out="$RESULTS/fmm-m2l-slices/$device-many-direct.csv"
          [ "$round" = 1 ] && fresh "$out"
          NEARFIELD_M2L=$variant "$NF" bench --kernel fmm --dist uniform --dim 3 --n 4194304 --seed 1 --level 5 \
            --order 17 --reps 3 --warmup 1 --output "$out"
          NEARFIELD_M2L=$variant "$NF" bench --kernel fmm --dist uniform --dim 3 --n 4194304 --seed 1 --level 5 \
            --order 13 --precision double --reps 3 --warmup 1 --output "$out"
        done
      done
      ;;
    sparse)
      # The sparse factor at large N (farfield/order.h: sparse_factor; the CPU's rows at N = 100 to
      # 131072: scripts/fmm-sparse.sh): fmm in double on 3D uniform 2^20 at levels 7 and 8 (half and a
      # sixteenth of a particle a box), orders 8 and 10, on a sample of 1000 targets
      out="$RESULTS/fmm-sparse/$device.csv"
      fresh "$out"
      "$NF" validate --kernel fmm --dist uniform --dim 3 --n 1048576 --seed 1 --level 7,8 --precision double \
        --order 8,10 --sample 1000 --output "$out" || true  # rows above tolerance stay
      ;;
    order-search)
      out="$RESULTS/fmm-order-search/$device.csv" val="$RESULTS/fmm-order-search/$device-validate.csv"
      fresh "$out"
      fresh "$val"
      for input in "fmm-adaptive plummer 16777216" "fmm uniform 16777216" "fmm-adaptive shell 4194304" \
                   "fmm-adaptive plummer 1048576"; do
        read -r kernel dist n <<< "$input"
        "$NF" bench --kernel "$kernel" --dist "$dist" --dim 3 --n "$n" --level auto --order-sample 4096 --reps 5 \
          --output "$out"
        "$NF" validate --kernel "$kernel" --dist "$dist" --dim 3 --n "$n" --level auto --order-sample 4096 \
          --sample 1000 --output "$val" || true  # a row above its tolerance is still a row
      done
      # Plummer 2^24 again with four times the targets (half the standard error: p = 10 erred 9.5e-5)
      "$NF" bench --kernel fmm-adaptive --dist plummer --dim 3 --n 16777216 --level auto --order-sample 16384 --reps 5 \
        --output "$out"
      "$NF" validate --kernel fmm-adaptive --dist plummer --dim 3 --n 16777216 --level auto --order-sample 16384 \
        --sample 1000 --output "$val" || true
      # Plummer 2^20 with every particle a target (M >= N: the exact error, no sampling margin; p = 10
      # erred 9.5e-5 there), and validated against the whole float64 all-pairs sum
      "$NF" bench --kernel fmm-adaptive --dist plummer --dim 3 --n 1048576 --level auto --order-sample 1048576 --reps 5 \
        --output "$out"
      "$NF" validate --kernel fmm-adaptive --dist plummer --dim 3 --n 1048576 --level auto --order-sample 1048576 \
        --output "$val" || true
      ;;
    depth-error)
      # The error against the depth in 3D (farfield/order.h: kAdaptiveMargin3):
      # fmm-adaptive in double (the truncation alone) on eight 3D inputs of 2^22 (2^21 for the lattice)
      # at the leaf size 285 (the automatic size near p = 10) and, where the trees go deeper or the
      # error is largest, 64; orders 6 to 12 on a sample of 1000 targets (core, 99% of the points in
      # a cube of side 1e-4, erred 1e-11 to 1e-13 at these orders and is left out); float at p = 10
      # to 12 on Plummer and corners of 2^24; fmm on its uniform tree at levels 7 to 9 on Plummer and
      # clusters; the shell (the largest ratio) deeper, at leaf sizes 16 and 32 and at 2^24; orders 13,
      # 14 and 16 on the three inputs of the largest ratios -> RESULTS/fmm-depth-error/<device>.csv
      out="$RESULTS/fmm-depth-error/$device.csv"
      fresh "$out"
      for input in "plummer 4194304 285 64" "clusters 4194304 285" "corners 4194304 285 64" "shell 4194304 285 64" \
                   "mixed 4194304 285" "uniform 4194304 285" "galaxies 4194304 285 64" "lattice 2097152 285 64"; do
        read -r dist n sizes <<< "$input"
        for size in $sizes; do
          "$NF" validate --kernel fmm-adaptive --dist "$dist" --dim 3 --n "$n" --level auto --leaf-size "$size" \
            --precision double --order 6,7,8,9,10,11,12 --sample 1000 --output "$out" || true  # rows above tolerance stay
        done
      done
      for dist in plummer corners; do
        "$NF" validate --kernel fmm-adaptive --dist "$dist" --dim 3 --n 16777216 --level auto --leaf-size 285 \
          --precision float --order 10,11,12 --sample 1000 --output "$out" || true
      done
      "$NF" validate --kernel fmm --dist plummer,clusters --dim 3 --n 4194304 --level 7,8,9 --precision double \
        --order 6,8,10,12 --sample 1000 --output "$out" || true
      for size in 16 32; do
        "$NF" validate --kernel fmm-adaptive --dist shell --dim 3 --n 4194304 --level auto --leaf-size "$size" \
          --precision double --order 6,8,10,11,12 --sample 1000 --output "$out" || true
      done
      "$NF" validate --kernel fmm-adaptive --dist shell --dim 3 --n 16777216 --level auto --leaf-size 285 \
        --precision float --order 10,11,12 --sample 1000 --output "$out" || true
      for dist in shell galaxies plummer; do
        "$NF" validate --kernel fmm-adaptive --dist "$dist" --dim 3 --n 4194304 --level auto --leaf-size 64 \
          --precision double --order 13,14,16 --sample 1000 --output "$out" || true
      done
      ;;
    *) echo "unknown section $s (stages levels levels-p12 scaling near accuracy adaptive adaptive-leaf adaptive-accuracy depth-error levels-2d)"; exit 2 ;;
  esac
done
echo "=== $(date +%T) done"
