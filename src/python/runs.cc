// nearfield.validate and simulate: a kernel against the float64 ground truth (measure/validation.h,
// as one cell of `nearfield validate`, cli/validate_sweep.cc) and the leapfrog's run folder
// (sim/simulation.h, as `nearfield simulate`).
#include <iostream>
#include <sstream>

#include <pybind11/numpy.h>

#include "core/errors.h"
#include "core/numbers.h"
#include "io/particle_file.h"
#include "measure/order_search.h"
#include "measure/validation.h"
#include "methods/auto_level.h"
#include "methods/memory_estimate.h"
#include "methods/run_checks.h"
#include "python/arrays.h"
#include "python/forces.h"
#include "sim/simulation.h"

namespace nf::python {

namespace {

// A stream that drops what it is given (simulate's progress unless asked for).
class NullStream : public std::ostream {
 public:
  NullStream() : std::ostream(nullptr) {}
};

py::dict validate(const Particles& p, ForceOptions o, std::int64_t sample, std::uint64_t seed, std::size_t cpu_limit) {
  const KernelInfo& k = find_kernel(o.kernel == "auto" ? auto_kernel() : o.kernel);
  o.kernel = k.name;
  o.mask = k.uses_tree() ? "all" : "near";  // all-pairs kernels are validated over the near field
  if (sample < 0) throw UsageError("--sample takes the number of target particles, an integer >= 1");
  const Resolved r = resolve(o, p, {}, true);
  const Mask ref_mask = k.far_field() ? Mask::all : Mask::near;
  const bool sampled = sample > 0 && static_cast<std::uint64_t>(sample) < p.size();
  std::vector<std::size_t> targets;
  std::string ref_name;
  KernelCheck check;
  std::unique_ptr<ForceMethod> method;
  {
    py::gil_scoped_release free;
    std::vector<double> ref;
    if (sampled) {
      targets = sample_targets(p.size(), static_cast<std::size_t>(sample), seed);
      ref = sampled_ground_truth(p, r.setup, r.setup.precision, targets, ref_name, ref_mask);
      ref_name += " (seed " + std::to_string(seed) + ")";
    } else {
      ref = ground_truth(p, r.setup, r.setup.precision, cpu_limit, ref_name, ref_mask);
    }
    method = prepared_method(r, p);
    check = check_method(*method, k, p, ref, nullptr, sampled ? &targets : nullptr);
  }
  const Metrics& m = check.metrics;
  py::dict d;
  d["kernel"] = k.name;
  d["precision"] = to_string(r.setup.precision);
  d["level"] = method->setup().level;
  d["n"] = p.size();
  d["sample"] = sampled ? py::object(py::int_(targets.size())) : py::object(py::none());
  d["rel_l2"] = m.rel_l2;
  d["p99_rel"] = m.p99_rel;
  d["max_rel"] = m.max_rel;
  d["momentum"] = m.momentum;
  d["finite"] = m.finite;
  d["tolerance"] = tolerance(k, r.setup, p.dim, p.size());  // the order as asked: auto is held to the accuracy target
  d["repeat"] = !check.repeat_checked ? "-" : check.repeatable ? "bitwise" : "DIFFERS";
  d["passed"] = check.pass;
  d["status"] = check.pass ? "PASS" : "FAIL";
  d["reference"] = ref_name;
  if (k.far_field()) {
    d["order"] = method->setup().order;
    d["near_kernel"] = method->near_kernel();
    if (k.adaptive()) d["leaf_size"] = method->setup().leaf_size;
    if (const OrderSearch* s = method->order_search()) d["order_search"] = s->describe(k.name);
  }
  d["note"] = r.note;
  return d;
}

py::dict simulate(const py::object& pos, const py::object& m, const py::object& vel, sim::SimulationConfig c,
                  bool progress) {
  sim::check_config(c);  // every refusal before the particles are read
  Particles p;
  if (c.resume) {
    if (!pos.is_none() || !m.is_none())
      throw py::value_error("resume=True continues the run in output_dir from its last snapshot: pass no particles");
  } else {
    if (pos.is_none() || m.is_none()) throw py::value_error("a fresh run needs pos and m (or resume=True)");
    p = particles_from_arrays(pos, m, vel);
    const int level = sim::parse_level(c.level);
    check_run_memory(find_kernel(c.kernel), sim::method_setup(c, level), p.dim, p.size(),
                     particle_bytes(p.dim, p.size(), true, false), false, c.gpus);
  }
  std::ostringstream log;
  NullStream quiet;
  sim::SimulationResult r;
  {
    py::gil_scoped_release free;
    r = sim::simulate(c, c.resume ? nullptr : &p, log, progress ? std::cerr : quiet);
  }
  py::dict d;
  d["output_dir"] = c.output_dir;
  d["first_step"] = r.first_step;
  d["last_step"] = r.last_step;
  d["already_complete"] = r.already_complete;
  d["last_rel_energy_error"] = r.last_rel_energy_error;
  d["log"] = log.str();
  return d;
}

}  // namespace

void bind_runs(py::module_& mod) {
  using namespace pybind11::literals;
  mod.def(
      "validate",
      [](const py::object& pos, const py::object& m, double softening, const std::string& kernel,
         const py::object& level, const std::string& precision, const py::object& order, const py::object& near,
         const py::object& accuracy, const py::object& leaf_size, const py::object& domain, const py::object& sample,
         std::uint64_t seed, std::size_t reference_limit, int gpus, const py::object& order_sample) {
        const ForceOptions o = force_options(softening, kernel, level, precision, order, near, accuracy, leaf_size, "all",
                                             domain, gpus, order_sample);
        // sample=None: every particle; a given sample must be at least 1, as --sample (0 had validated
        // every particle without a word).
        const int targets = int_or(sample, 0, "sample");
        if (!sample.is_none() && targets < 1)
          throw UsageError("--sample: " + std::to_string(targets) + " is not a valid value (at least 1)");
        return validate(particles_from_arrays(pos, m), o, targets, seed, reference_limit);
      },
      "pos"_a, "m"_a, py::kw_only(), "softening"_a, "kernel"_a, "level"_a = "auto", "precision"_a = "float",
      "order"_a = py::none(), "near"_a = py::none(), "accuracy"_a = py::none(), "leaf_size"_a = py::none(),
      "domain"_a = py::none(), "sample"_a = py::none(), "seed"_a = 1, "reference_limit"_a = 20000, "gpus"_a = 1,
      "order_sample"_a = py::none(),
      R"(One kernel against the float64 ground truth, as one row of `nearfield validate`: a dict.

Near-field and all-pairs kernels (the latter with the near mask) are compared with the float64
near field at the level, full methods with every pair, on the inputs the kernel sees (float32-
rounded for precision="float"); a deterministic kernel runs twice and must repeat bit for bit.
sample=M compares M targets drawn with seed (float64 sums over every source). Keys: kernel,
precision, level, n, sample, rel_l2, p99_rel, max_rel, momentum, finite, tolerance, repeat
("bitwise", "DIFFERS" or "-"), passed, status ("PASS"/"FAIL"), reference, note, and for full
methods order and near_kernel (and order_search, with order_sample=M: the order measured on the input,
forces()'s option). reference_limit: the largest N of the CPU reference.)");

  mod.def(
      "simulate",
      [](const py::object& pos, const py::object& m, const py::object& vel, const std::string& kernel, double dt,
         std::int64_t steps, double softening, const std::string& output_dir, const py::object& level,
         const std::string& precision, std::int64_t snapshot_every, const std::string& format, int subsample,
         std::int64_t render_every, int render_size, const std::string& render_plane, const py::object& render_window,
         bool resume, const py::object& order, const py::object& accuracy, const py::object& near,
         const py::object& leaf_size, int gpus, const py::object& timing, bool progress, const py::object& order_sample) {
        sim::SimulationConfig c;
        c.kernel = kernel == "auto" ? auto_kernel() : kernel;
        c.dt = dt;
        c.steps = steps;
        c.softening = softening;
        c.output_dir = output_dir;
        // No level: "auto" for a tree kernel (as forces() does), none for the others.
        c.level = level.is_none() ? (find_kernel(c.kernel).uses_tree() ? "auto" : "")
                                  : level_of(level) == kAutoLevel ? "auto" : std::to_string(level_of(level));
        c.precision = parse_precision(precision);
        c.snapshot_every = snapshot_every;
        c.format = io::parse_file_format(format);
        c.subsample = subsample;
        c.render_every = render_every;
        c.render_size = render_size;
        c.render_plane = render::parse_plane(render_plane);
        c.render_window = string_or_empty(render_window, "render_window");
        c.resume = resume;
        c.order = int_or(order, 0, "order");
        c.accuracy = float_or(accuracy, 0.0, "accuracy");
        c.near = string_or_empty(near, "near");
        c.leaf_size = leaf_size_of(leaf_size);
        c.order_sample = order_sample_of(order_sample);
        c.gpus = gpus;
        c.timing_csv = string_or_empty(timing, "timing");
        return simulate(pos, m, vel, c, progress);
      },
      "pos"_a = py::none(), "m"_a = py::none(), "vel"_a = py::none(), py::kw_only(), "kernel"_a, "dt"_a, "steps"_a,
      "softening"_a, "output_dir"_a, "level"_a = py::none(), "precision"_a = "float", "snapshot_every"_a = 0,
      "format"_a = "csv", "subsample"_a = 1, "render_every"_a = 0, "render_size"_a = 512, "render_plane"_a = "xy",
      "render_window"_a = py::none(), "resume"_a = false, "order"_a = py::none(), "accuracy"_a = py::none(),
      "near"_a = py::none(), "leaf_size"_a = py::none(), "gpus"_a = 1, "timing"_a = py::none(), "progress"_a = false,
      "order_sample"_a = py::none(),
      R"(Leapfrog time steps, writing the run folder `nearfield simulate` writes (docs/design.md §12):
output_dir/snap_NNNNNN.EXT, energy.csv, run.ini, frames. The options are the command's (--level:
level=K or "auto", default "auto" for tree kernels, refused for the others; --resume: resume=True
without particles). vel
defaults to zero. Returns a dict: output_dir, first_step, last_step, already_complete,
last_rel_energy_error, and log (the lines the command prints). progress=True: the progress meter
on stderr.)");
}

}  // namespace nf::python
