#!/usr/bin/env bash
# Shared set-up for the README's commands: installs missing Debian packages, then configures and
# builds nearfield in ./build (CUDA kernels too when nvcc is found, CPU-only otherwise).
# Usage: scripts/setup.sh   (or source it and call nf_setup)
set -euo pipefail

# openmpi-bin and libopenmpi-dev: nearfield-mpi and its tests (docs/design.md §15), which CI runs.
# python3-dev, pybind11-dev, python3-numpy, python3-pytest: the Python module and its tests
# (docs/design.md §17, "From Python"; pybind11-dev does not pull in the Python headers itself).
# libhwy-dev: Google Highway's headers for cpu-simd (docs/design.md §3; the binary does not link it).
NF_PACKAGES=(cmake make g++ git libeigen3-dev libboost-program-options-dev libfccp-dev doctest-dev libpng-dev python3 python3-matplotlib
             openmpi-bin libopenmpi-dev python3-dev pybind11-dev python3-numpy python3-pytest libhwy-dev)
# The sanitizer build and the fuzz targets (docs/design.md §9): clang, its runtimes (libFuzzer,
# ASan, UBSan: Debian's libclang-rt-dev) and clang's OpenMP (libomp-dev).
NF_CHECK_PACKAGES=(clang libclang-rt-dev libomp-dev)

# Installs the packages named (default: NF_PACKAGES) that are missing.
nf_install_deps() {
  local missing=() wanted=("$@")
  [ ${#wanted[@]} -gt 0 ] || wanted=("${NF_PACKAGES[@]}")
  for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then return 0; fi
  echo "nearfield: installing ${missing[*]}" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "nearfield: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

nf_build() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  # The CUDA toolkit is not a Debian package here; use it when it is installed in the usual place.
  if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
  # CMake's own output goes to a log; what the build found (CUDA and its architectures, NCCL, MPI,
  # OpenMP, libpng, the Python module; each feature that is off with its reason) is the one block
  # printed here.
  mkdir -p "$root/build"
  local log="$root/build/configure.log"
  if ! cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release ${NEARFIELD_CMAKE_ARGS:-} >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "nearfield: configuring failed (the whole output: $log)" >&2
    exit 1
  fi
  sed -n 's/^-- nearfield \{0,1\}//p' "$log" | sed 's/^build summary:/nearfield build (configure log: build\/configure.log):/' >&2
  cmake --build "$root/build" -j "$(nproc)"
}

# The sanitizer build in ./build-asan (docs/design.md §9): clang with AddressSanitizer and
# UndefinedBehaviorSanitizer, CPU only, with the fuzz targets; builds the targets named (default all).
nf_build_asan() {
  local root dir
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  dir="$root/build-asan"
  nf_install_deps "${NF_PACKAGES[@]}" "${NF_CHECK_PACKAGES[@]}"
  mkdir -p "$dir"
  if ! cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
      -DNEARFIELD_ENABLE_CUDA=OFF -DNEARFIELD_FUZZ=ON >"$dir/configure.log" 2>&1; then
    tail -n 40 "$dir/configure.log" >&2
    echo "nearfield: configuring the sanitizer build failed (the whole output: $dir/configure.log)" >&2
    exit 1
  fi
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
}

nf_setup() {
  nf_install_deps
  nf_build
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then nf_setup; fi
