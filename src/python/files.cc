// nearfield.kernels, read, write and generate: the registry, the particle files of every format
// (io/particle_file.h, docs/design.md §13) and the generators (ic/generate.h) for Python.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <limits>

#include "core/gpu_runtime.h"
#include "ic/generate.h"
#include "io/particle_file.h"
#include "methods/registry.h"
#include "python/arrays.h"

namespace nf::python {

namespace {

// A particle set as a dict: pos (N, d), m (N,), vel (N, d) or None, id (N,) int64 or None, time.
py::dict particles_dict(Particles&& p) {
  py::dict d;
  d["pos"] = positions_array(p);
  d["vel"] = velocities_array(p);
  d["id"] = p.id.empty() ? py::object(py::none()) : py::object(owned_array(std::move(p.id), {static_cast<py::ssize_t>(p.size())}));
  d["time"] = p.time;
  const py::ssize_t n = static_cast<py::ssize_t>(p.size());
  d["m"] = owned_array(std::move(p.m), {n});
  return d;
}

py::dict kernel_dict(const KernelInfo& k, bool gpu_present) {
  py::dict d;
  d["name"] = k.name;
  d["description"] = k.summary;
  d["traits"] = k.trait_list();
  d["gpu"] = k.gpu();
  d["near_field"] = k.near_field();
  d["far_field"] = k.far_field();
  d["all_pairs"] = !k.near_field() && !k.far_field();
  d["newton3"] = k.newton3();
  d["atomics"] = k.atomics();
  d["deterministic"] = k.deterministic();
  d["dense_tree"] = k.dense_tree();
  d["openmp"] = k.openmp();
  d["small_boxes"] = k.small_boxes();
  d["runnable"] = !k.gpu() || gpu_present;
  return d;
}

}  // namespace

void bind_files(py::module_& mod) {
  using namespace pybind11::literals;
  mod.def(
      "kernels",
      []() {
        py::list out;
        const bool gpu_present = gpu::available();
        for (const KernelInfo& k : all_kernels()) out.append(kernel_dict(k, gpu_present));
        return out;
      },
      R"(The kernel registry (`nearfield bench --list`): one dict per kernel, in registration order.

Keys: name, description, traits (the listing's words), gpu, near_field, far_field, all_pairs,
newton3, atomics, deterministic, dense_tree, openmp, small_boxes, and runnable (a CPU kernel, or
a GPU kernel with a usable CUDA GPU here).)");

  mod.def(
      "read",
      [](const std::string& path, const py::object& format) {
        const std::string f = string_or_empty(format, "format");
        Particles p;
        {
          py::gil_scoped_release free;
          p = io::read_particles(path, f);
        }
        return particles_dict(std::move(p));
      },
      "path"_a, py::kw_only(), "format"_a = py::none(),
      R"(Reads a particle file in any format the command line reads (csv, tipsy, tab, bin; by extension,
or format=): a dict with pos (N, d) float64, m (N,), vel (N, d) or None, id (N,) int64 or None,
time. Bad files raise ValueError (nearfield.InputError) with the readers' messages.)");

  mod.def(
      "write",
      [](const std::string& path, const py::object& pos, const py::object& m, const py::object& vel,
         const py::object& format, const py::object& id, double time) {
        Particles p = particles_from_arrays(pos, m, vel);
        if (!id.is_none()) {
          // Integers only, and those an int64 holds: numpy's own conversion had cut 1.9 to 1 and
          // wrapped 2^63 + 5 around to a negative id.
          const py::array given = py::array::ensure(id);
          if (!given || given.ndim() != 1 || static_cast<std::size_t>(given.shape(0)) != p.size())
            throw py::value_error("id: expected " + std::to_string(p.size()) + " integers (N,)");
          const char kind = given.dtype().kind();
          if (kind != 'i' && kind != 'u')
            throw py::type_error("id: expected integers, got dtype " + py::str(given.dtype()).cast<std::string>());
          if (kind == 'u' && given.itemsize() == 8) {
            const py::array_t<std::uint64_t> wide = py::array_t<std::uint64_t>::ensure(given);
            for (py::ssize_t i = 0; i < wide.shape(0); ++i)
              if (wide.at(i) > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
                throw py::value_error("id: " + std::to_string(wide.at(i)) + " (element " + std::to_string(i) +
                                      ") is past int64, which the files store");
          }
          const py::array_t<std::int64_t> ids = py::array_t<std::int64_t>::ensure(given);
          p.id.assign(ids.data(), ids.data() + p.size());
        }
        p.time = time;
        const std::string f = string_or_empty(format, "format");
        const io::FileFormat ff = io::resolve_file_format(path, f);
        const std::vector<std::string> lost = io::fields_not_stored(p, ff);
        {
          py::gil_scoped_release free;
          io::write_particles(path, p, ff);
        }
        return lost;
      },
      "path"_a, "pos"_a, "m"_a, "vel"_a = py::none(), py::kw_only(), "format"_a = py::none(), "id"_a = py::none(),
      "time"_a = 0.0,
      R"(Writes particles to path in csv, tipsy, tab or bin (by extension, or format=), as
`nearfield convert` writes them (a temporary file renamed when complete). Returns what the format
does not store (e.g. ["ids", "float64 precision"]); empty when the file reads back exactly.)");

  mod.def(
      "generate",
      [](const std::string& dist, int dim, const py::object& n, const py::object& level, const py::object& ppb,
         std::uint64_t seed, const std::string& mass, int clusters, double jitter) {
        GenerateOptions g;
        g.dist = dist;
        g.dim = dim;
        g.n = int64_or(n, -1, "n");
        g.level = int_or(level, -1, "level");
        g.ppb = int64_or(ppb, -1, "ppb");
        g.seed = seed;
        g.mass = mass;
        g.clusters = clusters;
        g.jitter = jitter;
        Particles p;
        {
          py::gil_scoped_release free;
          p = generate(g);
        }
        return particles_dict(std::move(p));
      },
      "dist"_a, py::kw_only(), "dim"_a = 3, "n"_a = py::none(), "level"_a = py::none(), "ppb"_a = py::none(),
      "seed"_a = 1, "mass"_a = "equal", "clusters"_a = 4, "jitter"_a = 0.0,
      R"(The particles `nearfield generate --dist DIST ...` writes, as read() returns them: n=N, or
level=K with ppb=P. dist: uniform, uniform-fast, uniform-exact, plummer, clusters, lattice, shell,
core, corners, galaxies.)");
}

}  // namespace nf::python
