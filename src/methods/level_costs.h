#pragma once
//! The GPU near-field kernels' own costs for `--level auto` (docs/design.md §11, "A level per
//! kernel"): seconds per near-field pair, per box and per link, fitted on the H100 in float to the
//! depth and non-uniform results by scripts/fit-level-costs.py. A kernel with a model gets the
//! level that model says is fastest, within its own depth limit; others get the generic rule
//! (tree/level_rule.h).

#include <string>

#include "tree/level_rule.h"

namespace nf {

//! The model of `kernel` in `dim` dimensions, or null when it has none.
const KernelCostModel* kernel_cost_model(const std::string& kernel, int dim);

}  // namespace nf
