#pragma once
//! The checks a sweep passes before any work starts, so a request that cannot finish is refused
//! at once instead of after minutes of CPU kernels.

#include "cli/sweep.h"

namespace nf::cli {

//! Refuses (UsageError/InputError) contradictory input options, missing or negative levels, GPU
//! kernels (or --tree) without a usable GPU, and an output path whose folder does not exist.
void check_sweep(const SweepConfig& c);

}  // namespace nf::cli
