// A simulation's diagnostics: energy.csv's rows and header lines (sim/diagnostics.h,
// docs/design.md §12).
#include "sim/diagnostics.h"

#include <cmath>

#include "core/numbers.h"
#include "methods/force_method.h"
#include "methods/registry.h"

namespace nf::sim {

bool potential_on_gpu(const ForceMethod& field, std::size_t n) { return field.on_device() && n > kHostPotentialMax; }

double kinetic_energy(const Particles& p) {
  double k = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    double v2 = p.vx[i] * p.vx[i] + p.vy[i] * p.vy[i];
    if (p.dim == 3) v2 += p.vz[i] * p.vz[i];
    k += 0.5 * p.m[i] * v2;
  }
  return k;
}

double relative_l2(const std::vector<double>& a, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - ref[i]) * (a[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

std::vector<std::string> energy_comments(const SimulationConfig& c, const KernelInfo& k, const ForceMethod& field,
                                         bool gpu_potential) {
  return {"nearfield simulate, kernel " + k.name + ", " + to_string(c.precision) + ", dt " + format_double(c.dt) +
              ", softening " + format_double(c.softening),
          "forces: " + field.describe(),
          "potential: -sum_{i<j} m_i m_j / sqrt(r^2 + eps^2) over the pairs the forces use" +
              std::string(field.model() == ForceModel::near_field ? " (the near field)" : " (every pair)") + "; " +
              (gpu_potential ? field.device_potential_method() : std::string("CPU, float64")),
          "rel_energy_error = (E - E0) / |E0|, E0 = total at step 0 (E - E0 where E0 = 0); px,py,pz = sum m v" +
              std::string(c.subsample > 1 ? "; force_rel_error = ||a - a_exact|| / ||a_exact|| over all "
                                            "particles at that step (a_exact: every source)"
                                          : "")};
}

EnergyRow energy_row(std::uint64_t step, const Particles& p, State& state, bool gpu_potential, ForceMethod* exact) {
  EnergyRow r;
  r.step = step;
  r.time = p.time;
  r.kinetic = kinetic_energy(p);
  r.potential = gpu_potential ? state.potential() : state.method().potential(p);
  for (std::size_t i = 0; i < p.size(); ++i) {
    r.px += p.m[i] * p.vx[i];
    r.py += p.m[i] * p.vy[i];
    if (p.dim == 3) r.pz += p.m[i] * p.vz[i];
  }
  if (exact) r.force_rel_error = relative_l2(state.accelerations(), state.accelerations_of(*exact, step));
  return r;
}

}  // namespace nf::sim
