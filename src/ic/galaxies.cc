#include "ic/galaxies.h"

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/errors.h"
#include "core/random.h"
#include "ic/sampling.h"

namespace nf {
namespace {

using Vec = Eigen::Vector3d;
constexpr double kPi = 3.141592653589793;

// Masses and scales of one galaxy.
struct Galaxy {
  double mass[3];  // disk, bulge, halo
  double disk_scale, disk_height, bulge_scale, halo_scale;
};

double plummer_mass(double r, double m, double a) { return m * r * r * r / std::pow(r * r + a * a, 1.5); }

// Mass inside radius r, every component counted spherically (the disk by its cylindrical profile).
double enclosed_mass(const Galaxy& g, double r) {
  const double x = r / g.disk_scale;
  return g.mass[0] * (1.0 - (1.0 + x) * std::exp(-x)) + plummer_mass(r, g.mass[1], g.bulge_scale) +
         plummer_mass(r, g.mass[2], g.halo_scale);
}

// Isotropic Jeans dispersion of a Plummer component of radius a in the galaxy's total potential,
// sigma^2(r) = (1 / rho(r)) int_r^inf rho(s) M(s) / s^2 ds, and the potential phi(r), both
// tabulated on a logarithmic grid and interpolated in log r.
class SphericalTables {
 public:
  SphericalTables(const Galaxy& g, double a) : a_(a) {
    const double r_min = 1e-4 * std::min({g.bulge_scale, g.halo_scale, g.disk_scale});
    const double r_max = 1e3 * std::max({g.bulge_scale, g.halo_scale, g.disk_scale});
    log_min_ = std::log(r_min);
    step_ = (std::log(r_max) - log_min_) / (kPoints - 1);
    sigma2_.assign(kPoints, 0.0);
    phi_.assign(kPoints, 0.0);
    // Outside r_max: the galaxy is a point mass, and rho M / s^2 ~ s^-7 adds nothing visible.
    double jeans = 0.0, pot = enclosed_mass(g, r_max) / r_max;
    auto integrand = [&](double s, double& j, double& p) {
      const double m = enclosed_mass(g, s);
      j = density(s) * m / (s * s) * s;  // d/d(ln s)
      p = m / (s * s) * s;
    };
    double jn, pn;
    integrand(r_max, jn, pn);
    sigma2_[kPoints - 1] = 0.0;
    phi_[kPoints - 1] = -pot;
    for (int k = kPoints - 2; k >= 0; --k) {
      double jk, pk;
      integrand(radius(k), jk, pk);
      jeans += 0.5 * (jk + jn) * step_;
      pot += 0.5 * (pk + pn) * step_;
      sigma2_[k] = jeans / density(radius(k));
      phi_[k] = -pot;
      jn = jk, pn = pk;
    }
  }
  double sigma2(double r) const { return interpolate(sigma2_, r); }
  double phi(double r) const { return interpolate(phi_, r); }

 private:
  static constexpr int kPoints = 2000;
  double density(double s) const { return std::pow(1.0 + s * s / (a_ * a_), -2.5); }
  double radius(int k) const { return std::exp(log_min_ + k * step_); }
  double interpolate(const std::vector<double>& t, double r) const {
    const double x = std::clamp((std::log(std::max(r, 1e-300)) - log_min_) / step_, 0.0, double(kPoints - 1));
    const int k = std::min(static_cast<int>(x), kPoints - 2);
    return t[k] + (x - k) * (t[k + 1] - t[k]);
  }
  double a_, log_min_ = 0.0, step_ = 1.0;
  std::vector<double> sigma2_, phi_;
};

Vec gaussian(Random& r) { return {r.normal(), r.normal(), r.normal()}; }

struct Body {
  Vec pos, vel;
};

void disk(const Galaxy& g, Random& r, std::vector<Body>& out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    double R;
    do R = -g.disk_scale * std::log(std::max(r.uniform(), 1e-300) * std::max(r.uniform(), 1e-300));
    while (R > 6.0 * g.disk_scale);  // R e^{-R/R_d}: a Gamma(2) draw
    double u;
    do u = r.uniform();
    while (u <= 0.0);
    const double z = g.disk_height * std::atanh(2.0 * u - 1.0);  // sech^2 profile
    const double phi = 2.0 * kPi * r.uniform();
    const double vc = R > 0.0 ? std::sqrt(enclosed_mass(g, R) / R) : 0.0;
    const Vec pos(R * std::cos(phi), R * std::sin(phi), z);
    const Vec vel = vc * Vec(-std::sin(phi), std::cos(phi), 0.0) + 0.1 * vc * gaussian(r);
    out.push_back({pos, vel});
  }
}

void spheroid(const Galaxy& g, double a, Random& r, std::vector<Body>& out, std::size_t n) {
  const SphericalTables t(g, a);
  for (std::size_t i = 0; i < n; ++i) {
    const double radius = plummer_radius(r, a);
    const double sigma = std::sqrt(std::max(t.sigma2(radius), 0.0));
    const double v_cap = 0.95 * std::sqrt(-2.0 * t.phi(radius));
    Vec vel;
    do vel = sigma * gaussian(r);
    while (vel.norm() >= v_cap);
    out.push_back({radius * isotropic_direction(r), vel});
  }
}

}  // namespace

