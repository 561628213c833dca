#pragma once
//! Particle state on the GPU: float64 arrays in input order (one per axis), the form in which the
//! tree builder and the methods read positions, and a simulation keeps velocities and
//! accelerations between steps. Plain C++ (gpu_runtime.h); in a CPU-only build allocating throws.

#include <cstddef>

#include "core/gpu_runtime.h"
#include "core/particles.h"

namespace nf {

//! Positions and masses of N particles on the device (z empty in 2D).
struct DeviceParticles {
  int dim = 2;
  std::size_t n = 0;
  gpu::DeviceBuffer<double> x, y, z, m;
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
