#pragma once
//! `nearfield simulate` (docs/design.md §12): leapfrog kick-drift-kick (velocity Verlet) with any
//! registered kernel, through its force method (methods/force_method.h). GPU kernels keep the
//! particles on the device from the first step to the last; the host sees them only at snapshot
//! and picture steps.
//!
//! One step from (x, v, a(x)) at step s - 1:   v += a dt/2,  x += v dt,  a = F(x) at step s,
//! v += a dt/2 (sim/leapfrog.h). Snapshots, energy rows (kinetic, potential over the pairs the
//! kernel computes, total, relative energy error, momentum: sim/diagnostics.h) and pictures
//! (sim/frames.h) are written at their steps; an interrupted run keeps its finished files and
//! --resume continues from the last snapshot (sim/run_config.h).

#include <cstdint>
#include <ostream>

#include "core/particles.h"
#include "sim/run_config.h"

namespace nf::sim {

//! What a call of `simulate` did.
struct SimulationResult {
  std::uint64_t first_step = 0;   //!< the step it started from (0, or the resumed snapshot's)
  std::uint64_t last_step = 0;
  bool already_complete = false;  //!< --resume found the last step's snapshot: nothing to do
  double last_rel_energy_error = 0;
};

//! Runs the simulation of `initial` (fresh) or continues the run in c.output_dir (c.resume;
//! `initial` unused). Lines for the user go to `log`, progress with the time left to `progress`.
SimulationResult simulate(const SimulationConfig& c, const Particles* initial, std::ostream& log, std::ostream& progress);

}  // namespace nf::sim
