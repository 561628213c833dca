#pragma once
//! The leapfrog's kicks and drifts on device-resident particles, float64, as plain C++ drivers
//! (integrate_gpu.cu). Memory-bound passes over the arrays; no host copies.

#include "core/device_arrays.h"

namespace nf::sim_gpu {

//! The accelerations a kick reads: float64 vectors, or a method's own output rows (Acc4<float>
//! or Acc4<double>, already in the state's order: ForceMethod::state_order_acc), which saves
//! copying them into vectors every step.
struct KickAcc {
  const DeviceVectors* vectors = nullptr;
  const void* rows = nullptr;
  bool double_rows = false;
};

//! v += a h on every axis.
void kick(DeviceVectors& v, const KickAcc& a, double h);

//! v += a h_before (when h_before != 0: the previous step's closing kick, deferred), then
//! v += a h, then x += v dt: the same operations, in the same order, as the separate kicks and
//! drift, in one pass over the arrays. Also reduces the new positions' bounds into p.bounds and
//! sets p.bounds_valid, so that the next tree build skips its own reduction.
void kick_drift(DeviceParticles& p, DeviceVectors& v, const KickAcc& a, double h_before, double h, double dt);

//! The state back in input order after a method moved it (ForceMethod::prepare_in_place): every
//! array a of p, v and acc goes to a'[index[s]] = a[s], and index becomes 0, 1, ..., n - 1.
//! Allocates the new arrays (a random scatter: meant for the few steps that need input order).
//! A permutation: p.bounds stay valid.
void restore_input_order(DeviceParticles& p, DeviceVectors& v, DeviceVectors& acc, gpu::DeviceBuffer<std::uint32_t>& index);

}  // namespace nf::sim_gpu
