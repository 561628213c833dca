#pragma once
//! Potential energy of softened gravity on the CPU, in float64: the diagnostics of a simulation
//! (energy.csv) over the same pairs its kernel computes.
//!
//!   U = -sum_{i<j} m_i m_j / sqrt(|x_i - x_j|^2 + eps^2)   (G = 1; a pair at zero distance
//!   without softening contributes 0, as it does to the force)

#include "tree/domain.h"
#include "core/particles.h"

namespace nf {

//! U over every pair. OpenMP over i; the per-i sums are added in index order, so the result does
//! not depend on the thread count.
double allpairs_potential(const Particles& p, double softening);

//! U over the near-field pairs at `level` over `domain` (the same or adjacent boxes,
//! docs/design.md §1), through the compact tree of p. Deterministic like allpairs_potential.
double near_field_potential(const Particles& p, int level, const Domain& domain, double softening);

}  // namespace nf
