// nearfield.forces, potential and forces_at: one kernel on numpy arrays (python/forces.h).
#include "python/forces.h"

#include <pybind11/numpy.h>

#include "core/gpu_runtime.h"
#include "distributed/spread_method.h"
#include "measure/order_search.h"
#include "methods/auto_level.h"
#include "methods/run_checks.h"
#include "python/arrays.h"

namespace nf::python {

std::string auto_kernel() { return gpu::available() ? "fmm" : "cpu-fmm"; }

ForceOptions force_options(double softening, const std::string& kernel, const py::object& level,
                           const std::string& precision, const py::object& order, const py::object& near,
                           const py::object& accuracy, const py::object& leaf_size, const std::string& mask,
                           const py::object& domain, int gpus, const py::object& order_sample) {
  ForceOptions o;
  o.softening = softening;
  o.kernel = kernel;
  o.level = level;
  o.precision = precision;
  o.order = order;
  o.near = near;
  o.accuracy = accuracy;
  o.leaf_size = leaf_size;
  o.order_sample = order_sample;
  o.mask = mask;
  o.domain = domain;
  o.gpus = gpus;
  return o;
}

Resolved resolve(const ForceOptions& o, const Particles& p, const std::optional<std::pair<int, Domain>>& fixed,
                 bool reference) {
  Resolved r;
  const KernelInfo& k = find_kernel(o.kernel == "auto" ? auto_kernel() : o.kernel);
  r.kernel = &k;
  r.gpus = o.gpus;
  check_kernels_runnable({k.name});  // the command's "needs a CUDA GPU" refusal
  check_gpus(k, o.gpus);
  MethodSetup& s = r.setup;
  s.precision = parse_precision(o.precision);
  s.mask = parse_mask(o.mask);
  s.softening = o.softening;
  s.order = int_or(o.order, 0, "order");
  s.accuracy = float_or(o.accuracy, 0.0, "accuracy");
  s.near = string_or_empty(o.near, "near");
  s.leaf_size = leaf_size_of(o.leaf_size);
  s.order_sample = order_sample_of(o.order_sample);
  const bool needs_level = k.uses_tree() || s.mask == Mask::near;
  int level = 0;
  if (fixed) {  // a Tree's level and domain
    if (!o.level.is_none() && !(py::isinstance<py::str>(o.level) && o.level.cast<std::string>() == "auto") &&
        level_of(o.level) != fixed->first)
      throw py::value_error("level: the tree is at level " + std::to_string(fixed->first) + ", not " +
                            std::to_string(level_of(o.level)));
    if (!o.domain.is_none()) throw py::value_error("domain: a tree's call takes the tree's domain");
    level = fixed->first;
    s.domain = fixed->second;
  } else {
    level = needs_level ? level_of(o.level) : 0;  // all-pairs kernels over every pair need no tree
    s.domain = domain_of(o.domain, p, "pos");
    if (!s.domain) s.domain = default_domain(p);
  }
  s.level = level;
  check_setup(k, s);  // softening, far-field options: before the level rule, which reads them
  py::gil_scoped_release free;
  check_run_memory(k, s, p.dim, p.size(), 0.0, reference, o.gpus);
  s.level = resolve_level(level, p, *s.domain, k, s, r.note);
  return r;
}

std::unique_ptr<ForceMethod> prepared_method(const Resolved& r, const Particles& p) {
  auto m = make_spread_method(*r.kernel, r.setup, p, Spread{r.gpus, CrossPairs::automatic});
  m->prepare(p);
  return m;
}

RunResult result_of(const Resolved& r, ForceMethod& m) {
  RunResult out;
  out.acc = m.accelerations();
  out.kernel = r.kernel->name;
  out.level = m.setup().level;
  out.precision = to_string(m.setup().precision);
  out.softening = m.setup().softening;
  out.far_field = r.kernel->far_field();
  if (out.far_field) {
    out.order = m.setup().order;
    out.near_kernel = m.near_kernel();
    if (r.kernel->adaptive()) out.leaf_size = m.setup().leaf_size;
    if (const OrderSearch* o = m.order_search()) out.order_search = o->describe(r.kernel->name);
  }
  out.forces = m.describe();
  out.note = r.note;
  out.times = m.times();
  return out;
}

py::object result_object(RunResult&& r, const Particles& p, bool return_info) {
  py::object acc = owned_array(std::move(r.acc), {static_cast<py::ssize_t>(p.size()), p.dim});
  if (!return_info) return acc;
  py::dict info;
  info["kernel"] = r.kernel;
  info["level"] = r.level;
  info["precision"] = r.precision;
  info["softening"] = r.softening;
  if (r.far_field) {
    info["order"] = r.order;
    info["near_kernel"] = r.near_kernel;
    if (r.leaf_size) info["leaf_size"] = r.leaf_size;
    if (!r.order_search.empty()) info["order_search"] = r.order_search;
  }
  info["forces"] = r.forces;
  info["note"] = r.note;
  py::dict times;
  for (const Stage& st : r.times.prepare) times[py::str(st.name + "_ms")] = st.ms;
  times["evaluate_ms"] = r.times.evaluate_ms;
  for (const Stage& st : r.times.evaluate) times[py::str(st.name + "_ms")] = st.ms;
  info["times"] = times;
  return py::make_tuple(acc, info);
}

namespace {

// One evaluation of `o` on p: the accelerations, with the run's info when asked.
py::object evaluate(const ForceOptions& o, const Particles& p, bool return_info) {
  const Resolved r = resolve(o, p);
  RunResult result;
  {
    py::gil_scoped_release free;
    const std::unique_ptr<ForceMethod> m = prepared_method(r, p);
    m->evaluate();
    result = result_of(r, *m);
  }
  check_finite_accelerations(result.acc, p, r.setup.precision);  // RuntimeError, as the command's exit 3
  return result_object(std::move(result), p, return_info);
}

}  // namespace

void bind_forces(py::module_& mod) {
  using namespace pybind11::literals;
  mod.def(
      "forces",
      [](const py::object& pos, const py::object& m, double softening, const std::string& kernel,
         const py::object& level, const std::string& precision, const py::object& order, const py::object& near,
         const py::object& accuracy, const py::object& leaf_size, const std::string& mask, const py::object& domain,
         int gpus, const py::object& tree, bool return_info, const py::object& order_sample) {
        const ForceOptions o = force_options(softening, kernel, level, precision, order, near, accuracy, leaf_size, mask,
                                             domain, gpus, order_sample);
        if (!tree.is_none()) return forces_of(pos, m, o, tree, return_info);
        return evaluate(o, particles_from_arrays(pos, m), return_info);
      },
      "pos"_a, "m"_a, py::kw_only(), "softening"_a, "kernel"_a = "auto", "level"_a = "auto", "precision"_a = "float",
      "order"_a = py::none(), "near"_a = py::none(), "accuracy"_a = py::none(), "leaf_size"_a = py::none(),
      "mask"_a = "all", "domain"_a = py::none(), "gpus"_a = 1, "tree"_a = py::none(), "return_info"_a = false,
      "order_sample"_a = py::none(),
      R"(Accelerations of particles at pos (N, 2|3) with masses m (N,), float64 (N, d), input order.

The same evaluation as `nearfield forces --kernel K ...` (equal bit for bit on the same input).
kernel: a registry name (nearfield.kernels()); "auto" is the full softened force: "fmm" with a
CUDA GPU, else "cpu-fmm". level: an int or "auto" (the command's rule); all-pairs kernels with
mask="all" use none. precision: "float" or "double" arithmetic; the result is float64 either way
(a float kernel's values are float32 numbers, widened exactly). order, near, accuracy: full
methods (cpu-fmm, fmm). leaf_size: the adaptive ones (cpu-fmm-adaptive, fmm-adaptive; a box is split
while it holds more than this many particles; None: automatic, from the order and the device).
order_sample: full methods without order: measure the order on these particles at M sampled targets
(--order-sample; the info dict's order_search says what was tried). domain: (x0, y0[, z0], side), else the bounding square/cube. gpus: GPU
near-field kernels over several GPUs. tree: a nearfield.Tree of these positions (its level and
domain; its prepared methods are kept). return_info: also return a dict (kernel, level, order,
near_kernel, leaf_size of the adaptive methods, order_search of a measured order, what the forces are, the --level
auto note, stage times in ms).)");

  mod.def(
      "potential",
      [](const py::object& pos, const py::object& m, double softening, const std::string& kernel,
         const py::object& level, const std::string& precision, const py::object& order, const py::object& near,
         const py::object& accuracy, const py::object& leaf_size, const std::string& mask, const py::object& domain) {
        const ForceOptions o =
            force_options(softening, kernel, level, precision, order, near, accuracy, leaf_size, mask, domain, 1);
        const Particles p = particles_from_arrays(pos, m);
        const Resolved r = resolve(o, p);
        py::gil_scoped_release free;
        return make_method(*r.kernel, r.setup, p)->potential(p);
      },
      "pos"_a, "m"_a, py::kw_only(), "softening"_a, "kernel"_a = "auto", "level"_a = "auto", "precision"_a = "float",
      "order"_a = py::none(), "near"_a = py::none(), "accuracy"_a = py::none(), "leaf_size"_a = py::none(),
      "mask"_a = "all", "domain"_a = py::none(),
      R"(Potential energy U = -sum_{i<j} m_i m_j / sqrt(r^2 + eps^2) over the pairs the kernel computes.

As energy.csv's potential: every pair for all-pairs kernels and full methods, the near field at
the level for near-field kernels (and mask="near"); float64 on the CPU, whatever the precision.
Takes forces()'s arguments.)");

  mod.def(
      "forces_at",
      [](const py::object& targets, const py::object& pos, const py::object& m, double softening,
         const std::string& kernel, const py::object& level, const std::string& precision, const py::object& order,
         const py::object& near, const py::object& accuracy, const py::object& leaf_size, const std::string& mask,
         const py::object& domain, int gpus, bool return_info, const py::object& order_sample) {
        Particles p = particles_from_arrays(pos, m);
        const Particles t = points_from_array(targets, "targets");
        if (t.dim != p.dim)
          throw py::value_error("targets: " + std::to_string(t.dim) + "D points for " + std::to_string(p.dim) +
                                "D particles");
        // The targets join the sources as particles of zero mass: they feel every source and
        // pull on none, so every kernel computes the field at them.
        const std::size_t n = p.size();
        p.resize(n + t.size());
        for (std::size_t i = 0; i < t.size(); ++i) {
          p.x[n + i] = t.x[i];
          p.y[n + i] = t.y[i];
          if (p.dim == 3) p.z[n + i] = t.z[i];
          p.m[n + i] = 0.0;
        }
        const ForceOptions o = force_options(softening, kernel, level, precision, order, near, accuracy, leaf_size, mask,
                                             domain, gpus, order_sample);
        const py::object all = evaluate(o, p, return_info);
        const py::object acc = return_info ? py::object(all.cast<py::tuple>()[0]) : all;
        py::object rows = acc[py::slice(static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(p.size()), 1)];
        rows = py::module_::import("numpy").attr("ascontiguousarray")(rows);
        if (!return_info) return rows;
        return py::object(py::make_tuple(rows, all.cast<py::tuple>()[1]));
      },
      "targets"_a, "pos"_a, "m"_a, py::kw_only(), "softening"_a, "kernel"_a = "auto", "level"_a = "auto",
      "precision"_a = "float", "order"_a = py::none(), "near"_a = py::none(), "accuracy"_a = py::none(),
      "leaf_size"_a = py::none(), "mask"_a = "all", "domain"_a = py::none(), "gpus"_a = 1, "return_info"_a = false,
      "order_sample"_a = py::none(),
      R"(Accelerations at the points targets (M, d) due to the particles pos, m: float64 (M, d).

The targets are evaluated as particles of zero mass appended to the sources: they feel every
source and pull on none, so any kernel runs. All-pairs kernels and full methods give the field of
every source; a near-field kernel gives the near field over boxes of sources and targets together
(the level rule and the default domain count the targets too). A target on a source, without
softening, feels nothing from it (as any pair at zero distance). Takes forces()'s arguments.)");
}

}  // namespace nf::python
