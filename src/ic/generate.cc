#include "ic/generate.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "tree/box_rule.h"
#include "core/errors.h"
#include "core/numbers.h"
#include "ic/galaxies.h"
#include "core/random.h"
#include "ic/sampling.h"

namespace nf {
namespace {

using Vec = Eigen::Vector3d;

std::int64_t boxes_at(int dim, int level) { return std::int64_t(1) << (dim * level); }

std::int64_t particle_count(const GenerateOptions& o) {
  const bool by_boxes = o.level >= 0 || o.ppb >= 0;
  if (by_boxes && o.n >= 0) throw UsageError("give either --n or --level with --ppb, not both");
  if (by_boxes) {
    if (o.level < 0 || o.ppb < 0) throw UsageError("--level and --ppb go together");
    if (o.level > max_level(o.dim))
      throw UsageError("--level " + std::to_string(o.level) + " is deeper than the deepest " + std::to_string(o.dim) +
                       "D level, " + std::to_string(max_level(o.dim)));
    // 4^K P or 8^K P without overflow: deep levels hold more boxes than particles are allowed.
    const std::int64_t limit = (std::int64_t(1) << 31) - 1;
    if (o.ppb > 0 && (o.dim * o.level >= 31 || boxes_at(o.dim, o.level) > limit / o.ppb))
      throw UsageError("--level " + std::to_string(o.level) + " with --ppb " + std::to_string(o.ppb) +
                       " gives more than 2^31 - 1 particles");
    return boxes_at(o.dim, o.level) * o.ppb;
  }
  if (o.n < 0) throw UsageError("give --n, or --level with --ppb");
  return o.n;
}

// One Plummer particle (Aarseth, Henon & Wielen 1974) of total mass 1 and scale radius a; G = 1.
void plummer_particle(Random& r, double a, Vec& pos, Vec& vel) {
  const double radius = plummer_radius(r, a);
  pos = radius * isotropic_direction(r);
  // Speed: q = v / v_escape has density proportional to g(q) = q^2 (1 - q^2)^3.5, below 0.1.
  double q, g;
  do {
    q = r.uniform();
    g = q * q * std::pow(1.0 - q * q, 3.5);
  } while (0.1 * r.uniform() >= g);
  const double v_escape = std::sqrt(2.0 / a) * std::pow(1.0 + radius * radius / (a * a), -0.25);
  vel = q * v_escape * isotropic_direction(r);
}

void store(Particles& p, std::size_t i, const Vec& pos) {
  p.x[i] = pos[0];
  p.y[i] = pos[1];
  if (p.dim == 3) p.z[i] = pos[2];
}

void store_velocity(Particles& p, std::size_t i, const Vec& v) {
  p.vx[i] = v[0];
  p.vy[i] = v[1];
  if (p.dim == 3) p.vz[i] = v[2];
}

void uniform_exact(Particles& p, Random& r, int level, std::int64_t ppb) {
  const int d = p.dim;
  const std::uint32_t n = 1u << level;
  const double h = 1.0 / n;
  std::size_t i = 0;
  const std::int64_t nbox = boxes_at(d, level);
  for (std::int64_t b = 0; b < nbox; ++b) {
    // Box coordinates in row-major order (the box order does not matter: rows are shuffled).
    std::uint32_t c[3] = {static_cast<std::uint32_t>(b % n), static_cast<std::uint32_t>((b / n) % n),
                          static_cast<std::uint32_t>(b / (std::int64_t(n) * n))};
    for (std::int64_t k = 0; k < ppb; ++k, ++i) {
      Vec pos = Vec::Zero();
      for (int a = 0; a < d; ++a) {
        // Resample the rare draw that rounds onto the box's upper face.
        do pos[a] = (c[a] + r.uniform()) * h;
        while (box_coordinate(pos[a], 0.0, 1.0, level) != c[a]);
      }
      store(p, i, pos);
    }
  }
  // Pin the default domain to exactly [0,1]^D: the first point of box 0 at the origin and the
  // last point of the last box at the far corner (the upper face belongs to the last box).
  if (p.size() > 0) store(p, 0, Vec::Zero());
  if (p.size() > 1) store(p, p.size() - 1, Vec::Ones());
}

// Uniform in [0,1)^D in parallel, from the counter-based stream: coordinate a of particle i is
// draw i * D + a, a random mass draw N * D + i. Billions of particles take seconds, not minutes.
void uniform_fast(Particles& p, std::uint64_t seed, bool random_mass) {
  const long n = static_cast<long>(p.size());
  const int d = p.dim;
  const double inv_n = 1.0 / static_cast<double>(std::max<long>(n, 1));
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    const std::uint64_t k = std::uint64_t(i) * d;
    p.x[i] = counter_uniform(seed, k);
    p.y[i] = counter_uniform(seed, k + 1);
    if (d == 3) p.z[i] = counter_uniform(seed, k + 2);
    p.m[i] = (random_mass ? 0.5 + counter_uniform(seed, std::uint64_t(n) * d + i) : 1.0) * inv_n;
  }
}

void lattice(Particles& p, Random& r, double jitter) {
  const int d = p.dim;
  const std::int64_t n = static_cast<std::int64_t>(p.size());
  const std::int64_t s = std::llround(std::pow(static_cast<double>(n), 1.0 / d));
  for (std::int64_t i = 0; i < n; ++i) {  // n = s^d (check_generate_options)
    const std::int64_t c[3] = {i % s, (i / s) % s, i / (s * s)};
    Vec pos = Vec::Zero();
    for (int a = 0; a < d; ++a) pos[a] = (c[a] + jitter * r.uniform(-0.5, 0.5)) / static_cast<double>(s);
    store(p, static_cast<std::size_t>(i), pos);
  }
}

// Validation layouts that stress the tree (issue 9): a thin shell, one crowded core, empty space.
bool is_extreme_layout(const std::string& dist) { return dist == "shell" || dist == "core" || dist == "corners"; }

void extreme_layout(Particles& p, Random& r, const std::string& dist) {
  const int d = p.dim;
  const std::size_t n = p.size();
  for (std::size_t i = 0; i < n; ++i) {
    Vec pos = Vec::Zero();
    if (dist == "shell") {
      // Sphere (3D) or circle (2D) of radius 0.5 about the centre, 0.1% thick: boxes along a
      // surface, empty inside and outside.
      Vec u;
      if (d == 3) {
        u = isotropic_direction(r);
      } else {
        const double phi = 6.283185307179586 * r.uniform();
        u = Vec(std::cos(phi), std::sin(phi), 0.0);
      }
      pos = Vec::Constant(0.5) + 0.5 * (1.0 - 1e-3 * r.uniform()) * u;
    } else if (dist == "core") {
      // 99% in a cube of side 1e-4 (one box up to level 13), the rest uniform over [0,1)^D.
      const Vec centre(0.3, 0.6, 0.45);
      for (int a = 0; a < d; ++a) pos[a] = i % 100 == 99 ? r.uniform() : centre[a] + 1e-4 * r.uniform();
    } else {
      // The 2^D corners of [0,1]^D, each a cluster of side 1e-3; the first 2^D points sit exactly
      // on the corners (the upper faces belong to the last boxes).
      const std::size_t corner = i % (std::size_t(1) << d);
      for (int a = 0; a < d; ++a) {
        const double inset = i < (std::size_t(1) << d) ? 0.0 : 1e-3 * r.uniform();
        pos[a] = (corner >> a) & 1 ? 1.0 - inset : inset;
      }
    }
    if (d == 2) pos[2] = 0.0;
    store(p, i, pos);
  }
}

}  // namespace

