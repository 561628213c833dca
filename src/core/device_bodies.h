#pragma once
//! Particles -> bodies and accelerations -> float64 vectors on the device: the device twin of
//! core/bodies.h (drivers; the kernels are in device_bodies.cu).

#include <cstddef>
#include <cstdint>

#include "core/body.h"
#include "core/device_arrays.h"

namespace nf {

//! bodies[s] = particle order[s] of p (order null: particle s), rounded to T, for s < count: the
//! sorted bodies of a tree, or the input-order bodies of an all-pairs method.
template <class T>
void gather_bodies(const DeviceParticles& p, const std::uint32_t* order, std::size_t count, Body<T>* bodies);

//! bodies[s] = particle first + s * stride of p, rounded to T, its mass times mass_scale, for
//! s < count: a simulation's sub-sampled sources (every k-th particle from an offset, masses times k).
template <class T>
void gather_strided_bodies(const DeviceParticles& p, std::size_t first, std::size_t stride, std::size_t count,
                           double mass_scale, Body<T>* bodies);

//! out[order[s]] = acc[s] widened to float64, for s < out.n (order null: out[s] = acc[s]).
template <class T>
void scatter_accelerations(const Acc4<T>* acc, const std::uint32_t* order, DeviceVectors& out);

}  // namespace nf