Particles make_galaxies(std::int64_t n, std::uint64_t seed, const GalaxyModel& m) {
  if (n < 10) throw UsageError("galaxies needs at least 10 particles (every component of both galaxies), not " +
                               std::to_string(n));
  const double total = m.disk_mass + m.bulge_mass + m.halo_mass;
  if (!(m.disk_mass > 0 && m.bulge_mass > 0 && m.halo_mass > 0))
    throw UsageError("galaxies: component masses must be positive");
  if (!(m.disk_fraction > 0 && m.bulge_fraction > 0 && m.disk_fraction + m.bulge_fraction < 1))
    throw UsageError("galaxies: particle fractions must be positive and leave some for the halo");
  if (!(m.eccentricity >= 0 && m.eccentricity < 1 && m.pericentre > 0))
    throw UsageError("galaxies: the orbit must be bound (0 <= e < 1) with a positive pericentre");
  const double semi_major = m.pericentre / (1.0 - m.eccentricity), apocentre = semi_major * (1.0 + m.eccentricity);
  if (!(m.separation >= m.pericentre && m.separation <= apocentre))
    throw UsageError("galaxies: the separation must lie between pericentre and apocentre");

  // Both galaxies weigh 0.5 (total mass 1, as every generator); galaxy 1 gets the odd particle.
  const Galaxy g{{0.5 * m.disk_mass / total, 0.5 * m.bulge_mass / total, 0.5 * m.halo_mass / total},
                 m.disk_scale, m.disk_height, m.bulge_scale, m.halo_scale};
  const std::int64_t per[2] = {(n + 1) / 2, n / 2};
  std::size_t count[2][3];
  for (int k = 0; k < 2; ++k) {
    count[k][0] = static_cast<std::size_t>(std::floor(per[k] * m.disk_fraction));
    count[k][1] = static_cast<std::size_t>(std::floor(per[k] * m.bulge_fraction));
    count[k][2] = static_cast<std::size_t>(per[k]) - count[k][0] - count[k][1];
  }

  // Relative orbit of two point masses of total mass 1: galaxy 2 at (d, 0, 0) from galaxy 1,
  // falling in (radial velocity < 0), angular momentum along +z.
  const double d = m.separation;
  const double v2 = 2.0 / d - 1.0 / semi_major;
  const double vt = std::sqrt(semi_major * (1.0 - m.eccentricity * m.eccentricity)) / d;
  const Vec rel_pos(d, 0.0, 0.0), rel_vel(-std::sqrt(std::max(0.0, v2 - vt * vt)), vt, 0.0);
  const Vec centre[2] = {-0.5 * rel_pos, 0.5 * rel_pos}, drift[2] = {-0.5 * rel_vel, 0.5 * rel_vel};
  const double tilt[2] = {m.tilt1_degrees * kPi / 180.0, m.tilt2_degrees * kPi / 180.0};

  Random r(seed);
  std::vector<Body> body[2][3];
  for (int k = 0; k < 2; ++k) {
    disk(g, r, body[k][0], count[k][0]);
    spheroid(g, g.bulge_scale, r, body[k][1], count[k][1]);
    spheroid(g, g.halo_scale, r, body[k][2], count[k][2]);
    // Centre of mass and its velocity to zero, then tilt, then onto the orbit.
    Vec com = Vec::Zero(), cov = Vec::Zero();
    for (int c = 0; c < 3; ++c)
      for (const Body& b : body[k][c]) {
        const double mi = g.mass[c] / body[k][c].size();
        com += mi * b.pos;
        cov += mi * b.vel;
      }
    com /= 0.5;
    cov /= 0.5;
    const Eigen::Matrix3d rot = Eigen::AngleAxisd(tilt[k], Vec::UnitX()).toRotationMatrix();
    for (auto& comp : body[k])
      for (Body& b : comp) {
        b.pos = rot * (b.pos - com) + centre[k];
        b.vel = rot * (b.vel - cov) + drift[k];
      }
  }

  Particles p;
  p.dim = 3;
  for (int c = 0; c < 3; ++c)  // Dubinski's order: disks, bulges, halos; galaxy 1 first in each
    for (int k = 0; k < 2; ++k)
      for (const Body& b : body[k][c]) {
        p.x.push_back(b.pos[0]);
        p.y.push_back(b.pos[1]);
        p.z.push_back(b.pos[2]);
        p.vx.push_back(b.vel[0]);
        p.vy.push_back(b.vel[1]);
        p.vz.push_back(b.vel[2]);
        p.m.push_back(g.mass[c] / static_cast<double>(body[k][c].size()));
      }
  return p;
}

}  // namespace nf
