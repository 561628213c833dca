#pragma once
// The one check every kernel runs through, CPU or GPU: prepare, poison the output, run, and
// compare with the float64 reference computed on exactly the inputs the kernel saw; the inputs
// every near-field kernel is checked on; and the two forms (CPU, GPU) of a kernel test.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/bodies.h"
#include "measure/validation.h"
#include "methods/force_method.h"
#include "methods/registry.h"
#include "nearfield/nearfield_cpu.h"
#include "tree/domain.h"
#include "helpers.h"
#include "tree/tree.h"

namespace nf {
extern const CpuNearFieldKernels cpu_serial_kernels;  // the registered cpu-serial (nearfield_cpu.cc)
}

namespace nf::test {

//! cpu-serial's near field, for the kernels tests register: as a near-field kernel under another
//! name, or registered with kFarField, a deliberately wrong full method (the near field alone: its
//! error is the whole far field, at any order).
template <int D, class T>
void cpu_serial_near_field(const HostNearField<T>& f) {
  cpu_serial_kernels.get<D, T>()(f);
}

//! Float64 near-field (or, with all = true, all-pairs) reference, written independently of the
//! kernels and the tree: each particle's box coordinates by the rule of docs/design.md §2 (floor,
//! clamped), the particles bucketed by those coordinates, and a plain double loop over the
//! particles of the same and the adjacent coordinates (with all = true: over every particle).
inline std::vector<double> naive_reference(const Particles& p, int level, const Domain& d, double eps,
                                           Precision seen, bool all) {
  using Coord = std::array<std::int64_t, 3>;
  const std::vector<Body<double>> b = bodies_as_seen(p, seen);
  const std::size_t n = p.size();
  const int dim = p.dim;
  std::vector<double> acc(n * dim, 0.0);
  const double boxes = std::ldexp(1.0, level);
  std::vector<Coord> box(n, Coord{0, 0, 0});  // floor((x - x0) / side * 2^K), clamped, per axis
  std::map<Coord, std::vector<std::size_t>> members;
  for (std::size_t i = 0; i < n; ++i) {
    for (int a = 0; a < dim; ++a) {
      const double s = (p.coord(i, a) - d.origin[a]) / d.side * boxes;
      box[i][a] = static_cast<std::int64_t>(std::min(std::max(std::floor(s), 0.0), boxes - 1.0));
    }
    members[all ? Coord{0, 0, 0} : box[i]].push_back(i);  // all pairs: one bucket
  }
  const auto add = [&](std::size_t i, std::size_t j) {
    if (i == j) return;
    const double r[3] = {b[j].x - b[i].x, b[j].y - b[i].y, dim == 3 ? b[j].z - b[i].z : 0.0};
    const double d2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + eps * eps;
    if (d2 == 0.0) return;
    const double s = b[j].m / (d2 * std::sqrt(d2));
    for (int a = 0; a < dim; ++a) acc[i * dim + a] += s * r[a];
  };
  const int reach = all ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i)
    for (int dz = dim == 3 ? -reach : 0; dz <= (dim == 3 ? reach : 0); ++dz)
      for (int dy = -reach; dy <= reach; ++dy)
        for (int dx = -reach; dx <= reach; ++dx) {
          const Coord c = all ? Coord{0, 0, 0} : Coord{box[i][0] + dx, box[i][1] + dy, box[i][2] + dz};
          const auto it = members.find(c);
          if (it != members.end())
            for (std::size_t j : it->second) add(i, j);
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
  CHECK(check.repeatable);
  // validate's verdict is this test's: finite, within tolerance, and repeatable where claimed.
  CHECK(check.pass == (m.finite && m.rel_l2 <= tolerance(c.precision) && check.repeatable));
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

//! The kernels one form of the kernel tests runs (test_kernels*.cc).
struct Kernels {
  std::vector<std::string> near_field;  //!< tree kernels
  std::vector<std::string> all_pairs;   //!< all-pairs kernels (--mask all|near)
  std::vector<std::string> full;        //!< full methods: near field and far field (kFarField)
};
//! Every registered CPU kernel; every registered GPU kernel.
inline Kernels cpu_kernels() {
  return {kernel_names(kNearField, kGpu), kernel_names(0, kGpu | kNearField | kFarField), kernel_names(kFarField, kGpu)};
}
inline Kernels gpu_kernels() {
  return {kernel_names(kGpu | kNearField), kernel_names(kGpu, kNearField | kFarField), kernel_names(kGpu | kFarField)};
}

inline const std::vector<Precision> kBothPrecisions = {Precision::f32, Precision::f64};

//! check_kernel for every near-field kernel of k on p, at each precision and softening, against
//! the naive reference; kernels reading the paper's dense layout only when `dense_ok`.
inline void check_near_field(const Kernels& k, const Particles& p, int level, const std::string& domain,
                             const std::vector<Precision>& precisions, const std::vector<double>& eps = {1e-3},
                             bool dense_ok = true) {
  const Domain d = resolve_domain(p, domain, "test");
  for (Precision prec : precisions)
    for (double e : eps) {
      const auto ref = naive_reference(p, level, d, e, prec, false);
      for (const std::string& name : k.near_field)
        if (dense_ok || !find_kernel(name).dense_tree())
          check_kernel(p, {name, prec, level, e, Mask::near, domain}, ref);
    }
}

}  // namespace nf::test

//! A test of the kernels in its two forms, both running `body` (a function of test::Kernels):
//! "CPU name" over the CPU kernels, and "GPU name" in the gpu suite over the GPU kernels,
//! skipped visibly without a device. A file of such tests is compiled into its own CPU
//! executable and into test_gpu (tests/CMakeLists.txt).
#define NF_KERNEL_TEST(name, body)                              \
  TEST_CASE("CPU " name) { body(nf::test::cpu_kernels()); }     \
  TEST_CASE("GPU " name * doctest::test_suite("gpu")) {         \
    if (nf::test::gpu_or_skip()) body(nf::test::gpu_kernels()); \
  }
