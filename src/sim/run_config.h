#pragma once
//! A simulation's settings (docs/design.md §12): the options of `simulate`, the checks made before
//! any work, run.ini (what --resume compares) and where a run starts: its input at step 0, or the
//! last snapshot of a resumed run.

#include <cstdint>
#include <ostream>
#include <string>

#include "core/particles.h"
#include "io/particle_file.h"
#include "methods/force_method.h"
#include "render/density_image.h"
#include "sim/run_files.h"

namespace nf {
struct KernelInfo;
class ForceMethod;
}  // namespace nf

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
  // Full methods (cpu-fmm): the far field's order (0: from the accuracy), accuracy, near kernel.
  int order = 0;
  double accuracy = 0;
  std::string near;
  std::uint32_t leaf_size = 0;  //!< adaptive full methods: tree/adaptive.h's S (0: automatic)
  std::uint32_t order_sample = 0;  //!< M > 0: the order measured at M targets of step 0 (measure/order_search.h)
};

//! The level as a number: K, or -1 for "auto" (resolved from the particles), 0 when not given.
int parse_level(const std::string& level);

//! The setup of the run's force method at `level` (no domain: every step's own bounding
//! square/cube).
MethodSetup method_setup(const SimulationConfig& c, int level);

//! Refuses, before any work, what cannot run (UsageError naming the option): dt not finite and
//! positive, negative steps / --snapshot-every / --render-every / softening, --subsample below 1
//! or with a near-field kernel, a near-field kernel without --level, --level auto with an
//! all-pairs kernel, a format other than csv/tipsy/bin, a GPU kernel without a GPU, --gpus below 1
//! or above 1 with a kernel other than a GPU near-field kernel or without the GPUs, an output
//! folder that holds a run (without --resume) or none (with --resume), a resumed run whose
//! recorded settings differ (every difference named), a --timing file that cannot be written.
void check_config(const SimulationConfig& c);

//! DIR/NAME.
std::string in_dir(const std::string& dir, const std::string& name);
//! What the log and run.ini call the input: c.input, or "particles given in memory" (the Python
//! module's arrays) where it is empty.
std::string input_name(const SimulationConfig& c);

//! Where a run starts.
struct RunStart {
  std::uint64_t step = 0;  //!< 0, or the step of the snapshot a resumed run continues from
  bool complete = false;   //!< a resumed run whose last snapshot is at --steps: nothing to do (no particles)
  Particles particles;     //!< the particles at `step`
  int level = 0;           //!< the tree level: --level (auto resolved), or the one a resumed run recorded
  //! An adaptive full method resumed without --leaf-size: the leaf size the run used (run.ini's
  //! leaf_size_used; 64, the former default, for a run recorded before it), so that a change of the
  //! automatic size does not change a run halfway; 0 otherwise.
  std::uint32_t leaf_size = 0;
  //! A full method resumed without --order: the order the run used (run.ini's order_used), so that
  //! a change of the error model does not change a run halfway; 0 otherwise.
  int order = 0;
  RunDescription ini;      //!< run.ini as a resumed run recorded it; empty for a fresh run
  //! The pictures' width and plane, and the view and density range a resumed run recorded.
  render::RenderOptions frame;
};

//! A fresh run of `initial` (its copy) at step 0; --level auto is resolved here, its note on `log`.
RunStart fresh_start(const SimulationConfig& c, const KernelInfo& k, const Particles* initial, std::ostream& log);

//! --resume: the last snapshot of c.output_dir in c.format, checked against run.ini (dimension,
//! N), with the recorded level, leaf size, order and frame (InputError naming the file otherwise);
//! says so on `log`. A run already at --steps is returned `complete` (its snapshot read and checked
//! all the same).
RunStart resume_start(const SimulationConfig& c, const KernelInfo& k, std::ostream& log);

//! Writes DIR/run.ini. A fresh run records everything --resume compares, what the forces are, the
//! particles (dim, n), the level and the frame (view and density range of step 0); a resumed run
//! keeps what it recorded. Both record --steps and the program's version. `d`: start.ini.
void record_run(const SimulationConfig& c, const KernelInfo& k, const ForceMethod& field, int dim, std::size_t n,
                int level, const render::RenderOptions& frame, RunDescription& d);

}  // namespace nf::sim
