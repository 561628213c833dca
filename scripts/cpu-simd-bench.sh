#!/usr/bin/env bash
# The CPU baseline of issue 19 on a many-core machine (the 16-core GPU host): cpu-simd,
# cpu-simd-omp and cpu-simd-omp-n3 against cpu-serial, cpu-omp and cpu-omp-n3, with the OpenMP
# kernels at 1, 2, 4, 8 and 16 threads (OMP_NUM_THREADS and --threads; threads bound to cores),
# 2D and 3D float and 2D double, uniform-exact boxes of 64 (docs/design.md §3, §7). Also cpu-simd
# on one core with AVX2 forced against the machine's best instruction set, cpu-simd at 8 and 512
# per box, and a clustered input (3D Plummer) at 1 and the most threads. Rates are bench's interactions/s (useful directed pairs per second of the median time;
# a Newton-3 pair counts twice). About 3 minutes on 16 cores (2 min 50 s with "1 2" on the 2-core
# development machine; most of it in cpu-serial, cpu-omp and cpu-omp-n3 at one thread).
# Writes a compact table to stdout and $OUT/cpu-simd-bench.txt, bench's rows to
# $OUT/cpu-simd-bench.csv (OUT defaults to ./cpu-simd-bench-out).
# Usage: scripts/cpu-simd-bench.sh BIN_DIR|PATH_TO_NEARFIELD [THREAD_COUNTS]   (default "1 2 4 8 16")
set -uo pipefail
NF="${1:-build/bin/nearfield}"
[ -d "$NF" ] && NF="$NF/nearfield"
BIN="$(dirname "$NF")"
if [ -d "$BIN/lib" ]; then export LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}"; fi
THREADS="${2:-1 2 4 8 16}"
OUT="${OUT:-$PWD/cpu-simd-bench-out}"
mkdir -p "$OUT"
TXT="$OUT/cpu-simd-bench.txt"
CSV="$OUT/cpu-simd-bench.csv"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export OMP_PROC_BIND=close OMP_PLACES=cores
: >"$TXT"
log() { tee -a "$TXT"; }

{
  echo "# cpu-simd baseline, $(date -u +%Y-%m-%dT%H:%MZ), $(hostname)"
  "$NF" --version
  grep -m1 'model name' /proc/cpuinfo
  echo "cores: $(nproc); OMP_PROC_BIND=$OMP_PROC_BIND OMP_PLACES=$OMP_PLACES"
} | log

# The inputs, generated once (2D level 7 and 3D level 4 at 64 per box; 2D at 8 and 512 per box).
gen() { "$NF" generate --dist uniform-exact --dim "$1" --level "$2" --ppb "$3" --seed 1 --output "$TMP/$4.bin" >/dev/null; }
gen 2 7 64 d2p64 && gen 3 4 64 d3p64 && gen 2 8 8 d2p8 && gen 2 4 512 d2p512 &&
  "$NF" generate --dist plummer --dim 3 --n 200000 --seed 1 --output "$TMP/p3.bin" >/dev/null ||
  { echo "generate failed" >&2; exit 1; }

printf '%-6s %-6s %-16s %-7s %-7s %10s %10s %10s %12s %12s\n' input prec kernel threads simd median_ms min_ms max_ms inter/s per_thread | log
# bench INPUT LEVEL PRECISION KERNEL THREADS [SIMD_TARGET]: one row of the table.
bench() {
  local input=$1 level=$2 prec=$3 kernel=$4 threads=$5 simd=${6:-} reps=5 warmup=1
  case "$kernel" in  # the scalar kernels take seconds a run here: fewer runs
    cpu-serial) reps=3; warmup=0 ;;
    cpu-omp|cpu-omp-n3) reps=3 ;;
  esac
  local row
  row=$(NEARFIELD_SIMD="$simd" OMP_NUM_THREADS="$threads" timeout 120 "$NF" bench --input "$TMP/$input.bin" --level "$level" \
          --kernel "$kernel" --precision "$prec" --threads "$threads" --reps "$reps" --warmup "$warmup" --output "$CSV" 2>/dev/null |
        awk -v k="$kernel" '$1 == k {print $(NF-6), $(NF-5), $(NF-4), $(NF-3)}')
  [ -n "$row" ] || row="- - - -"
  set -- $row
  local per="-"
  [ "$4" != "-" ] && per=$(awk -v r="$4" -v t="$threads" 'BEGIN {printf "%.3e", r / t}')
  printf '%-6s %-6s %-16s %-7s %-7s %10s %10s %10s %12s %12s\n' "$input" "$prec" "$kernel" "$threads" "${simd:-best}" \
    "$1" "$2" "$3" "$4" "$per" | log
}

for point in "d2p64 7 float" "d3p64 4 float" "d2p64 7 double"; do
  set -- $point
  input=$1 level=$2 prec=$3
  bench "$input" "$level" "$prec" cpu-serial 1
  bench "$input" "$level" "$prec" cpu-simd 1
  [ "$prec" = float ] && bench "$input" "$level" "$prec" cpu-simd 1 AVX2
  for t in $THREADS; do
    for k in cpu-simd-omp cpu-simd-omp-n3; do bench "$input" "$level" "$prec" "$k" "$t"; done
  done
  # The scalar OpenMP kernels: every thread count on the first point, 1 and the most on the others.
  last=${THREADS##* }
  counts="1 $last"
  [ "$input $prec" = "d2p64 float" ] && counts="$THREADS"
  for t in $counts; do
    for k in cpu-omp cpu-omp-n3; do bench "$input" "$level" "$prec" "$k" "$t"; done
  done
done
bench d2p8 8 float cpu-simd 1
bench d2p512 4 float cpu-simd 1
# Clustered: a Plummer sphere whose central boxes hold thousands (cpu-serial: 20 s a run, left out).
last=${THREADS##* }
bench p3 5 float cpu-simd 1
for t in 1 "$last"; do
  for k in cpu-simd-omp cpu-simd-omp-n3; do bench p3 5 float "$k" "$t"; done
done
bench p3 5 float cpu-omp "$last"
echo "inputs: d2p64 = 2D level 7, 64 per box (N = 1048576); d3p64 = 3D level 4, 64 per box (N = 262144);" \
  "d2p8 = 2D level 8, 8 per box; d2p512 = 2D level 4, 512 per box; uniform-exact, seed 1;" \
  "p3 = 3D Plummer N = 200000 at level 5; softening 1e-4" | log
echo "times: one force evaluation, median [min, max] of 5 runs after one warm-up (cpu-omp, cpu-omp-n3: 3; cpu-serial: 3," \
  "no warm-up); inter/s = bench's" \
  "interactions/s (useful directed pairs / median); per_thread = inter/s / threads" | log
