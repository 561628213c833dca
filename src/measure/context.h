#pragma once
//! What a results row records about where and how it was measured.

#include <map>
#include <string>
#include <vector>

namespace nf {

struct KernelInfo;

//! The context columns of every results row, in file order: the GPU (device, compute_capability,
//! sm_clock_mhz, mem_clock_mhz, gpu_memory_gib, cuda_runtime, cuda_driver, cuda_compiler), the
//! host (host_cpu, cpu_clock_mhz, cpu_cores, memory_gib, os, compiler), threads, scale, git_commit
//! and timestamp. Files written before some of them existed stay readable (ResultsFile).
const std::vector<std::string>& context_columns();

//! Context of a row measured by kernel `k`: GPU fields for GPU kernels, `threads` the CPU threads
//! the kernel ran on (1 for single-threaded kernels, the OpenMP team size for OpenMP ones, empty
//! for GPU kernels); `scale` as given ("full", "reduced", or empty outside experiments).
std::map<std::string, std::string> run_context(const KernelInfo& k, const std::string& scale);
//! The `threads` a CPU kernel runs with (OpenMP's team, or 1), as its rows record them.
int kernel_threads(const KernelInfo& k);
//! Context of a row measured on the GPU (`gpu_row`) or by one CPU thread (tree builds).
std::map<std::string, std::string> run_context(bool gpu_row, const std::string& scale);

//! The CPU model name ("unknown cpu" when /proc/cpuinfo does not say).
std::string cpu_model();

//! File-name form of the machine the results come from: the GPU's name when there is one
//! ("nvidia-h100-80gb-hbm3"), else "cpu-" and the CPU model.
std::string device_slug();

//! Local time as YYYY-MM-DDTHH:MM:SS.
std::string timestamp();

}  // namespace nf
