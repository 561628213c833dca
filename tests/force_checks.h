#pragma once
// The one test body every kernel runs through, CPU or GPU: prepare, poison the output, run,
// and compare with the float64 reference computed on exactly the inputs the kernel saw.
#include <cmath>
#include <string>

#include "core/bodies.h"
#include "measure/validation.h"
#include "methods/force_method.h"
#include "methods/registry.h"
#include "tree/domain.h"
#include "helpers.h"
#include "tree/tree.h"

namespace nf::test {

//! Float64 near-field (or, with all = true, all-pairs) reference, written independently of the
//! kernels: a plain double loop over every pair with the box test done on the spot.
inline std::vector<double> naive_reference(const Particles& p, int level, const Domain& d, double eps,
                                           Precision seen, bool all) {
  const std::vector<Body<double>> b = bodies_as_seen(p, seen);
  const std::size_t n = p.size();
  const int dim = p.dim;
  std::vector<double> acc(n * dim, 0.0);
  std::vector<double> box(n * 3, 0.0);  // floor((x - x0) / side * 2^K), clamped, per axis
  for (std::size_t i = 0; i < n; ++i)
    for (int a = 0; a < dim; ++a) {
      const double s = (p.coord(i, a) - d.origin[a]) / d.side * std::ldexp(1.0, level);
      box[i * 3 + a] = std::min(std::max(std::floor(s), 0.0), std::ldexp(1.0, level) - 1.0);
    }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      bool near = true;
      for (int a = 0; a < dim && !all; ++a) near = near && std::abs(box[i * 3 + a] - box[j * 3 + a]) <= 1.0;
      if (!near) continue;
      const double r[3] = {b[j].x - b[i].x, b[j].y - b[i].y, dim == 3 ? b[j].z - b[i].z : 0.0};
      const double d2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + eps * eps;
      if (d2 == 0.0) continue;
      const double s = b[j].m / (d2 * std::sqrt(d2));
      for (int a = 0; a < dim; ++a) acc[i * dim + a] += s * r[a];
    }
  return acc;
}

struct KernelCase {
  std::string kernel;
  Precision precision = Precision::f32;
  int level = 3;
  double softening = 1e-3;
  Mask mask = Mask::near;  // all-pairs kernels; near-field kernels ignore it
  std::string domain;      // explicit domain text, or empty for the default
};

//! Runs the case and returns its metrics after checking the accelerations (input order) are
//! finite, within the tolerance of `reference` (the same inputs, float64), and repeatable bit for
//! bit when the kernel claims to be deterministic.
inline Metrics check_kernel(const Particles& p, const KernelCase& c, const std::vector<double>& reference) {
  CAPTURE(c.kernel);
  CAPTURE(to_string(c.precision));
  CAPTURE(p.size());
  CAPTURE(p.dim);
  CAPTURE(c.level);
  CAPTURE(c.softening);
  const KernelInfo& k = find_kernel(c.kernel);
  MethodSetup s;
  s.level = c.level;
  s.domain = resolve_domain(p, c.domain, "test");
  s.softening = c.softening;
  s.precision = c.precision;
  s.mask = c.mask;
  REQUIRE(reference.size() == p.size() * p.dim);
  // Output poisoned with NaN first; kernels flagged deterministic run twice, compared bit for bit.
  const KernelCheck check = validate_kernel(k, p, s, reference);
  const Metrics& m = check.metrics;
  CAPTURE(m.rel_l2);
  CAPTURE(m.max_rel);
  CAPTURE(m.momentum);
  CHECK(m.finite);
  CHECK(m.rel_l2 <= tolerance(c.precision));
  CHECK(check.repeat_checked == k.deterministic());
  CHECK(check.repeatable);
  if (k.newton3()) CHECK(m.momentum <= (c.precision == Precision::f32 ? 1e-5 : 1e-13));
  return m;
}

