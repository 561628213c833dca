#pragma once
//! The force evaluations of the Python module: forces, potential, forces_at and Tree.forces run a
//! kernel exactly as `nearfield forces` does (cli/cmd_forces.cc): the registry's kernel, the same
//! checks before work, the same level rule, the same method (distributed/spread_method.h), so the
//! accelerations equal the command's bit for bit.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "core/particles.h"
#include "methods/force_method.h"
#include "methods/registry.h"
#include "tree/domain.h"

namespace nf::python {

namespace py = pybind11;

//! The keyword arguments every force call takes (see the module's docstrings).
struct ForceOptions {
  double softening = 0;
  std::string kernel = "auto";  //!< "auto": the full force, fmm with a GPU, else cpu-fmm
  py::object level;             //!< "auto" or an int
  std::string precision = "float";
  py::object order, near, accuracy;  //!< full methods; None: the method's defaults
  py::object leaf_size;              //!< adaptive full methods; None: automatic (methods/full_level_rule.h)
  py::object order_sample;           //!< full methods: M targets measure the order; None: the error model's
  std::string mask = "all";
  py::object domain;  //!< None or (x0, y0[, z0], side)
  int gpus = 1;
};

//! A run resolved for its particles: the kernel, its setup (level and domain resolved) and the
//! line --level auto prints (empty otherwise).
struct Resolved {
  const KernelInfo* kernel = nullptr;
  MethodSetup setup;
  int gpus = 1;
  std::string note;
};

//! The registry name "auto" stands for on this machine.
std::string auto_kernel();
//! Checks the options for kernel and particles p as `forces` does, before any work (UsageError,
//! InputError, ValueError), and resolves the level; `fixed` gives the level and domain of a Tree;
//! `reference`: validate's float64 reference is counted in the memory check too.
Resolved resolve(const ForceOptions& o, const Particles& p, const std::optional<std::pair<int, Domain>>& fixed = {},
                 bool reference = false);
//! The method of a resolved run, prepared on p (call without the GIL).
std::unique_ptr<ForceMethod> prepared_method(const Resolved& r, const Particles& p);
//! One evaluation's result, read from its method (without the GIL, while nothing else uses it).
struct RunResult {
  std::vector<double> acc;  //!< dim values per particle, input order
  std::string kernel, precision, near_kernel, forces, note;
  int level = 0, order = 0;
  std::uint32_t leaf_size = 0;  //!< adaptive full methods: the leaf size used (0: none)
  std::string order_search;     //!< a measured order's line (measure/order_search.h); empty: none
  bool far_field = false;
  double softening = 0;
  StageTimes times;
};
//! The accelerations and the description of m's last evaluation.
RunResult result_of(const Resolved& r, ForceMethod& m);
//! The (N, dim) float64 accelerations (moved, not copied), with the info dict when asked: kernel,
//! level, precision, softening, order and near_kernel (full methods), leaf_size (adaptive ones), forces (what they are), note
//! (the --level auto line), times (stage times in ms).
py::object result_object(RunResult&& r, const Particles& p, bool return_info);

//! Reads ForceOptions from a call's keyword arguments.
ForceOptions force_options(double softening, const std::string& kernel, const py::object& level,
                           const std::string& precision, const py::object& order, const py::object& near,
                           const py::object& accuracy, const py::object& leaf_size, const std::string& mask,
                           const py::object& domain, int gpus, const py::object& order_sample = py::none());

//! forces(pos, m, ..., tree=tree): the tree's call, after checking that pos are its positions
//! (python/tree.cc).
py::object forces_of(const py::object& pos, const py::object& m, const ForceOptions& o, const py::object& tree,
                     bool return_info);

//! The module's functions, one group per file: forces, potential, forces_at (forces.cc); Tree
//! (tree.cc); kernels, read, write, generate (files.cc); validate, simulate (runs.cc).
void bind_forces(py::module_& m);
void bind_tree(py::module_& m);
void bind_files(py::module_& m);
void bind_runs(py::module_& m);

}  // namespace nf::python
