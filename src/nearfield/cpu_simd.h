#pragma once
//! cpu-simd, cpu-simd-omp and cpu-simd-omp-n3 (cpu_simd.cc): the CPU near field vectorized with
//! Google Highway, one thread and OpenMP over boxes; the same pairs as cpu-serial (own box and
//! neighbors, compact tree, so any level), 2D/3D, float/double (docs/design.md §3). The instruction
//! set is chosen when the program runs, among those compiled (Highway's targets, best first: AVX3 =
//! AVX-512, AVX2, SSE4, and a portable C++ one, SCALAR or EMU128), so one binary runs on any x86-64.
//! A build without Highway has none of these kernels (the registry says why when one is asked for)
//! and the lists below are empty.

#include <string>
#include <vector>

namespace nf {

//! True when this build has the cpu-simd kernels (Highway found at configure time).
bool simd_kernels_built();
//! The instruction sets the kernels were compiled for, best first (Highway's target names).
std::vector<std::string> simd_targets_compiled();
//! Those of them this CPU (and its operating system) can run, best first.
std::vector<std::string> simd_targets_supported();
//! The one the kernels run now: the best supported, unless use_simd_target or the environment
//! variable NEARFIELD_SIMD (read once, at the first use) chose another.
std::string simd_target();
//! Runs the kernels with target `name` (one of simd_targets_supported(), case-insensitive);
//! "" returns to the best. Throws UsageError for a target not compiled or not supported. For
//! tests and measurements (AVX2 against AVX-512 on one machine); not thread-safe with a running kernel.
void use_simd_target(const std::string& name);

}  // namespace nf
