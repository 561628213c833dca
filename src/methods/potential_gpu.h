#pragma once
//! The potential energy -sum_{i<j} m_i m_j / sqrt(r^2 + eps^2) on the GPU (a simulation's
//! diagnostics for device methods; the CPU version is potential.h). Drivers; the kernels are in
//! potential_gpu.cu.

#include <cstddef>

#include "core/body.h"
#include "core/gpu_runtime.h"
#include "tree/tree_gpu.h"

namespace nf::potential_gpu {

//! Over every pair of the n bodies. Pair terms in T, summed in T over tiles of 256 sources, tile
//! sums in float64; each block takes two rows of the triangle of tile pairs (rows b and last - b:
//! equal work), per-block sums are added in block order on the host, so the result is
//! deterministic. `scratch` holds the per-block sums.
template <int D, class T>
double allpairs_potential(const Body<T>* bodies, std::size_t n, T eps2, gpu::Workspace& scratch);

//! The same sum over the near field of tree t (the same or adjacent boxes): `sorted` are the
//! bodies in the tree's order; one thread per particle walks its full near field in float64
//! sums and halves the total (each pair is seen from both ends).
template <int D, class T>
double near_field_potential(const Body<T>* sorted, const DeviceTree& t, T eps2, gpu::Workspace& scratch);

}  // namespace nf::potential_gpu
