#!/usr/bin/env bash
# Registers, stack and spills of every kernel instance in one CUDA source, from ptxas (nvcc
# -Xptxas -v), on this machine: no GPU needed. A change to a register-bound kernel (M2L's
# sibling-group kernel keeps its accumulators in registers under __launch_bounds__(512), so at most
# 128 a thread) can move its register allocation, and with it its speed, without touching its
# arithmetic: splitting one runtime flag in two took the 3D float p = 10 instance from 119 to 105
# registers and its M2L from about 30.4 to 32.7 ms on the H200 (results/fmm-m2l-probe). Compare this
# table before and after such a change, before spending GPU time on it.
# Usage: scripts/kernel-registers.sh [SOURCE [BUILD_DIR [PATTERN]]]
#   SOURCE     default src/farfield/m2l_gpu.cu
#   BUILD_DIR  a configured CUDA build whose nf_core include flags are used (default build-device)
#   PATTERN    keeps the kernels whose mangled name matches this extended regular expression
#              (default group_kernel)
# Output: one line a kernel instance: registers, stack bytes, spill stores and loads, and the
# instance's template arguments as ptxas names them (ILi3EfLi2ELi1ELi4E: D = 3, float, 2 targets a
# lane, 1 stage, 4 rows a unit).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="${1:-$root/src/farfield/m2l_gpu.cu}"
build="${2:-$root/build-device}"
pattern="${3:-group_kernel}"
nvcc="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
[ -x "$nvcc" ] || { echo "kernel-registers.sh: no nvcc (the CUDA Toolkit)" >&2; exit 2; }
rsp="$build/src/CMakeFiles/nf_core.dir/includes_CUDA.rsp"
[ -f "$rsp" ] || { echo "kernel-registers.sh: $rsp missing: configure a CUDA build first (scripts/build-device.sh)" >&2; exit 2; }
[ -f "$src" ] || { echo "kernel-registers.sh: no source $src" >&2; exit 2; }
out="$(mktemp)"
trap 'rm -f "$out" "$out.o"' EXIT
"$nvcc" -DNF_HAVE_CUDA=1 --options-file "$rsp" -O3 -DNDEBUG --generate-code=arch=compute_90,code=[sm_90] \
  -std=c++17 -Xptxas -v -c "$src" -o "$out.o" > "$out" 2>&1 || { cat "$out" >&2; exit 1; }
# ptxas prints per entry: "Compiling entry function 'NAME'", then a line with the stack frame and
# spills, then "Used N registers".
awk -v pat="$pattern" '
  /Compiling entry function/ { match($0, /'"'"'[^'"'"']+'"'"'/); name = substr($0, RSTART + 1, RLENGTH - 2); keep = name ~ pat; next }
  keep && /stack frame/ { match($0, /[0-9]+ bytes stack frame/); stack = substr($0, RSTART, RLENGTH) + 0
                          match($0, /[0-9]+ bytes spill stores/); st = substr($0, RSTART, RLENGTH) + 0
                          match($0, /[0-9]+ bytes spill loads/); ld = substr($0, RSTART, RLENGTH) + 0; next }
  keep && /Used [0-9]+ registers/ { match($0, /Used [0-9]+ registers/); regs = substr($0, RSTART + 5, RLENGTH - 15) + 0
                                    short = name; sub(/^.*_kernel/, "", short); sub(/EEEv.*$/, "E", short)
                                    printf "%4d registers  stack %4d  spills %4d/%4d  %s\n", regs, stack, st, ld, short; keep = 0 }
' "$out" | sort -k8
