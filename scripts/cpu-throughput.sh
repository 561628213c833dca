#!/usr/bin/env bash
# How much of 16x one core the host's cores deliver (issue 19's thread-scaling goal): lscpu, then
# the one-thread cpu-simd kernel on 3D uniform-exact level 4, 64 a box (the d3p64 input of
# cpu-simd-bench.sh) alone on a core, then 8 and 16 copies of it at once, one a core (taskset), no
# threads and no sharing between them: their medians against the lone run's are the most any
# OpenMP kernel could scale there. Then cpu-simd-omp and cpu-simd-omp-n3 at 1 and 16 threads on a
# larger 3D input (level 5, 64 a box, N = 2097152), twice each. About 60 s on the 16-core host.
# Writes $OUT/lscpu.txt and $OUT/throughput.txt (OUT defaults to ./cpu-throughput-out).
# Usage: scripts/cpu-throughput.sh [BIN_DIR]   (default build/bin)
set -uo pipefail
B="${1:-build/bin}"
NF=$B/nearfield
if [ -d "$B/lib" ]; then export LD_LIBRARY_PATH="$B/lib:${LD_LIBRARY_PATH:-}"; fi
OUT="${OUT:-$PWD/cpu-throughput-out}"
mkdir -p "$OUT"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
lscpu > "$OUT/lscpu.txt" 2>&1
"$NF" generate --dist uniform-exact --dim 3 --level 4 --ppb 64 --seed 1 --output "$T/d3p64.bin" >/dev/null
"$NF" generate --dist uniform-exact --dim 3 --level 5 --ppb 64 --seed 1 --output "$T/d3l5.bin" >/dev/null
one() {
  OMP_NUM_THREADS=1 taskset -c "$1" "$NF" bench --input "$T/d3p64.bin" --level 4 --kernel cpu-simd --reps 20 --warmup 2 \
    2>/dev/null | awk '$1=="cpu-simd"{print $(NF-6)}'
}
{
  echo "alone on core 0: $(one 0)"
  echo "alone on core 7: $(one 7)"
  for copies in 8 16; do
    for i in $(seq 0 $((copies - 1))); do one "$i" > "$T/c$i.txt" & done
    wait
    echo "$copies copies at once, medians: $(for i in $(seq 0 $((copies - 1))); do cat "$T/c$i.txt"; done | tr '\n' ' ')"
  done
  echo "alone on core 0 again: $(one 0)"
  export OMP_PROC_BIND=close OMP_PLACES=cores
  for k in cpu-simd-omp cpu-simd-omp-n3; do
    for t in 1 16 1 16; do
      echo "3D level 5 (2M) $k threads $t: $(OMP_NUM_THREADS=$t "$NF" bench --input "$T/d3l5.bin" --level 5 --kernel $k \
        --threads $t --reps 5 --warmup 1 2>/dev/null | awk -v k=$k '$1==k{print $(NF-6), $(NF-5), $(NF-4)}')"
    done
  done
} 2>&1 | tee "$OUT/throughput.txt"
