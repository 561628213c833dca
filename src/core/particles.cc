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

std::pair<std::size_t, std::size_t> Particles::repeated_id() const {
  // Ids in increasing order (row numbers, a snapshot of them) are distinct without a sort.
  if (std::adjacent_find(id.begin(), id.end(), [](std::int64_t a, std::int64_t b) { return a >= b; }) == id.end())
    return {0, 0};
  std::vector<std::size_t> row(id.size());
  for (std::size_t i = 0; i < row.size(); ++i) row[i] = i;
  std::stable_sort(row.begin(), row.end(), [&](std::size_t a, std::size_t b) { return id[a] < id[b]; });
  std::pair<std::size_t, std::size_t> first{0, 0};
  for (std::size_t k = 1; k < row.size(); ++k)  // the repeat on the earliest row
    if (id[row[k]] == id[row[k - 1]] && (first.second == 0 || row[k] < first.second)) first = {row[k - 1], row[k]};
  return first;
}

void refuse_repeated_ids(const std::string& path, const Particles& p) {
  const auto [i, j] = p.repeated_id();
  if (j != 0)
    throw UsageError("cannot write " + path + ": particle " + std::to_string(j) + " has id " + std::to_string(p.id[j]) +
                     ", already the id of particle " + std::to_string(i) + " (ids must be unique)");
}

}  // namespace nf
