#pragma once
//! `nearfield simulate` (DESIGN.md section 12): leapfrog kick-drift-kick (velocity Verlet) with any
//! registered kernel, through its force field (methods/force_field.h). GPU kernels keep the
//! particles on the device from the first step to the last; the host sees them only at snapshot
//! and picture steps.
//!
//! One step from (x, v, a(x)) at step s - 1:   v += a dt/2,  x += v dt,  a = F(x) at step s,
//! v += a dt/2. Snapshots, energy rows (kinetic, potential over the pairs the kernel computes,
//! total, relative energy error, momentum) and pictures are written at their steps; an interrupted
//! run keeps its finished files and --resume continues from the last snapshot.

#include <cstdint>
#include <ostream>
#include <string>

#include "core/particles.h"
#include "io/particle_file.h"
#include "render/density_image.h"
#include "sim/run_files.h"

namespace nf::sim {

//! Everything `simulate` takes besides the particles.
struct SimulationConfig {
  std::string kernel;
  double dt = 0.0;
  std::int64_t steps = 0;
  double softening = 1e-4;
  std::string level;  //!< "" (none), "auto" (near-field kernels; chosen from the initial particles) or K
  Precision precision = Precision::f32;
  std::int64_t snapshot_every = 0;  //!< M: snapshots and energy rows every M steps; 0: step 0 and the last only
  std::string output_dir;
  io::FileFormat format = io::FileFormat::csv;
  int subsample = 1;                 //!< k > 1: every k-th source per step (all-pairs kernels)
  int gpus = 1;                      //!< G > 1: a GPU near-field kernel over G GPUs (positions through the host)
  std::int64_t render_every = 0;     //!< R > 0: frame_NNNNNN.png every R steps (and step 0)
  int render_size = 512;             //!< frame width in pixels
  render::Plane render_plane = render::Plane::xy;
  std::string render_window;  //!< "U0,U1,V0,V1"; empty: a square around the particles of step 0
  bool resume = false;
  std::string timing_csv;  //!< non-empty: append the step-cost breakdown as a row of this results CSV
  std::string input;       //!< where the particles come from (recorded; compared on resume when given)
};

//! The level as a number: K, or -1 for "auto" (resolved from the particles), 0 when not given.
int parse_level(const std::string& level);

//! Refuses, before any work, what cannot run (UsageError naming the option): dt not finite and
//! positive, negative steps / --snapshot-every / --render-every / softening, --subsample below 1
//! or with a near-field kernel, a near-field kernel without --level, --level auto with an
//! all-pairs kernel, a format other than csv/tipsy/bin, a GPU kernel without a GPU, --gpus below 1
//! or above 1 with a kernel other than a GPU near-field kernel or without the GPUs, an output
//! folder that holds a run (without --resume) or none (with --resume), a resumed run whose
//! recorded settings differ (every difference named), a --timing file that cannot be written.
void check_config(const SimulationConfig& c);

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
