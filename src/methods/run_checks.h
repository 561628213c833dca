#pragma once
//! Refusals before any work (docs/design.md §6, "Check before work"), shared by the commands and
//! the Python module: a GPU kernel on a machine without a usable GPU, a run whose memory does not
//! fit.

#include <cstdint>
#include <string>
#include <vector>

#include "methods/registry.h"

namespace nf {

//! Refuses, before any work, a kernel list naming GPU kernels on a machine without a usable GPU
//! (UsageError naming them and the reason).
void check_kernels_runnable(const std::vector<std::string>& kernels);

//! Refuses (UsageError), before any work, a run of kernel k at setup s on n particles in `dim`
//! dimensions whose memory estimate does not fit (methods/memory_estimate.h, docs/design.md §6).
//! `input_bytes`: what the particles still to be made or read will take (0 when they are in
//! memory already); `reference`: validate's float64 reference too; `gpus`: the GPUs it is spread
//! over. The OpenMP team is the current one.
void check_run_memory(const KernelInfo& k, const MethodSetup& s, int dim, std::uint64_t n, double input_bytes,
                      bool reference = false, int gpus = 1);

}  // namespace nf
