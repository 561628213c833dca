#include "core/particles.h"

#include <algorithm>
#include <stdexcept>

#include "core/errors.h"

namespace nf {

double Particles::max_mass() const { return m.empty() ? 0.0 : *std::max_element(m.begin(), m.end()); }

void Particles::resize(std::size_t n) {
  x.resize(n);
  y.resize(n);
  m.resize(n);
  if (dim == 3) z.resize(n);
  if (!id.empty()) id.resize(n);
  if (has_velocities()) {
    vx.resize(n);
    vy.resize(n);
    if (dim == 3) vz.resize(n);
  }
}

void Particles::add_velocities() {
  if (has_velocities()) return;
  vx.assign(size(), 0.0);
  vy.assign(size(), 0.0);
  if (dim == 3) vz.assign(size(), 0.0);
}

void Particles::check_sizes() const {
  const std::size_t n = size();
  const bool ok = (dim == 2 || dim == 3) && x.size() == n && y.size() == n && z.size() == (dim == 3 ? n : 0) &&
                  (id.empty() || id.size() == n) &&
                  (vx.empty() ? vy.empty() && vz.empty()
                              : vx.size() == n && vy.size() == n && vz.size() == (dim == 3 ? n : 0));
  if (!ok)
    throw std::logic_error("inconsistent Particles: dim " + std::to_string(dim) + ", " + std::to_string(n) +
                           " masses, x/y/z " + std::to_string(x.size()) + "/" + std::to_string(y.size()) + "/" +
                           std::to_string(z.size()) + ", ids " + std::to_string(id.size()) + ", velocities " +
                           std::to_string(vx.size()) + "/" + std::to_string(vy.size()) + "/" +
                           std::to_string(vz.size()));
}

const char* to_string(Precision p) { return p == Precision::f32 ? "float" : "double"; }

Precision parse_precision(const std::string& text) {
  if (text == "float" || text == "f32" || text == "single" || text == "float32") return Precision::f32;
  if (text == "double" || text == "f64" || text == "float64") return Precision::f64;
  throw UsageError("unknown precision '" + text + "' (expected float or double)");
}

}  // namespace nf
