#include "common/particles.h"

#include <algorithm>

#include "common/errors.h"

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

const char* to_string(Precision p) { return p == Precision::f32 ? "float" : "double"; }

Precision parse_precision(const std::string& text) {
  if (text == "float" || text == "f32" || text == "single" || text == "float32") return Precision::f32;
  if (text == "double" || text == "f64" || text == "float64") return Precision::f64;
  throw UsageError("unknown precision '" + text + "' (expected float or double)");
}

}  // namespace nf
