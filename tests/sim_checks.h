#pragma once
// Independent float64 references for simulation tests: forces, potential and kinetic energy of
// all pairs or of the near field (box rule written out here, not taken from the tree code), and a
// leapfrog of their own. Shared by the CPU (test_sim.cc) and GPU (test_gpu_sim.cc) tests.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/particles.h"
#include "helpers.h"
#include "io/particle_file.h"
#include "sim/run_files.h"

namespace nf::test {

//! Box coordinates of every particle at `level` over the default domain of p (docs/design.md §2).
inline std::vector<std::vector<long>> box_coords(const Particles& p, int level) {
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  for (int a = 0; a < p.dim; ++a) {
    lo[a] = hi[a] = p.size() ? p.coord(0, a) : 0.0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      lo[a] = std::min(lo[a], p.coord(i, a));
      hi[a] = std::max(hi[a], p.coord(i, a));
    }
  }
  double side = 0;
  for (int a = 0; a < p.dim; ++a) side = std::max(side, hi[a] - lo[a]);
  if (side == 0) side = 1;
  const long cells = 1L << level;
  std::vector<std::vector<long>> c(p.size(), std::vector<long>(p.dim));
  for (std::size_t i = 0; i < p.size(); ++i)
    for (int a = 0; a < p.dim; ++a)
      c[i][a] = std::clamp(static_cast<long>(std::floor((p.coord(i, a) - lo[a]) / side * double(cells))), 0L, cells - 1);
  return c;
}

//! Which pairs a reference sums: all of them, or the near field at a level (-1: all).
struct PairSet {
  int level = -1;
  std::vector<std::vector<long>> cells;
  PairSet(const Particles& p, int near_level) : level(near_level) {
    if (level >= 0) cells = box_coords(p, level);
  }
  bool has(std::size_t i, std::size_t j) const {
    if (level < 0) return true;
    for (std::size_t a = 0; a < cells[i].size(); ++a)
      if (std::labs(cells[i][a] - cells[j][a]) > 1) return false;
    return true;
  }
};

inline double distance2(const Particles& p, std::size_t i, std::size_t j) {
  double r2 = 0;
  for (int a = 0; a < p.dim; ++a) r2 += (p.coord(j, a) - p.coord(i, a)) * (p.coord(j, a) - p.coord(i, a));
  return r2;
}

//! Accelerations (dim per particle) of the pairs in `near_level`'s set; `sources`: (index, mass)
//! of the sources (default: every particle with its mass).
inline std::vector<double> reference_acc(const Particles& p, double eps, int near_level = -1,
                                         std::vector<std::pair<std::size_t, double>> sources = {}) {
  if (sources.empty())
    for (std::size_t j = 0; j < p.size(); ++j) sources.emplace_back(j, p.m[j]);
  const PairSet set(p, near_level);
  std::vector<double> a(p.size() * p.dim, 0.0);
  for (std::size_t i = 0; i < p.size(); ++i)
    for (const auto& [j, mj] : sources) {
      if (j == i || !set.has(i, j)) continue;
      const double d2 = distance2(p, i, j) + eps * eps;
      if (d2 == 0) continue;
      const double s = mj / (d2 * std::sqrt(d2));
      for (int ax = 0; ax < p.dim; ++ax) a[i * p.dim + ax] += s * (p.coord(j, ax) - p.coord(i, ax));
    }
  return a;
}

inline double reference_potential(const Particles& p, double eps, int near_level = -1) {
  const PairSet set(p, near_level);
  double u = 0;
  for (std::size_t i = 0; i < p.size(); ++i)
    for (std::size_t j = i + 1; j < p.size(); ++j) {
      if (!set.has(i, j)) continue;
      const double d2 = distance2(p, i, j) + eps * eps;
      if (d2 > 0) u -= p.m[i] * p.m[j] / std::sqrt(d2);
    }
  return u;
}

inline double reference_kinetic(const Particles& p) {
  double k = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    double v2 = p.vx[i] * p.vx[i] + p.vy[i] * p.vy[i];
    if (p.dim == 3) v2 += p.vz[i] * p.vz[i];
    k += 0.5 * p.m[i] * v2;
  }
  return k;
}

//! `steps` leapfrog KDK steps of the reference forces (near field at `near_level`, -1: all pairs).
inline Particles reference_leapfrog(Particles p, double dt, int steps, double eps, int near_level = -1) {
  p.add_velocities();
  std::vector<double>* x[3] = {&p.x, &p.y, &p.z};
  std::vector<double>* v[3] = {&p.vx, &p.vy, &p.vz};
  std::vector<double> a = reference_acc(p, eps, near_level);
  for (int s = 0; s < steps; ++s) {
    for (std::size_t i = 0; i < p.size(); ++i)
      for (int ax = 0; ax < p.dim; ++ax) {
        (*v[ax])[i] += a[i * p.dim + ax] * (dt / 2);
        (*x[ax])[i] += (*v[ax])[i] * dt;
      }
    a = reference_acc(p, eps, near_level);
    for (std::size_t i = 0; i < p.size(); ++i)
      for (int ax = 0; ax < p.dim; ++ax) (*v[ax])[i] += a[i * p.dim + ax] * (dt / 2);
  }
  return p;
}

//! Largest |difference| of positions (or velocities) between two snapshots of the same particles.
inline double max_position_diff(const Particles& a, const Particles& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (int ax = 0; ax < a.dim; ++ax) d = std::max(d, std::fabs(a.coord(i, ax) - b.coord(i, ax)));
  return d;
}
inline double max_velocity_diff(const Particles& a, const Particles& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d = std::max({d, std::fabs(a.vx[i] - b.vx[i]), std::fabs(a.vy[i] - b.vy[i])});
    if (a.dim == 3) d = std::max(d, std::fabs(a.vz[i] - b.vz[i]));
  }
  return d;
}

//! `nearfield simulate ARGS` in-process; the test fails (with the messages) unless it exits 0.
inline CliResult simulate_ok(std::vector<std::string> args) {
  args.insert(args.begin(), "simulate");
  const CliResult r = run_cli(args);
  REQUIRE_MESSAGE(r.code == 0, r.err << r.out);
  return r;
}

inline Particles snapshot(const TempDir& dir, const std::string& run, std::uint64_t step, const std::string& ext) {
  return io::read_particles(dir.file(run + "/" + sim::snapshot_name(step, io::parse_file_format(ext))));
}

inline std::vector<sim::EnergyRow> energy_rows(const TempDir& dir, const std::string& run) {
  return sim::read_energy_csv(dir.file(run + "/energy.csv"));
}

//! Plummer sphere with equal masses (1/N), velocities included.
inline Particles plummer(int dim, std::int64_t n, std::uint64_t seed) {
  GenerateOptions g;
  g.dist = "plummer";
  g.dim = dim;
  g.n = n;
  g.seed = seed;
  return generate(g);
}

}  // namespace nf::test
