#include "python/arrays.h"

#include <cmath>
#include <limits>

#include "core/numbers.h"
#include "methods/auto_level.h"

namespace nf::python {

namespace {

// An ndarray (anything else goes through np.asarray) of float32 or float64, C-contiguous, of
// `ndim` dimensions; TypeError/ValueError naming `what` and the problem otherwise.
py::array checked_array(const py::handle& obj, const char* what, int ndim) {
  py::array a = py::array::ensure(obj);
  if (!a) throw py::type_error(std::string(what) + ": not an array (numpy could not convert it)");
  const py::dtype dt = a.dtype();
  const std::string name = py::str(static_cast<const py::handle&>(dt)).cast<std::string>();
  if (!dt.is(py::dtype::of<double>()) && !dt.is(py::dtype::of<float>())) {
    if (dt.kind() != 'f') throw py::type_error(std::string(what) + ": dtype " + name + " is not a floating type: " +
                                               "nearfield takes float32 or float64 (use .astype(np.float64))");
    throw py::type_error(std::string(what) + ": dtype " + name + " is not supported: nearfield takes float32 or " +
                         "float64 (use .astype(np.float64))");
  }
  if (!(a.flags() & py::array::c_style))
    throw py::type_error(std::string(what) + ": the array is not C-contiguous (a slice or a transpose): pass " +
                         "np.ascontiguousarray(" + what + ")");
  if (a.ndim() != ndim) {
    throw py::value_error(std::string(what) + ": expected " +
                          (ndim == 1 ? std::string("a 1-D array of N values") : "an (N, 2) or (N, 3) array") + ", got " +
                          std::to_string(a.ndim()) + " dimension(s)");
  }
  return a;
}

// Element i of a checked float array as a double.
double at(const py::array& a, py::ssize_t i) {
  return a.dtype().is(py::dtype::of<double>()) ? static_cast<const double*>(a.data())[i]
                                                : static_cast<double>(static_cast<const float*>(a.data())[i]);
}

std::string index_text(const char* what, py::ssize_t row, int col, int dim) {
  return std::string(what) + "[" + std::to_string(row) + (dim > 0 ? ", " + std::to_string(col) : "") + "]";
}

// (N, d) values into the columns of p (d from the array unless `dim` > 0 is required).
void read_columns(const py::array& a, const char* what, int dim, std::vector<double>* cols[3]) {
  const py::ssize_t n = a.shape(0);
  for (int c = 0; c < dim; ++c) cols[c]->resize(static_cast<std::size_t>(n));
  for (py::ssize_t i = 0; i < n; ++i)
    for (int c = 0; c < dim; ++c) {
      const double v = at(a, i * dim + c);
      if (!std::isfinite(v))
        throw py::value_error(index_text(what, i, c, dim) + " is " + format_double(v) + ": values must be finite");
      (*cols[c])[static_cast<std::size_t>(i)] = v;
    }
}

int dim_of(const py::array& a, const char* what) {
  const py::ssize_t d = a.shape(1);
  if (d != 2 && d != 3)
    throw py::value_error(std::string(what) + ": expected an (N, 2) or (N, 3) array, got shape (" +
                          std::to_string(a.shape(0)) + ", " + std::to_string(d) + ")");
  return static_cast<int>(d);
}

}  // namespace

Particles points_from_array(const py::handle& pos, const char* what) {
  const py::array a = checked_array(pos, what, 2);
  Particles p;
  p.dim = dim_of(a, what);
  std::vector<double>* cols[3] = {&p.x, &p.y, &p.z};
  read_columns(a, what, p.dim, cols);
  p.m.assign(p.x.size(), 0.0);
  return p;
}

std::vector<double> masses_from_array(const py::handle& m, std::size_t n, const char* what) {
  const py::array masses = checked_array(m, "m", 1);
  if (static_cast<std::size_t>(masses.shape(0)) != n)
    throw py::value_error("m: " + std::to_string(masses.shape(0)) + " masses for " + std::to_string(n) +
                          " positions (" + what + " has " + std::to_string(n) + " rows)");
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double v = at(masses, static_cast<py::ssize_t>(i));
    if (!std::isfinite(v))
      throw py::value_error(index_text("m", static_cast<py::ssize_t>(i), 0, 0) + " is " + format_double(v) +
                            ": masses must be finite");
    if (v < 0)
      throw py::value_error(index_text("m", static_cast<py::ssize_t>(i), 0, 0) + " = " + format_double(v) +
                            ": negative mass");
    out[i] = v;
  }
  return out;
}

Particles particles_from_arrays(const py::handle& pos, const py::handle& m, const py::handle& vel, const char* what) {
  Particles p = points_from_array(pos, what);
  p.m = masses_from_array(m, p.size(), what);
  if (!vel.is_none()) {
    const py::array v = checked_array(vel, "vel", 2);
    if (v.shape(0) != static_cast<py::ssize_t>(p.size()) || v.shape(1) != p.dim)
      throw py::value_error("vel: expected shape (" + std::to_string(p.size()) + ", " + std::to_string(p.dim) +
                            ") like " + what + ", got (" + std::to_string(v.shape(0)) + ", " +
                            std::to_string(v.shape(1)) + ")");
    std::vector<double>* cols[3] = {&p.vx, &p.vy, &p.vz};
    read_columns(v, "vel", p.dim, cols);
  }
  return p;
}

