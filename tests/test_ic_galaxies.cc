// The galaxy-collision generator (ic/galaxies.h): counts in Dubinski's order, masses, centre of
// mass at rest, two rotating disks with the documented spins, virial balance, and a bound
// approaching orbit.
#include <Eigen/Core>
#include <Eigen/Geometry>  // cross products
#include <cmath>

#include "core/errors.h"
#include "ic/galaxies.h"
#include "helpers.h"

using namespace nf;
using Vec = Eigen::Vector3d;

namespace {

Vec pos(const Particles& p, std::size_t i) { return {p.x[i], p.y[i], p.z[i]}; }
Vec vel(const Particles& p, std::size_t i) { return {p.vx[i], p.vy[i], p.vz[i]}; }

// Row ranges of (galaxy k, component c) for n particles, by the documented split.
struct Ranges {
  std::size_t begin[2][3], end[2][3];
  explicit Ranges(std::size_t n) {
    const std::size_t per[2] = {(n + 1) / 2, n / 2};
    std::size_t count[2][3];
    for (int k = 0; k < 2; ++k) {
      count[k][0] = static_cast<std::size_t>(std::floor(per[k] * 0.4));
      count[k][1] = static_cast<std::size_t>(std::floor(per[k] * 0.2));
      count[k][2] = per[k] - count[k][0] - count[k][1];
    }
    std::size_t at = 0;
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 2; ++k) {
        begin[k][c] = at;
        at += count[k][c];
        end[k][c] = at;
      }
  }
};

struct Moments {
  double mass = 0.0;
  Vec com = Vec::Zero(), cov = Vec::Zero();
};

Moments moments(const Particles& p, const Ranges& r, int k) {
  Moments m;
  for (int c = 0; c < 3; ++c)
    for (std::size_t i = r.begin[k][c]; i < r.end[k][c]; ++i) {
      m.mass += p.m[i];
      m.com += p.m[i] * pos(p, i);
      m.cov += p.m[i] * vel(p, i);
    }
  m.com /= m.mass;
  m.cov /= m.mass;
  return m;
}

}  // namespace

