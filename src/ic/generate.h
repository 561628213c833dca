#pragma once
//! Particle generators for `nearfield generate`, tests and benchmarks. All are seeded and
//! reproducible on every platform.
//!
//! Masses: "equal" gives every particle 1/N (total mass 1); "random" draws each uniformly from
//! [0.5, 1.5)/N, so that tests see distinct masses.

#include <cstdint>
#include <string>

#include "core/particles.h"

namespace nf {

//! What to generate. Either n, or level and ppb (N = 4^level ppb in 2D, 8^level ppb in 3D).
struct GenerateOptions {
  std::string dist = "uniform";  //!< uniform | uniform-fast | uniform-exact | plummer | clusters | mixed | lattice | shell | core | corners | galaxies
  int dim = 3;
  std::int64_t n = -1;
  int level = -1;
  std::int64_t ppb = -1;
  std::uint64_t seed = 1;
  std::string mass = "equal";  //!< equal | random
  int clusters = 4;            //!< clusters: number of Plummer spheres
  double jitter = 0.0;         //!< lattice: uniform displacement, as a fraction of the spacing
};

//! Names accepted by GenerateOptions::dist.
const char* generator_names();

//! Makes the particles; throws UsageError on inconsistent options.
//! - uniform: N points uniform in [0,1)^D.
//! - uniform-fast: the same distribution made in parallel (OpenMP) from a counter-based stream
//!   (counter_uniform in random.h: coordinate a of particle i is draw i*D + a of --seed's stream),
//!   so the output does not depend on the thread count; other numbers than `uniform`'s. For
//!   inputs of 10^8 to 10^9 particles (the multi-GPU runs).
//! - uniform-exact: exactly ppb points in every box of `level` over [0,1]^D (the paper's Table III
//!   input); one point sits at the origin and one at (1,..,1) so that the default domain is exactly
//!   [0,1]^D, and the rows are shuffled (input order is not box order).
//! - plummer: Plummer sphere by Aarseth-Henon-Wielen (1974) sampling in Henon units (G = M = 1,
//!   scale radius 3 pi / 16), radii beyond 10 scale radii rejected, with velocities; 2D keeps the
//!   x, y projection.
//! - clusters: `clusters` Plummer spheres of scale radius 0.02 centred uniformly in [0.1,0.9]^D,
//!   the N points shared evenly (particle i in cluster i mod C); boxes with thousands of points
//!   next to empty ones. C above N is refused, except the default 4 (a 1- to 3-particle input).
//! - mixed: scales no single level suits (the per-kernel --level auto's test input): 40% in a
//!   Plummer sphere of scale radius 0.1 at (0.35, 0.4, 0.45), 40% in one of scale 0.005 at
//!   (0.7, 0.65, 0.6), 20% uniform over [0,1)^D at rest.
//! - lattice: s^D points at i/s (s = N^(1/D) must be an integer), each displaced uniformly by up
//!   to jitter/2 spacings per axis.
//! Extreme layouts for validation (docs/design.md §11):
//! - shell: a thin spherical shell (a ring in 2D) of radius 0.5 about (0.5, ...), 0.1% thick.
//! - core: 99% of the points in a cube of side 1e-4 at (0.3, 0.6, 0.45), one point in a hundred
//!   uniform over [0,1)^D: one box holds almost everything.
//! - corners: clusters of side 1e-3 at the 2^D corners of [0,1]^D (the first 2^D points exactly on
//!   them): every box between them is empty.
//! - galaxies: two disk + bulge + halo galaxies on a collision orbit (galaxies.h), 3D only, masses
//!   per component (the --mass option must stay "equal").
Particles generate(const GenerateOptions& opt);
//! The checks generate() makes before it makes anything (dimension, mass, N, the distribution's
//! own conditions: a lattice's N = s^d, galaxies' 3D and N >= 10, at most N clusters, a known
//! name), for a sweep to run on every point before its first (UsageError).
void check_generate_options(const GenerateOptions& opt);

//! How many particles `generate(opt)` makes (its refusals of bad counts included), without
//! making them.
std::int64_t generated_count(const GenerateOptions& opt);
//! Peak bytes `generate(opt)` holds: float64 positions and masses, velocities for the
//! distributions that have them (plummer, clusters, galaxies), twice that for uniform-exact (its
//! shuffle copies the particles). The memory check before work counts it (docs/design.md §6).
double generated_bytes(const GenerateOptions& opt);

}  // namespace nf
