// The Python module `nearfield` (docs/design.md §17, "From Python"): the registry's kernels, the
// tree, validation, simulation and the particle files on numpy arrays, through the same layers as
// the command line. The command's refusals keep their messages: InputError and UsageError become
// nearfield.InputError and nearfield.UsageError, both ValueError; other failures RuntimeError.
// Compute runs without the GIL.
#include <pybind11/pybind11.h>

#include "core/errors.h"
#include "core/gpu_runtime.h"
#include "core/version.h"
#include "python/forces.h"

namespace py = pybind11;

PYBIND11_MODULE(nearfield, m) {
  m.doc() = R"(nearfield: near-field tree methods for the N-body problem (Z-order quadtree/octree, CPU and GPU
kernels, a fast multipole method), on numpy arrays. forces, potential, forces_at, Tree, kernels,
validate, simulate, read, write, generate; the same kernels and results as the command line.)";
  py::register_exception<nf::InputError>(m, "InputError", PyExc_ValueError);
  py::register_exception<nf::UsageError>(m, "UsageError", PyExc_ValueError);
  m.attr("__version__") = nf::project_version();
  m.attr("git_commit") = nf::git_commit();
  m.def("gpu_available", &nf::gpu::available, "True when a usable CUDA GPU is present (GPU kernels can run)");
  m.def("gpu_unavailable_reason", &nf::gpu::unavailable_reason, "why GPU kernels cannot run here");
  nf::python::bind_forces(m);
  nf::python::bind_tree(m);
  nf::python::bind_files(m);
  nf::python::bind_runs(m);
}
