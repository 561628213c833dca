#pragma once
//! numpy arrays in and out of the Python module (docs/design.md §17, "From Python"). Inputs are
//! checked before any work and refused with the problem named: a dtype other than float32 or
//! float64 (TypeError: integers, float16, objects), an array that is not C-contiguous (TypeError:
//! use np.ascontiguousarray), a wrong shape, NaN or inf, a negative mass (ValueError). Particles
//! are structures of arrays (core/particles.h), so positions are copied once, column by column;
//! outputs are moved into numpy arrays without a copy (the array owns the vector).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "core/particles.h"
#include "tree/domain.h"

namespace nf::python {

namespace py = pybind11;

//! Particles from positions `pos` (N, 2) or (N, 3) and masses `m` (N,); `vel` (N, d) or None.
//! `what` names the positions in messages ("pos", "targets").
Particles particles_from_arrays(const py::handle& pos, const py::handle& m, const py::handle& vel = py::none(),
                                const char* what = "pos");
//! Positions only (masses 0): the points of forces_at's targets, or a tree's particles.
Particles points_from_array(const py::handle& pos, const char* what);

//! Masses `m` (N,) for n positions (named `what` in messages), checked finite and >= 0.
std::vector<double> masses_from_array(const py::handle& m, std::size_t n, const char* what);

//! A numpy array of `shape` that owns `values` (moved, not copied).
template <class T>
py::array_t<T> owned_array(std::vector<T>&& values, std::vector<py::ssize_t> shape) {
  auto* held = new std::vector<T>(std::move(values));
  py::capsule owner(held, [](void* v) { delete static_cast<std::vector<T>*>(v); });
  return py::array_t<T>(shape, held->data(), owner);
}

//! The positions of p as an (N, dim) float64 array (a copy: p is a structure of arrays).
py::array_t<double> positions_array(const Particles& p);
//! The velocities of p as (N, dim), or None when p has none.
py::object velocities_array(const Particles& p);

//! The domain of `domain`: None gives none (each call's default), else a sequence
//! (x0, y0[, z0], side), checked like --domain and against the particles (ValueError).
std::optional<Domain> domain_of(const py::object& domain, const Particles& p, const char* what);

//! A level argument: "auto" gives kAutoLevel, an int itself (TypeError otherwise).
int level_of(const py::object& level);
//! An optional int (None gives `none`).
int int_or(const py::object& v, int none, const char* what);
//! The same for a 64-bit integer.
std::int64_t int64_or(const py::object& v, std::int64_t none, const char* what);
//! A bool (None: `none`), a TypeError naming `what` otherwise.
bool bool_or(const py::object& v, bool none, const char* what);
//! `leaf_size`: None is 0 (the automatic size), else an int of at least 1 (TypeError, ValueError).
std::uint32_t leaf_size_of(const py::object& v);
//! `order_sample`: None is 0 (the order from the error model), else an int of at least 2
//! (TypeError, ValueError).
std::uint32_t order_sample_of(const py::object& v);
//! An optional float (None gives `none`).
double float_or(const py::object& v, double none, const char* what);
//! An optional string (None gives "").
std::string string_or_empty(const py::object& v, const char* what);

}  // namespace nf::python
