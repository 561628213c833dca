#pragma once
//! The checks a sweep passes before any work starts, so a request that cannot finish is refused
//! at once instead of after minutes of CPU kernels.

#include "cli/sweep.h"

namespace nf::cli {

//! Refuses (UsageError/InputError) contradictory input options, missing or negative levels, GPU
//! kernels (or --tree) without a usable GPU, an output that cannot be written, and a generated
//! point whose memory estimate (with validate's float64 reference when `validation`) does not fit
//! (docs/design.md §6). A file's points are checked once it is read, before each measurement.
void check_sweep(const SweepConfig& c, bool validation = false);

}  // namespace nf::cli
