// The sibling-group M2L kernel's operator tables built in each block from the offsets' derivatives
// (the default where they fit, NEARFIELD_M2L_TABLES=built) against the same tables copied from the
// precomputed ones (NEARFIELD_M2L_TABLES=copied): the same entries and sums, so the same forces to
// rounding (the near field's and the shared split quads' atomic adds make runs differ in the last
// bits; gpu suite; docs/design.md §16 "Tables built in the block").
#include <cmath>
#include <string>
#include <vector>

#include "core/errors.h"
#include "fmm_pair.h"
#include "helpers.h"
#include "methods/registry.h"

using namespace nf;

namespace {

// The accelerations of `kernel` on p with setup s, NEARFIELD_M2L_TABLES set to `tables`; a fresh
// method each time (the table mode is read when the method plans its order).
std::vector<double> evaluate(test::EnvScope& env, const char* tables, const char* kernel, const MethodSetup& s,
                             const Particles& p) {
  env.set(tables);
  auto m = make_method(find_kernel(kernel), s, p);
  m->prepare(p);
  m->poison_output();
  m->evaluate();
  return m->accelerations();
}

}  // namespace

TEST_CASE("GPU M2L's tables built in the block give the copied tables' forces" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  test::EnvScope tables("NEARFIELD_M2L_TABLES"), m2l("NEARFIELD_M2L");
  const Particles plummer = test::make("plummer", 3, 6000, 81), clusters = test::make("clusters", 2, 5000, 82);
  struct Case {
    const char* kernel;
    const Particles* p;
    Precision prec;
    std::vector<int> orders;
  };
  // The group kernel forced (NEARFIELD_M2L=group) at low orders too, where it takes two pipeline
  // stages (tables copied either way); one stage (built by default) at 3D float p = 10, 11 (two
  // targets a lane) and 12 (one, two quads a unit), 3D double p = 8, 10; the orders per offset from
  // 3D p = 8; 2D float p = 20, the highest order.
  const std::vector<Case> cases = {
      {"fmm", &plummer, Precision::f32, {4, 9, 10, 11, 12}}, {"fmm", &plummer, Precision::f64, {4, 8, 10}},
      {"fmm", &clusters, Precision::f32, {6, 14, 20}},   {"fmm", &clusters, Precision::f64, {6, 12}},
      {"fmm-adaptive", &plummer, Precision::f32, {10, 12}}, {"fmm-adaptive", &clusters, Precision::f32, {14}}};
  for (const Case& c : cases)
    for (int order : c.orders) {
      const std::string kernel = c.kernel;
      CAPTURE(kernel);
      CAPTURE(c.p->dim);
      CAPTURE(to_string(c.prec));
      CAPTURE(order);
      MethodSetup s;
      s.level = c.p->dim == 3 ? 4 : 6;
      s.domain = default_domain(*c.p);
      s.softening = 1e-3;
      s.precision = c.prec;
      s.order = order;
      if (kernel == "fmm-adaptive") s.leaf_size = 24;
      m2l.set("group");
      const std::vector<double> copied = evaluate(tables, "copied", c.kernel, s, *c.p);
      const std::vector<double> built = evaluate(tables, "built", c.kernel, s, *c.p);
      const std::vector<double> by_default = evaluate(tables, nullptr, c.kernel, s, *c.p);
      REQUIRE(copied.size() == std::size_t(c.p->dim) * c.p->size());
      double norm = 0;
      for (double v : copied) norm += v * v;
      CHECK(std::isfinite(norm));
      CHECK(norm > 0);
      const double bound = c.prec == Precision::f32 ? 1e-6 : 1e-13;
      CHECK(test::relative_l2(built, copied) <= bound);
      CHECK(test::relative_l2(by_default, copied) <= bound);
    }
  m2l.set(nullptr);
  MethodSetup s;
  s.level = 3;
  s.domain = default_domain(plummer);
  s.order = 10;  // 3D: the sibling-group kernel's order
  for (const char* kernel : {"fmm", "fmm-adaptive"}) {
    CAPTURE(std::string(kernel));
    MethodSetup ks = s;
    if (std::string(kernel) == "fmm-adaptive") ks.leaf_size = 16;
    tables.set("copy");
    CHECK_THROWS_WITH_AS(make_method(find_kernel(kernel), ks, plummer)->prepare(plummer),
                         doctest::Contains("NEARFIELD_M2L_TABLES=copy"), UsageError);
  }
}
