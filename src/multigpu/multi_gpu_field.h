#pragma once
//! `simulate --gpus G` (DESIGN.md sections 12 and 15): a GPU near-field kernel spread over G GPUs
//! as a force field. The simplest honest design: a host field (on_device() is false, like the CPU
//! kernels' fields) whose every step prepares one multi-GPU evaluation of the current positions
//! (prepare with ForceSetup::gpus = G: decomposition along the Z-order curve balanced by the
//! model, parts uploaded, trees built, halo exchanged), runs it and returns the accelerations in
//! input order. Positions and accelerations therefore pass through the host every step, and the
//! leapfrog runs on the host (sim/state.h's host state).

#include <memory>

#include "common/particles.h"
#include "harness/force_field.h"
#include "harness/kernels.h"

namespace nf {

//! The field of GPU near-field kernel k over setup.gpus > 1 GPUs of this host (refused as
//! check_gpus refuses; NEARFIELD_EMULATE_GPUS=1 places every part on GPU 0). Its potential is
//! the CPU's float64 near field at the level over each step's default domain (host_potential).
std::unique_ptr<ForceField> make_multi_gpu_field(const KernelInfo& k, const Particles& initial, const FieldSetup& setup);

}  // namespace nf
