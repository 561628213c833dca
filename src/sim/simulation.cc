// `nearfield simulate`: the run put together (sim/simulation.h, docs/design.md §12): where it
// starts, its force methods, its files, and the leapfrog with the outputs, costs and progress of
// every step.
#include "sim/simulation.h"

#include "core/errors.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/numbers.h"
#include "core/progress.h"
#include "core/timing.h"
#include "distributed/spread_method.h"
#include "io/particle_file.h"
#include "methods/force_method.h"
#include "measure/order_search.h"
#include "methods/registry.h"
#include "sim/diagnostics.h"
#include "sim/frames.h"
#include "sim/leapfrog.h"
#include "sim/run_files.h"
#include "sim/state.h"
#include "sim/step_costs.h"

namespace nf::sim {
namespace {

// At most one progress line every this many seconds (and the last step's).
constexpr double kProgressInterval = 2.0;

// "step 40/100 (40.0%), 12.3 s elapsed, about 18.5 s left" (", done" at the last step); steps
// count from `first`, the percentage of the whole run from step 0.
Progress::Format step_line(std::uint64_t first) {
  return [first](const ProgressLine& l) {
    const std::uint64_t s = first + l.done, last = first + l.total;
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.1f%%", 100.0 * double(s) / double(std::max<std::uint64_t>(last, 1)));
    return "step " + std::to_string(s) + "/" + std::to_string(last) + " (" + pct + "), " +
           duration_text(l.elapsed_s) + " elapsed" +
           (l.finished() ? ", done" : ", about " + duration_text(l.left_s) + " left");
  };
}

// The lines that say what the run is: particles, kernel, forces, GPUs, files.
void log_run(const SimulationConfig& c, const KernelInfo& k, const ForceMethod& field, const RunStart& start,
             std::uint64_t last, std::ostream& log) {
  const Particles& p = start.particles;
  log << "simulate: " << p.size() << " particles (" << p.dim << "D) from "
      << (c.resume ? start.ini.get("input") : input_name(c)) << ", kernel " << k.name << " (" << k.trait_list()
      << "), " << to_string(c.precision) << ", dt " << format_double(c.dt) << ", steps " << start.step << ".." << last
      << ", softening " << format_double(c.softening)
      << (k.uses_tree() ? ", level " + std::to_string(start.level) : std::string()) << "\n";
  log << "forces: " << field.describe() << "\n";
  if (c.gpus > 1)
    log << "forces on " << c.gpus << " GPUs: positions pass through the host every step (decomposition, halo "
        << "exchange and tree built anew each step; the leapfrog runs on the host)"
        << (emulating_gpus() ? "; NEARFIELD_EMULATE_GPUS=1: every part runs on GPU 0, timings are meaningless" : "")
        << "\n";
  log << "output: " << c.output_dir << ": snap_NNNNNN." << io::to_string(c.format)
      << (c.snapshot_every > 0 ? " every " + std::to_string(c.snapshot_every) + " steps and at the last"
                               : " at step 0 and the last")
      << ", energy.csv at the same steps"
      << (c.render_every > 0 ? ", frame_NNNNNN.png every " + std::to_string(c.render_every) + " steps" : "") << "\n";
}

bool on_grid(std::uint64_t s, std::int64_t every) { return every > 0 && s % std::uint64_t(every) == 0; }

}  // namespace

SimulationResult simulate(const SimulationConfig& c, const Particles* initial, std::ostream& log, std::ostream& progress) {
  check_config(c);
  const KernelInfo& k = find_kernel(c.kernel);
  const std::uint64_t last = static_cast<std::uint64_t>(c.steps);
  SimulationResult result;

  // Where the run starts: the input at step 0, or the last snapshot of a resumed run.
  RunStart start = c.resume ? resume_start(c, k, log) : fresh_start(c, k, initial, log);
  // A source offset (step mod k) at or past N would leave a step without sources: zero forces.
  if (c.subsample > 1 && std::uint64_t(c.subsample) > start.particles.size())
    throw UsageError("--subsample " + std::to_string(c.subsample) + " is more than the " +
                     std::to_string(start.particles.size()) + " particles: the steps whose offset (step mod k) is " +
                     "past the last particle would have no sources");
  const std::uint64_t first = start.step;
  result.first_step = result.last_step = first;
  if (start.complete) {
    result.already_complete = true;
    log << "the run in " << c.output_dir << " is complete (snapshot of step " << last << "): nothing to do\n";
    return result;
  }

  // The forces: the kernel's method (spread over c.gpus GPUs) and, sub-sampled, the exact one.
  MethodSetup setup = method_setup(c, start.level);
  if (start.leaf_size) setup.leaf_size = start.leaf_size;  // a resumed adaptive run keeps its leaf size
  if (start.order) setup.order = start.order, setup.order_sample = 0;  // and a resumed full method its order
  std::unique_ptr<ForceMethod> field =
      make_spread_method(k, setup, start.particles, Spread{c.gpus, CrossPairs::automatic});
  if (const OrderSearch* o = field->order_search()) log << o->describe(k.name) << "\n";  // on step 0's positions
  std::unique_ptr<ForceMethod> exact;  // sub-sampled runs: the exact forces, for the force error
  if (c.subsample > 1) {
    MethodSetup all = setup;
    all.subsample = 1;
    exact = make_method(k, all, start.particles);
  }
  Frames frames(start.frame);
  if (!c.resume && c.render_every > 0) frames.fix(start.particles, c.render_window);
  const int dim = start.particles.dim;
  const std::size_t n = start.particles.size();
  const bool gpu_potential = potential_on_gpu(*field, n);

  // What the run is: on the log, in run.ini and in energy.csv's header.
  log_run(c, k, *field, start, last, log);
  const bool folder_existed = std::filesystem::exists(c.output_dir);
  record_run(c, k, *field, dim, n, start.level, frames.options(), start.ini);
  // A fresh run that fails before its first snapshot (a force past the precision's range at step
  // 0, memory) takes back what it wrote: its run.ini alone had left a folder that could neither be
  // run again ("already holds a run") nor resumed ("no snapshot").
  struct FreshRunCleanup {
    std::string dir;
    bool folder_existed = false, armed = false;
    ~FreshRunCleanup() {
      if (!armed) return;
      std::error_code ec;
      for (const char* name : {"run.ini", "energy.csv"}) std::filesystem::remove(in_dir(dir, name), ec);
      if (!folder_existed) std::filesystem::remove(dir, ec);  // only if now empty
    }
  } cleanup{c.output_dir, folder_existed, !c.resume};
  EnergyLog energy(in_dir(c.output_dir, "energy.csv"), energy_comments(c, k, *field, gpu_potential),
                   to_string(field->model()), c.subsample > 1);
  energy.load(first);

  std::unique_ptr<State> state = make_state(std::move(start.particles), *field);
  RunCosts costs;
  bool storage_noted = c.resume;

  // Energy row, snapshot and picture of step s (whichever are due), from one copy of the particles.
  auto outputs = [&](std::uint64_t s) {
    const bool snap = s == first || s == last || on_grid(s, c.snapshot_every), pic = on_grid(s, c.render_every);
    if (!snap && !pic) return;
    const bool resumed = c.resume && s == first;  // its snapshot and picture are there
    Stopwatch clock;
    Particles& p = state->particles();
    p.time = double(s) * c.dt;
    if (snap) {
      const EnergyRow row = energy_row(s, p, *state, gpu_potential, exact.get());
      // A force past the precision's range turns the state into inf and NaN: the run stops here,
      // before this step's snapshot (it had gone on to the end, writing NaN, with exit status 0).
      for (double v : {row.kinetic, row.potential, row.px, row.py, row.pz})
        if (!std::isfinite(v))
          throw std::runtime_error("step " + std::to_string(s) + ": the particles' state is not finite (kinetic " +
                                   format_double(row.kinetic) + ", potential " + format_double(row.potential) +
                                   "), the run stops before this step's snapshot: " + overflow_advice(c.precision));
      costs.diagnostics_ms.push_back(clock.ms());
      clock.restart();
      const std::string path = in_dir(c.output_dir, snapshot_name(s, c.format));
      if (!storage_noted) {
        log << io::storage_note(path, p, c.format);
        storage_noted = true;
      }
      if (!resumed) io::write_particles(path, p, c.format);
      cleanup.armed = false;  // a snapshot is there: the run can be resumed
      energy.add(row);
      result.last_rel_energy_error = energy.rows().back().rel_energy_error;
      costs.output_ms.push_back(clock.ms());
    }
    if (pic && !resumed) {
      clock.restart();
      frames.write(c.output_dir, s, p);
      if (snap) costs.output_ms.back() += clock.ms();
      else costs.output_ms.push_back(clock.ms());
    }
  };

  Progress meter(progress, last - first, kProgressInterval, step_line(first));
  LeapfrogHooks hooks;
  hooks.outputs = outputs;
  hooks.begin = [&] { meter.restart(); };
  hooks.stepped = [&](std::uint64_t s, const StepCost& cost) {
    costs.steps.push_back(cost);
    result.last_step = s;
    meter.complete();
    meter.report();
  };
  try {
    leapfrog(*state, LeapfrogSteps{c.dt, first, last, c.snapshot_every}, hooks);
  } catch (const InputError& e) {  // the tree of positions an overflowing force made infinite
    throw std::runtime_error("after step " + std::to_string(result.last_step) + ": " + e.what() +
                             " (the particles' state is no longer finite: " + overflow_advice(c.precision) + ")");
  }

  log_costs(costs, log);
  if (!energy.rows().empty())
    log << "energy: rel_energy_error " << format_double(energy.rows().back().rel_energy_error) << " at step "
        << energy.rows().back().step << " (" << energy.rows().size() << " rows in energy.csv)\n";
  if (!c.timing_csv.empty()) write_timing_row(c, k, dim, n, start.level, costs, log);
  return result;
}

}  // namespace nf::sim
