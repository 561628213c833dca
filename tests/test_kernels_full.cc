// The full methods (near field plus far field, docs/design.md §16) against float64 all pairs,
// written once for the CPU (cpu-fmm) and the GPU (the gpu suite; none registered yet): random and
// adversarial inputs (empty boxes, one giant box, coincident points with eps = 0, levels 2 and
// deep, 2D and 3D, float and double), the error falling with the order, the order from the
// accuracy, and the setups a full method refuses.
#include <cmath>

#include "core/errors.h"
#include "farfield/order.h"
#include "force_checks.h"

using namespace nf;

namespace {

struct FullCase {
  std::string what;
  Particles p;
  int level;
  double eps;
  //! Held to the error model's bound; the adversarial layouts only to an error falling with the
  //! order (a pile of mass at a box's corner converges as slowly as the geometry allows).
  bool modeled = true;
};

std::vector<FullCase> full_cases() {
  std::vector<std::vector<double>> pile(40, {0.25, 0.5, 0.5});  // coincident points
  nf::Random r(11);
  for (int i = 0; i < 300; ++i) pile.push_back({r.uniform(), r.uniform(), r.uniform()});
  return {{"uniform 2D", test::make("uniform", 2, 2000, 21), 4, 1e-3},
          {"uniform 3D", test::make("uniform", 3, 2000, 22), 3, 1e-3},
          {"clusters 2D (empty boxes)", test::make("clusters", 2, 2000, 23), 6, 1e-3},
          {"plummer 3D", test::make("plummer", 3, 1500, 24), 4, 1e-3},
          {"core 2D (one giant box)", test::make("core", 2, 1500, 25), 5, 1e-3, false},
          {"coincident points, eps = 0 (3D)", test::from_points(3, pile), 3, 0.0, false},
          {"level 2", test::make("uniform", 3, 500, 26), 2, 1e-3},
          {"deep level, few particles (2D level 9)", test::make("plummer", 2, 600, 27), 9, 1e-3},
          {"one particle", test::from_points(2, {{0.4, 0.6}}), 3, 1e-3},
          {"no particles", test::from_points(3, {}), 2, 1e-3}};
}

// rel L2 of full method k at order p against float64 all pairs on the inputs it saw.
double error_of(const std::string& kernel, const FullCase& c, Precision prec, int order, std::uint32_t leaf_size = 0) {
  MethodSetup s;
  s.leaf_size = leaf_size;
  s.level = c.level;
  s.domain = default_domain(c.p);
  s.softening = c.eps;
  s.precision = prec;
  s.order = order;
  const auto ref = test::naive_reference(c.p, c.level, *s.domain, c.eps, prec, true);
  const KernelCheck check = validate_kernel(find_kernel(kernel), c.p, s, ref);
  CAPTURE(check.metrics.rel_l2);
  CHECK(check.metrics.finite);
  CHECK(check.repeatable);
  return check.metrics.rel_l2;
}

void full_methods_match_all_pairs(const test::Kernels& k) {
  for (const std::string& name : k.full)
    for (const FullCase& c : full_cases())
      for (Precision prec : test::kBothPrecisions) {
        CAPTURE(name);
        CAPTURE(c.what);
        CAPTURE(to_string(prec));
        const double low = error_of(name, c, prec, 2), mid = error_of(name, c, prec, 6),
                     high = error_of(name, c, prec, 12);
        // Within the error model's bound (3x its error at the order: validate's tolerance) ...
        const double floor = prec == Precision::f32 ? 1e-5 : 1e-12;
        if (c.modeled) {
          CHECK(high <= std::max(3 * farfield::error_model(c.p.dim).error(12), floor));
          CHECK(mid <= std::max(3 * farfield::error_model(c.p.dim).error(6), floor));
        }
        CHECK(high < 1e-2);
        // ... and falling with the order where there is a far field (it can be exactly zero:
        // everything near at level 2 for a few boxes, no pairs at all).
        CHECK(high <= mid + (prec == Precision::f32 ? 1e-6 : 1e-13));
        CHECK(mid <= low + (prec == Precision::f32 ? 1e-6 : 1e-13));
      }
}
NF_KERNEL_TEST("full methods match float64 all pairs on random and adversarial inputs, error falling with the order",
               full_methods_match_all_pairs)

void levels_zero_and_one_are_all_near(const test::Kernels& k) {
  // Levels 0 and 1 have no far field: the method is its near field, every pair, to rounding.
  const Particles p = test::make("plummer", 3, 700, 31);
  for (const std::string& name : k.full)
    for (int level : {0, 1}) {
      CAPTURE(name);
      CAPTURE(level);
      test::check_kernel(p, {name, Precision::f64, level, 1e-3, Mask::all, ""},
                         test::naive_reference(p, level, default_domain(p), 1e-3, Precision::f64, true));
    }
}
NF_KERNEL_TEST("full methods at levels 0 and 1: every pair in the near field", levels_zero_and_one_are_all_near)

void orders_per_offset(const test::Kernels& k) {
  // M2L's shorter sums at the farther offsets (farfield/offset_order.h) change the error, by at most
  // 1.4x (calibrated: within 1.28x on uniform, Plummer and clusters, orders 4..12), against the same
  // method with order p at every offset (NEARFIELD_M2L_ORDERS=full).
  // Orders where they apply (farfield::kOffsetOrdersFrom: 3D p >= 8, 2D p >= 14).
  const std::vector<FullCase> cases = {{"uniform 3D", test::make("uniform", 3, 3000, 51), 3, 1e-3},
                                       {"plummer 3D", test::make("plummer", 3, 3000, 52), 4, 1e-3},
                                       {"clusters 2D", test::make("clusters", 2, 3000, 53), 5, 1e-3}};
  for (const std::string& name : k.full)
    for (const FullCase& c : cases)
      for (int p : c.p.dim == 3 ? std::vector<int>{8, 11} : std::vector<int>{14, 16}) {
        CAPTURE(name);
        CAPTURE(c.what);
        CAPTURE(p);
        // (leaves of 16: the adaptive methods' automatic size would leave these inputs little far field)
        const std::uint32_t leaf = name.find("adaptive") != std::string::npos ? 16 : 0;
        const double graded = error_of(name, c, Precision::f64, p, leaf);
        test::EnvScope full("NEARFIELD_M2L_ORDERS", "full");
        const double whole = error_of(name, c, Precision::f64, p, leaf);
        CHECK(graded <= 1.4 * whole);
        CHECK(std::abs(graded - whole) > 1e-4 * whole);  // the orders per offset did run
      }
}
NF_KERNEL_TEST("full methods: M2L's orders per offset stay within 1.4x of order p's error", orders_per_offset)

void order_from_accuracy(const test::Kernels& k) {
  // The default accuracy (1e-4) picks an order that reaches it on uniform inputs, 2D and 3D.
  for (const std::string& name : k.full)
    for (int dim : {2, 3}) {
      CAPTURE(name);
      CAPTURE(dim);
      const FullCase c{"uniform", test::make("uniform", dim, 3000, 40 + dim), dim == 2 ? 4 : 3, 1e-3};
      CHECK(error_of(name, c, Precision::f64, 0) <= farfield::kDefaultAccuracy);
    }
}
NF_KERNEL_TEST("full methods: the order the accuracy picks reaches it", order_from_accuracy)

}  // namespace

TEST_CASE("full methods refuse what they cannot take; other kernels refuse the far field's options") {
  const Particles p = test::make("uniform", 2, 100, 3);
  MethodSetup s;
  s.level = 2;
  s.domain = default_domain(p);
  for (const std::string& name : test::cpu_kernels().full) {
    CAPTURE(name);
    const KernelInfo& k = find_kernel(name);
    MethodSetup bad = s;
    bad.order = farfield::kMaxOrder + 1;
    CHECK_THROWS_AS(make_method(k, bad, p), UsageError);
    bad = s;
    bad.accuracy = 2;
    CHECK_THROWS_AS(make_method(k, bad, p), UsageError);
    bad = s;
    bad.mask = Mask::near;
    CHECK_THROWS_AS(make_method(k, bad, p), UsageError);
    bad = s;
    bad.near = "cpu-allpairs";  // not a near-field kernel
    CHECK_THROWS_AS(make_method(k, bad, p), UsageError);
  }
  MethodSetup far = s;
  far.order = 4;
  CHECK_THROWS_AS(make_method(find_kernel("cpu-serial"), far, p), UsageError);
  CHECK_THROWS_AS(make_method(find_kernel("cpu-allpairs"), far, p), UsageError);
}
