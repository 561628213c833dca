#pragma once
//! A simulation's state moved into a tree's order on the device (ForceMethod::prepare_in_place of
//! the GPU near-field methods): the next step's sort then finds the particles almost in place,
//! and the gathers read memory in order. Driver; the kernel is in reorder_gpu.cu.

#include <cstdint>

#include "core/body.h"
#include "core/device_arrays.h"

namespace nf::reorder_gpu {

//! The arrays reorder_state moves a state through: allocated on first use, then swapped with the
//! state's at every call, so no step allocates.
struct StateSpare {
  DeviceParticles p;
  DeviceVectors v;
  gpu::DeviceBuffer<std::uint32_t> index;
};

//! For every array a of x, y, z, m (p), of the velocities v and of `index`: a'[s] = a[order[s]]
//! (order: sorted position -> current row); also bodies[s] = particle s after the move, rounded to
//! T (what gather_bodies writes). The moved arrays swap places with spare's.
template <class T>
void reorder_state(const std::uint32_t* order, DeviceParticles& p, DeviceVectors& v,
                   gpu::DeviceBuffer<std::uint32_t>& index, StateSpare& spare, Body<T>* bodies);

}  // namespace nf::reorder_gpu
