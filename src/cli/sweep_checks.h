#pragma once
//! The checks a sweep passes before any work starts, so a request that cannot finish is refused
//! at once instead of after minutes of CPU kernels.

#include <cstdint>
#include <vector>

#include "cli/sweep.h"

namespace nf::cli {

//! Refuses (UsageError/InputError) contradictory input options, missing or negative levels, GPU
//! kernels (or --tree) without a usable GPU, an output that cannot be written, and a generated
//! point whose memory estimate (with validate's float64 reference when `validation`) does not fit
//! (docs/design.md §6). A file's points are checked once it is read, before each measurement.
void check_sweep(const SweepConfig& c, bool validation = false);

//! Refuses an --accuracy that a full method of the sweep, its order from the accuracy, cannot reach
//! at one of the listed levels in `dim` dimensions (the error model's best grows with the level):
//! checked for every level before the first point (generated inputs in check_sweep, a file's once
//! it is read), not when the sweep reaches that level. `particles`: the input's count (0: not
//! known yet; generated points are checked again with their own counts, the sparse factor);
//! `levels`: those to check (empty: every listed one).
void check_sweep_accuracy(const SweepConfig& c, int dim, std::uint64_t particles, std::vector<int> levels = {});

}  // namespace nf::cli