py::array_t<double> positions_array(const Particles& p) {
  std::vector<double> out(p.size() * static_cast<std::size_t>(p.dim));
  for (std::size_t i = 0; i < p.size(); ++i)
    for (int a = 0; a < p.dim; ++a) out[i * p.dim + a] = p.coord(i, a);
  return owned_array(std::move(out), {static_cast<py::ssize_t>(p.size()), p.dim});
}

py::object velocities_array(const Particles& p) {
  if (!p.has_velocities()) return py::none();
  std::vector<double> out(p.size() * static_cast<std::size_t>(p.dim));
  for (std::size_t i = 0; i < p.size(); ++i) {
    out[i * p.dim] = p.vx[i];
    out[i * p.dim + 1] = p.vy[i];
    if (p.dim == 3) out[i * p.dim + 2] = p.vz[i];
  }
  return owned_array(std::move(out), {static_cast<py::ssize_t>(p.size()), p.dim});
}

std::optional<Domain> domain_of(const py::object& domain, const Particles& p, const char* what) {
  if (domain.is_none()) return std::nullopt;
  std::string text;
  for (const py::handle v : domain) {
    double x = 0;
    try {
      if (py::isinstance<py::str>(v)) throw py::cast_error();
      x = v.cast<double>();
    } catch (const py::cast_error&) {
      throw py::type_error("domain: expected numbers (x0, y0[, z0], side), got " +
                           py::str(py::type::of(v)).cast<std::string>());
    }
    text += (text.empty() ? "" : ",") + format_double(x);
  }
  return resolve_domain(p, text, what);  // --domain's checks and messages
}

// A Python int as a C++ integer, or a TypeError / ValueError naming `what` (pybind11's own cast
// of an int past the C++ type says only "Unable to cast Python instance to C++ type").
long long checked_int(const py::object& v, const std::string& what) {
  if (py::isinstance<py::bool_>(v) || !py::isinstance<py::int_>(v))
    throw py::type_error(what + ": expected an int, got " + py::str(py::type::of(v)).cast<std::string>());
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow != 0) throw py::value_error(what + ": " + py::str(v).cast<std::string>() + " is out of range");
  return x;
}

int level_of(const py::object& level) {
  if (py::isinstance<py::str>(level)) {
    const std::string s = level.cast<std::string>();
    if (s == "auto") return kAutoLevel;
    throw py::value_error("level: '" + s + "' is neither an int nor \"auto\"");
  }
  if (py::isinstance<py::bool_>(level) || !py::isinstance<py::int_>(level))
    throw py::type_error("level: expected an int or \"auto\", got " + py::str(py::type::of(level)).cast<std::string>());
  const long long v = checked_int(level, "level");
  if (v < 0 || v > 64) throw py::value_error("level: " + std::to_string(v) + " is not a valid level");
  return static_cast<int>(v);
}

int int_or(const py::object& v, int none, const char* what) {
  if (v.is_none()) return none;
  const long long x = checked_int(v, what);
  if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max())
    throw py::value_error(std::string(what) + ": " + std::to_string(x) + " is out of range");
  return static_cast<int>(x);
}

std::int64_t int64_or(const py::object& v, std::int64_t none, const char* what) {
  return v.is_none() ? none : checked_int(v, what);
}

bool bool_or(const py::object& v, bool none, const char* what) {
  if (v.is_none()) return none;
  if (!py::isinstance<py::bool_>(v))
    throw py::type_error(std::string(what) + ": expected a bool, got " + py::str(py::type::of(v)).cast<std::string>());
  return v.cast<bool>();
}

std::uint32_t leaf_size_of(const py::object& v) {
  const int leaf = int_or(v, 0, "leaf_size");
  if (!v.is_none() && leaf < 1) throw py::value_error("leaf_size: must be at least 1, not " + std::to_string(leaf));
  return static_cast<std::uint32_t>(leaf);
}

std::uint32_t order_sample_of(const py::object& v) {
  const int m = int_or(v, 0, "order_sample");
  if (!v.is_none() && m < 2) throw py::value_error("order_sample: must be at least 2, not " + std::to_string(m));
  return static_cast<std::uint32_t>(m);
}

double float_or(const py::object& v, double none, const char* what) {
  if (v.is_none()) return none;
  if (py::isinstance<py::bool_>(v) || !(py::isinstance<py::float_>(v) || py::isinstance<py::int_>(v)))
    throw py::type_error(std::string(what) + ": expected a number, got " + py::str(py::type::of(v)).cast<std::string>());
  return v.cast<double>();
}

std::string string_or_empty(const py::object& v, const char* what) {
  if (v.is_none()) return "";
  if (!py::isinstance<py::str>(v))
    throw py::type_error(std::string(what) + ": expected a str, got " + py::str(py::type::of(v)).cast<std::string>());
  return v.cast<std::string>();
}

}  // namespace nf::python
