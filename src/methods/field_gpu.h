#pragma once
//! The device side of the GPU force fields (force_field.h), as plain C++ drivers (field_gpu.cu):
//! float64 particle arrays in, the kernels' bodies out; the kernels' accelerations back into
//! float64 arrays in input order; the potential energy over all pairs or over the near field.

#include <cstddef>
#include <cstdint>

#include "core/body.h"
#include "core/gpu_runtime.h"
#include "tree/tree_gpu.h"

namespace nf {

//! Float64 vectors of N particles on the GPU (velocities, accelerations), input order, one array
//! per axis (z empty in 2D): the layout of DeviceParticles.
struct DeviceVectors {
  int dim = 2;
  std::size_t n = 0;
  gpu::DeviceBuffer<double> x, y, z;
  DeviceVectors() = default;
  //! Allocates (contents undefined).
  DeviceVectors(int d, std::size_t count)
      : dim(d), n(count), x(count), y(count), z(d == 3 ? count : 0) {}
};

namespace field_gpu {

//! out[i] = particle first + i * stride of p, rounded to T, its mass times mass_scale, for i < count
//! (a sub-sample's sources: every k-th particle from an offset, masses times k; stride 1, scale 1:
//! all the bodies in input order).
template <class T>
void pack_bodies(const DeviceParticles& p, std::size_t first, std::size_t stride, std::size_t count, double mass_scale,
                 Body<T>* out);

//! out[order[s]] = acc[s] widened to float64, for s < out.n (order null: out[s] = acc[s]).
template <class T>
void scatter_accelerations(const Acc4<T>* acc, const std::uint32_t* order, DeviceVectors& out);

//! The arrays reorder_state moves a simulation's state through: allocated on first use, then
//! swapped with the state's at every call, so no step allocates.
struct StateSpare {
  DeviceParticles p;
  DeviceVectors v;
  gpu::DeviceBuffer<std::uint32_t> index;
};

//! A simulation's state moved into a tree's order: for every array a of x, y, z, m (p), of the
//! velocities v and of `index`, a'[s] = a[order[s]] (order: sorted position -> current row,
//! DeviceTree::order); also bodies[s] = particle s after the move, rounded to T (what
//! gather_bodies writes). The moved arrays swap places with spare's.
template <class T>
void reorder_state(const std::uint32_t* order, DeviceParticles& p, DeviceVectors& v,
                   gpu::DeviceBuffer<std::uint32_t>& index, StateSpare& spare, Body<T>* bodies);

//! -sum_{i<j} m_i m_j / sqrt(r^2 + eps^2) over every pair of the n bodies. Pair terms in T, summed
//! in T over tiles of 256 sources, tile sums in float64; each block takes two rows of the triangle
//! of tile pairs (rows b and last - b: equal work), per-block sums are added in block order on
//! the host, so the result is deterministic. `scratch` holds the per-block sums.
template <int D, class T>
double allpairs_potential(const Body<T>* bodies, std::size_t n, T eps2, gpu::Workspace& scratch);

//! The same sum over the near field of tree t (the same or adjacent boxes): `sorted` are the
//! bodies in the tree's order; one thread per particle walks its full near field in float64
//! sums and halves the total (each pair is seen from both ends).
template <int D, class T>
double near_field_potential(const Body<T>* sorted, const DeviceTree& t, T eps2, gpu::Workspace& scratch);

}  // namespace field_gpu
}  // namespace nf
