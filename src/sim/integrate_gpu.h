#pragma once
//! The leapfrog's kicks and drifts on device-resident particles, float64, as plain C++ drivers
//! (integrate_gpu.cu). Memory-bound passes over the arrays; no host copies.

#include "core/device_arrays.h"

namespace nf::sim_gpu {

//! v += a h on every axis.
void kick(DeviceVectors& v, const DeviceVectors& a, double h);

//! v += a h, then x += v dt: a step's opening kick and its drift in one pass (the same operations,
//! in the same order, as a kick followed by a drift).
void kick_drift(DeviceParticles& p, DeviceVectors& v, const DeviceVectors& a, double h, double dt);

//! The state back in input order after a method moved it (ForceMethod::prepare_in_place): every
//! array a of p, v and acc goes to a'[index[s]] = a[s], and index becomes 0, 1, ..., n - 1.
//! Allocates the new arrays (a random scatter: meant for the few steps that need input order).
void restore_input_order(DeviceParticles& p, DeviceVectors& v, DeviceVectors& acc, gpu::DeviceBuffer<std::uint32_t>& index);

}  // namespace nf::sim_gpu