const char* generator_names() {
  return "uniform, uniform-fast, uniform-exact, plummer, clusters, mixed, lattice, shell, core, corners, galaxies";
}

std::int64_t generated_count(const GenerateOptions& o) { return particle_count(o); }

double generated_bytes(const GenerateOptions& o) {
  const bool velocities = o.dist == "plummer" || o.dist == "clusters" || o.dist == "mixed" || o.dist == "galaxies";
  const double n = static_cast<double>(particle_count(o)), d = o.dim == 2 ? 2.0 : 3.0;
  return n * 8.0 * (d + 1.0 + (velocities ? d : 0.0)) * (o.dist == "uniform-exact" ? 2.0 : 1.0);
}

void check_generate_options(const GenerateOptions& o) {
  if (o.dim != 2 && o.dim != 3) throw UsageError("--dim must be 2 or 3, not " + std::to_string(o.dim));
  if (o.mass != "equal" && o.mass != "random")
    throw UsageError("--mass must be equal or random, not '" + o.mass + "'");
  const std::int64_t n = particle_count(o);
  if (n > (std::int64_t(1) << 31) - 1) throw UsageError("at most 2^31 - 1 particles, not " + std::to_string(n));
  if (o.dist == "uniform-exact" && o.level < 0) throw UsageError("uniform-exact needs --level and --ppb");
  if (o.dist == "galaxies") {
    if (o.dim != 3) throw UsageError("galaxies is 3D only (--dim 3)");
    if (o.mass != "equal") throw UsageError("galaxies sets its own masses (per component); --mass must stay equal");
    if (n < 10) throw UsageError("galaxies needs at least 10 particles (every component of both galaxies), not " +
                                 std::to_string(n));
  }
  if (o.dist == "clusters") {
    if (o.clusters < 1) throw UsageError("--clusters must be at least 1");
    // Particle i joins cluster i mod C, so clusters past N hold nothing; their centres were still
    // allocated (2e9 of them: std::bad_alloc). The default 4 stays valid for N < 4 (a generated
    // input of 1 to 3 particles keeps its positions); a larger count must not exceed N.
    if (std::uint64_t(o.clusters) > std::max<std::uint64_t>(std::uint64_t(n), 4))
      throw UsageError("--clusters " + std::to_string(o.clusters) + " is more than the " + std::to_string(n) +
                       " particles: a cluster holds at least one");
  }
  if (o.dist == "lattice") {
    if (!(o.jitter >= 0.0 && o.jitter <= 1.0)) throw UsageError("--jitter must lie in [0, 1], not " + format_double(o.jitter));
    const auto s = static_cast<std::int64_t>(std::llround(std::pow(static_cast<double>(n), 1.0 / o.dim)));
    std::int64_t power = 1;
    for (int a = 0; a < o.dim; ++a) power *= s;
    if (power != n)
      throw UsageError("lattice needs N = s^" + std::to_string(o.dim) + " particles for an integer s; N = " +
                       std::to_string(n) + " is not");
  }
  std::stringstream list(generator_names());
  bool known = false;
  for (std::string name; std::getline(list, name, ',');) known = known || name.substr(name.find_first_not_of(' ')) == o.dist;
  if (!known)
    throw UsageError("unknown distribution '" + o.dist + "' (expected one of: " + generator_names() + ")");
}

