#pragma once
//! cpu-allpairs: the float64 O(N^2) reference. Inputs are bodies as a kernel saw them (possibly
//! rounded to float32 first); the arithmetic and accumulation are float64.

#include <cstddef>
#include <functional>
#include <vector>

#include "allpairs/near_mask.h"
#include "core/body.h"

namespace nf {

//! Adds into `acc` (dim per particle, input order) the accelerations of all pairs, or with `cells`
//! only of pairs in adjacent or equal cells. The i = j term is skipped. OpenMP over targets; each
//! target sums its sources in index order, so the result does not depend on the thread count.
//! With `progress`, the targets go in blocks (the same sums) and progress(fraction done) is called
//! after each block, outside the parallel region.
void cpu_allpairs(int dim, const std::vector<Body<double>>& bodies, const std::vector<Cell>* cells, double softening,
                  double* acc, const std::function<void(double)>& progress = {});

//! Adds into `acc` (dim per listed target, in list order) what cpu_allpairs adds for the particles
//! `targets` (indices into `bodies`, each below its size): the same sum over every other body, or
//! with `cells` over the near ones, in the same order, so each value is the full reference's bit
//! for bit. O(targets x N): validation on a sample of targets (docs/design.md §4). OpenMP over
//! the targets.
void cpu_allpairs_targets(int dim, const std::vector<Body<double>>& bodies, const std::vector<Cell>* cells,
                          double softening, const std::vector<std::size_t>& targets, double* acc);

//! Adds into `acc` the accelerations of `targets` from `sources`, every pair (a source at a
//! target's own position adds exactly 0): a simulation's sub-sampled sources. Same summation order
//! and OpenMP split as above.
void cpu_allpairs_sources(int dim, const std::vector<Body<double>>& targets, const std::vector<Body<double>>& sources,
                          double softening, double* acc);

}  // namespace nf