TEST_CASE("galaxies: Dubinski's counts and order, masses per component, centre of mass at rest") {
  const Particles p = make_galaxies(81920, 3);
  REQUIRE(p.size() == 81920);
  CHECK(p.dim == 3);
  REQUIRE(p.has_velocities());
  const Ranges r(p.size());
  // Dubinski's rows: disks 0..32767, bulges 32768..49151, halos 49152..81919, galaxy 1 first.
  CHECK(r.begin[1][0] == 16384);
  CHECK(r.begin[0][1] == 32768);
  CHECK(r.begin[0][2] == 49152);
  CHECK(r.begin[1][2] == 65536);
  const GalaxyModel model;
  const double fraction[3] = {model.disk_mass, model.bulge_mass, model.halo_mass};
  double total = 0.0;
  Vec momentum = Vec::Zero(), moment = Vec::Zero();
  for (int k = 0; k < 2; ++k)
    for (int c = 0; c < 3; ++c) {
      double sum = 0.0;
      for (std::size_t i = r.begin[k][c]; i < r.end[k][c]; ++i) {
        CHECK(p.m[i] == p.m[r.begin[k][c]]);  // equal masses within a component
        sum += p.m[i];
      }
      CHECK(sum == doctest::Approx(0.5 * fraction[c]).epsilon(1e-12));
    }
  for (std::size_t i = 0; i < p.size(); ++i) {
    total += p.m[i];
    momentum += p.m[i] * vel(p, i);
    moment += p.m[i] * pos(p, i);
  }
  CHECK(total == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(moment.norm() < 1e-12 * model.separation);
  CHECK(momentum.norm() < 1e-13);
}

TEST_CASE("galaxies: a bound orbit, the two galaxies approaching") {
  for (std::int64_t n : {10, 11, 4096, 81920}) {
    CAPTURE(n);
    const Particles p = make_galaxies(n, 5);
    REQUIRE(p.size() == static_cast<std::size_t>(n));
    const Ranges r(p.size());
    const Moments g1 = moments(p, r, 0), g2 = moments(p, r, 1);
    CHECK(g1.mass == doctest::Approx(0.5).epsilon(1e-12));
    CHECK(g2.mass == doctest::Approx(0.5).epsilon(1e-12));
    const Vec d = g2.com - g1.com, v = g2.cov - g1.cov;
    CHECK(d.norm() == doctest::Approx(20.0).epsilon(1e-9));
    CHECK(d.dot(v) < 0.0);  // approaching
    const double mu = g1.mass * g2.mass / (g1.mass + g2.mass);
    const double energy = 0.5 * mu * v.squaredNorm() - g1.mass * g2.mass / d.norm();
    CHECK(energy < 0.0);  // bound
    // Pericentre of that two-body orbit, from its energy and angular momentum: the documented 3.
    const double L = mu * d.cross(v).norm(), M = g1.mass + g2.mass;
    const double a = -g1.mass * g2.mass / (2.0 * energy), e = std::sqrt(1.0 - L * L / (mu * mu * M * a));
    CHECK(a * (1.0 - e) == doctest::Approx(3.0).epsilon(1e-9));
  }
}

TEST_CASE("galaxies: rotating thin disks with the documented spin axes, virial balance") {
  const Particles p = make_galaxies(8192, 7);
  const Ranges r(p.size());
  const double tilt[2] = {0.0, 60.0 * 3.141592653589793 / 180.0};
  for (int k = 0; k < 2; ++k) {
    CAPTURE(k);
    const Moments g = moments(p, r, k);
    const Vec axis(0.0, -std::sin(tilt[k]), std::cos(tilt[k]));
    Vec L = Vec::Zero();
    double height2 = 0.0, radius2 = 0.0;
    const std::size_t nd = r.end[k][0] - r.begin[k][0];
    for (std::size_t i = r.begin[k][0]; i < r.end[k][0]; ++i) {
      const Vec x = pos(p, i) - g.com, u = vel(p, i) - g.cov;
      L += p.m[i] * x.cross(u);
      const double h = x.dot(axis);
      height2 += h * h;
      radius2 += x.squaredNorm() - h * h;
    }
    CHECK(L.normalized().dot(axis) > 0.99);
    CHECK(std::sqrt(height2 / nd) < 0.25 * std::sqrt(radius2 / nd));  // thin
    // 2K / |W| of the galaxy alone (direct float64 sum over its pairs) close to 1: in equilibrium.
    std::vector<std::size_t> idx;
    for (int c = 0; c < 3; ++c)
      for (std::size_t i = r.begin[k][c]; i < r.end[k][c]; ++i) idx.push_back(i);
    double kinetic = 0.0, potential = 0.0;
    for (std::size_t a = 0; a < idx.size(); ++a) {
      const std::size_t i = idx[a];
      kinetic += 0.5 * p.m[i] * (vel(p, i) - g.cov).squaredNorm();
      for (std::size_t b = a + 1; b < idx.size(); ++b)
        potential -= p.m[i] * p.m[idx[b]] / (pos(p, i) - pos(p, idx[b])).norm();
    }
    const double ratio = 2.0 * kinetic / -potential;
    MESSAGE("galaxy " << k + 1 << ": 2K/|W| = " << ratio);
    CHECK(ratio > 0.8);
    CHECK(ratio < 1.2);
  }
}

TEST_CASE("galaxies: seeded, and bad requests refused") {
  const Particles a = make_galaxies(500, 1), b = make_galaxies(500, 1), c = make_galaxies(500, 2);
  CHECK(a.x == b.x);
  CHECK(a.vz == b.vz);
  CHECK(a.x != c.x);
  CHECK_THROWS_AS(make_galaxies(9, 1), UsageError);
  GalaxyModel far;
  far.separation = 100.0;  // beyond the apocentre of the default orbit (57)
  CHECK_THROWS_AS(make_galaxies(100, 1, far), UsageError);
  GenerateOptions o;
  o.dist = "galaxies";
  o.n = 100;
  o.dim = 2;
  CHECK_THROWS_AS(generate(o), UsageError);
  o.dim = 3;
  o.mass = "random";
  CHECK_THROWS_AS(generate(o), UsageError);
  o.mass = "equal";
  CHECK(generate(o).size() == 100);
}
