#!/usr/bin/env bash
# Builds the binaries carried to the GPU machine: nearfield and test_gpu for sm_90 only, with
# their device code compressed (-Xfatbin=-compress-all: about 10 MB a binary instead of 28, so two
# builds and the tests fit the 64 MiB that travel; it changes load time, not the kernels), into
# build-device/bin, with this machine's OpenMP runtime beside them in case the GPU machine lacks
# it. Run here, then carry build-device/bin.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
cmake -S "$root" -B "$root/build-device" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90-real \
  "-DCMAKE_CUDA_FLAGS=-Xfatbin=-compress-all" >/dev/null
cmake --build "$root/build-device" -j "$(nproc)" --target nearfield test_gpu
mkdir -p "$root/build-device/bin/lib"
cp -L "$(g++ -print-file-name=libgomp.so.1)" "$root/build-device/bin/lib/"
du -sh "$root/build-device/bin"
