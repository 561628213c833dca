#pragma once
//! Particle state on the GPU: float64 arrays in input order (one per axis), the form in which the
//! tree builder and the methods read positions, and a simulation keeps velocities and
//! accelerations between steps. Plain C++ (gpu_runtime.h); in a CPU-only build allocating throws.

#include <cstddef>

#include "core/gpu_runtime.h"
#include "core/particles.h"

namespace nf {

//! Per-axis minimum and maximum of a set of positions, as order-preserving integers of the
//! doubles (core/ordered_bits.cuh), so that atomics reduce them exactly. Reset: lo all ones, hi 0.
struct PositionBounds {
  unsigned long long lo[3], hi[3];
};

//! Positions and masses of N particles on the device (z empty in 2D).
struct DeviceParticles {
  int dim = 2;
  std::size_t n = 0;
  gpu::DeviceBuffer<double> x, y, z, m;
  //! The bounds of the current positions when `bounds_valid`: the drift that moved them wrote
  //! them too (sim/integrate_gpu.cu), so the next tree build skips its own reduction. Writers of
  //! new positions clear the flag; permutations of the particles keep it.
  gpu::DeviceBuffer<PositionBounds> bounds;
  bool bounds_valid = false;
  DeviceParticles() = default;
  //! Allocates (contents undefined).
  DeviceParticles(int d, std::size_t count) : dim(d), n(count), x(count), y(count), z(d == 3 ? count : 0), m(count) {}
};

//! Copies the particles' positions and masses to the device.
DeviceParticles upload_particles(const Particles& p);
//! The same into `out`, reusing its buffers when they have the size already.
void upload_particles(const Particles& p, DeviceParticles& out);

//! Float64 vectors of N particles on the device (velocities, accelerations), one array per axis
//! (z empty in 2D): the layout of DeviceParticles.
struct DeviceVectors {
  int dim = 2;
  std::size_t n = 0;
  gpu::DeviceBuffer<double> x, y, z;
  DeviceVectors() = default;
  //! Allocates (contents undefined).
  DeviceVectors(int d, std::size_t count) : dim(d), n(count), x(count), y(count), z(d == 3 ? count : 0) {}
};

}  // namespace nf