Particles generate(const GenerateOptions& o) {
  check_generate_options(o);
  const std::int64_t n = particle_count(o);
  if (o.dist == "galaxies") return make_galaxies(n, o.seed);

  Particles p;
  p.dim = o.dim;
  p.resize(static_cast<std::size_t>(n));
  Random r(o.seed);
  const bool has_velocities = o.dist == "plummer" || o.dist == "clusters" || o.dist == "mixed";
  if (has_velocities) {
    p.vx.resize(p.size());
    p.vy.resize(p.size());
    if (p.dim == 3) p.vz.resize(p.size());
  }

  if (o.dist == "uniform") {
    for (std::size_t i = 0; i < p.size(); ++i) store(p, i, Vec(r.uniform(), r.uniform(), o.dim == 3 ? r.uniform() : 0.0));
  } else if (o.dist == "uniform-fast") {
    uniform_fast(p, o.seed, o.mass == "random");
    return p;
  } else if (o.dist == "uniform-exact") {
    uniform_exact(p, r, o.level, o.ppb);
  } else if (o.dist == "plummer") {
    const double a = 3.0 * 3.141592653589793 / 16.0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      Vec pos, vel;
      plummer_particle(r, a, pos, vel);
      store(p, i, pos);
      store_velocity(p, i, vel);
    }
  } else if (o.dist == "clusters") {  // at most N clusters (check_generate_options)
    std::vector<Vec> centre(static_cast<std::size_t>(o.clusters));
    for (auto& c : centre) c = Vec(r.uniform(0.1, 0.9), r.uniform(0.1, 0.9), o.dim == 3 ? r.uniform(0.1, 0.9) : 0.0);
    for (std::size_t i = 0; i < p.size(); ++i) {
      Vec pos, vel;
      plummer_particle(r, 0.02, pos, vel);
      const Vec& c = centre[i % centre.size()];
      if (o.dim == 2) pos[2] = 0.0;
      store(p, i, pos + c);
      store_velocity(p, i, vel);
    }
  } else if (o.dist == "mixed") {
    // Scales that no one level suits: 40% in a Plummer sphere of scale 0.1, 40% in one of scale
    // 0.005, 20% uniform over [0,1)^D (the background, at rest).
    const Vec wide(0.35, 0.4, 0.45), tight(0.7, 0.65, 0.6);
    for (std::size_t i = 0; i < p.size(); ++i) {
      Vec pos = Vec::Zero(), vel = Vec::Zero();
      const std::size_t part = i % 5;
      if (part < 4) {
        plummer_particle(r, part < 2 ? 0.1 : 0.005, pos, vel);
        pos += part < 2 ? wide : tight;
      } else {
        pos = Vec(r.uniform(), r.uniform(), r.uniform());
      }
      if (o.dim == 2) pos[2] = vel[2] = 0.0;
      store(p, i, pos);
      store_velocity(p, i, vel);
    }
  } else if (is_extreme_layout(o.dist)) {
    extreme_layout(p, r, o.dist);
  } else if (o.dist == "lattice") {  // N = s^d and the jitter checked (check_generate_options)
    lattice(p, r, o.jitter);
  } else {  // check_generate_options refused every other name
    throw std::logic_error("generate: no generator for '" + o.dist + "'");
  }

  for (std::size_t i = 0; i < p.size(); ++i)
    p.m[i] = (o.mass == "random" ? r.uniform(0.5, 1.5) : 1.0) / static_cast<double>(std::max<std::int64_t>(n, 1));

  if (o.dist == "uniform-exact") {
    // Shuffle the rows (Fisher-Yates) so the input is not already in box order.
    std::vector<std::size_t> perm(p.size());
    std::iota(perm.begin(), perm.end(), 0);
    for (std::size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[r.below(i)]);
    Particles q = p;
    for (std::size_t i = 0; i < perm.size(); ++i) {
      q.x[i] = p.x[perm[i]];
      q.y[i] = p.y[perm[i]];
      if (p.dim == 3) q.z[i] = p.z[perm[i]];
      q.m[i] = p.m[perm[i]];
    }
    p = std::move(q);
  }
  return p;
}

}  // namespace nf
