#pragma once
//! What a results row records about where and how it was measured.

#include <map>
#include <string>

namespace nf {

//! Context columns: device, compute_capability, sm_clock_mhz, mem_clock_mhz, cuda_runtime,
//! cuda_driver (GPU fields empty for CPU kernels), host_cpu, threads, git_commit, timestamp.
std::map<std::string, std::string> run_context(bool gpu_kernel);

//! The CPU model name ("unknown cpu" when /proc/cpuinfo does not say).
std::string cpu_model();

//! File-name form of the machine the results come from: the GPU's name when there is one
//! ("nvidia-h100-80gb-hbm3"), else "cpu-" and the CPU model.
std::string device_slug();

//! Local time as YYYY-MM-DDTHH:MM:SS.
std::string timestamp();

}  // namespace nf
