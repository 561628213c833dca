#pragma once
//! A simulation's diagnostics (docs/design.md §12): energy.csv's rows (kinetic energy, the
//! potential through the force method, momentum, the force error of a sub-sampled run) and its
//! `#` lines saying how they are evaluated.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/particles.h"
#include "sim/run_config.h"
#include "sim/run_files.h"
#include "sim/state.h"

namespace nf::sim {

//! Up to this many particles energy.csv's potential is evaluated in float64 on the CPU also for GPU
//! kernels (the size up to which float64 all-pairs on the CPU is the validation's ground truth).
constexpr std::size_t kHostPotentialMax = 20000;

//! Whether energy.csv's potential of n particles is evaluated on the GPU (State::potential):
//! device methods above kHostPotentialMax particles; else in float64 on the CPU.
bool potential_on_gpu(const ForceMethod& field, std::size_t n);

//! sum m v^2 / 2.
double kinetic_energy(const Particles& p);

//! ||a - ref|| / ||ref|| over all components (||a - ref|| when ref is zero).
double relative_l2(const std::vector<double>& a, const std::vector<double>& ref);

//! energy.csv's `#` lines: the run, the forces, how the potential is evaluated, what the columns mean.
std::vector<std::string> energy_comments(const SimulationConfig& c, const KernelInfo& k, const ForceMethod& field,
                                         bool gpu_potential);

//! The energy row of step `step` (total and relative error are EnergyLog::add's): p is
//! state.particles() with its time set; the potential over the pairs of state.method(), on the
//! GPU when gpu_potential; `exact` (sub-sampled runs, else null) gives force_rel_error.
EnergyRow energy_row(std::uint64_t step, const Particles& p, State& state, bool gpu_potential, ForceMethod* exact);

}  // namespace nf::sim
