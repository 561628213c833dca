#pragma once
//! cpu-allpairs: the float64 O(N^2) reference. Inputs are bodies as a kernel saw them (possibly
//! rounded to float32 first); the arithmetic and accumulation are float64.

#include <vector>

#include "allpairs/near_mask.h"
#include "core/body.h"

namespace nf {

//! Adds into `acc` (dim per particle, input order) the accelerations of all pairs, or with `cells`
//! only of pairs in adjacent or equal cells. The i = j term is skipped. OpenMP over targets; each
//! target sums its sources in index order, so the result does not depend on the thread count.
void cpu_allpairs(int dim, const std::vector<Body<double>>& bodies, const std::vector<Cell>* cells, double softening,
                  double* acc);

//! Adds into `acc` the accelerations of `targets` from `sources`, every pair (a source at a
//! target's own position adds exactly 0): a simulation's sub-sampled sources. Same summation order
//! and OpenMP split as above.
void cpu_allpairs_sources(int dim, const std::vector<Body<double>>& targets, const std::vector<Body<double>>& sources,
                          double softening, double* acc);

}  // namespace nf