//! One evaluation of kernel k on p: its accelerations in input order.
inline std::vector<double> forces(const KernelInfo& k, const Particles& p, const MethodSetup& s) {
  auto m = make_method(k, s, p);
  m->prepare(p);
  m->evaluate();
  return m->accelerations();
}

//! check_kernel against the naive reference of the case's own inputs.
inline Metrics check_kernel(const Particles& p, const KernelCase& c) {
  const Domain d = resolve_domain(p, c.domain, "test");
  const bool all = !find_kernel(c.kernel).near_field() && c.mask == Mask::all;
  return check_kernel(p, c, naive_reference(p, c.level, d, c.softening, c.precision, all));
}

//! Names of the registered kernels with all `required` and none of `excluded` traits: tests
//! iterate these, so a newly registered kernel is checked by every input without being listed.
inline std::vector<std::string> kernel_names(unsigned required, unsigned excluded = 0) {
  std::vector<std::string> names;
  for (const KernelInfo* k : kernels_with(required, excluded)) names.push_back(k->name);
  return names;
}

//! Interactions a near-field kernel evaluates when run in counting mode.
inline unsigned long long count_interactions(const Particles& p, const std::string& kernel, int level) {
  MethodSetup s;
  s.level = level;
  s.domain = default_domain(p);
  s.count_interactions = true;
  auto m = make_method(find_kernel(kernel), s, p);
  m->prepare(p);
  m->evaluate();
  return m->counted_interactions();
}

//! The near-field inputs every near-field kernel is checked on: (particles, level, domain text).
struct NearFieldInput {
  std::string what;
  Particles p;
  int level;
  std::string domain;
};

inline std::vector<NearFieldInput> near_field_inputs() {
  std::vector<NearFieldInput> in;
  in.push_back({"uniform 2D", make("uniform", 2, 3001, 1), 4, ""});
  in.push_back({"uniform 3D", make("uniform", 3, 2999, 2), 3, ""});
  in.push_back({"uniform-exact 2D", make_exact(2, 4, 7, 3), 4, ""});
  in.push_back({"uniform-exact 3D", make_exact(3, 2, 9, 4), 2, ""});
  in.push_back({"plummer 3D", make("plummer", 3, 2500, 5), 4, ""});
  in.push_back({"level 0 (one box)", make("uniform", 2, 400, 6), 0, ""});
  in.push_back({"level 1 (everything near)", make("uniform", 3, 501, 7), 1, ""});
  in.push_back({"no particles", from_points(2, {}), 3, ""});
  in.push_back({"one particle", from_points(3, {{0.1, 0.2, 0.3}}), 2, ""});
  in.push_back({"two particles", from_points(2, {{0.1, 0.2}, {0.9, 0.8}}), 1, ""});
  // Points on box faces and on the domain's upper face.
  std::vector<std::vector<double>> faces;
  for (int i = 0; i <= 12; ++i)
    for (int j = 0; j <= 12; ++j) faces.push_back({i / 12.0, j / 8.0 > 1.0 ? 1.0 : j / 8.0});
  in.push_back({"faces", from_points(2, faces), 3, "0,0,1.5"});
  // Clustered: a box of more than 1024 particles (several block-sized chunks) next to empty ones.
  std::vector<std::vector<double>> crowd;
  nf::Random r(9);
  for (int i = 0; i < 2600; ++i) crowd.push_back({0.40 + 0.02 * r.uniform(), 0.40 + 0.02 * r.uniform(), 0.5});
  for (int i = 0; i < 700; ++i) crowd.push_back({0.47 + 0.02 * r.uniform(), 0.41 + 0.01 * r.uniform(), 0.5});
  for (int i = 0; i < 40; ++i) crowd.push_back({r.uniform(), r.uniform(), r.uniform()});
  in.push_back({"clustered 3D", from_points(3, crowd), 4, "0,0,0,1"});
  return in;
}

}  // namespace nf::test
