// The measured order on the GPU (gpu suite): fmm and fmm-adaptive search their order on the
// device (measure/order_search.h); the order taken reaches the accuracy against a naive float64
// sum over every pair, and the order below it, run again, does not reach it where every particle
// was compared.
#include <algorithm>
#include <cmath>

#include "force_checks.h"
#include "helpers.h"
#include "measure/order_search.h"
#include "methods/registry.h"

using namespace nf;

TEST_CASE("fmm and fmm-adaptive --order-sample: the order taken reaches the accuracy, the one below does not" *
          doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  struct Case {
    const char* kernel;
    const char* dist;
    int n, level;
    Precision prec;
    double accuracy;
    std::uint32_t sample;
  };
  for (const Case& c : {Case{"fmm", "plummer", 6000, 4, Precision::f64, 1e-5, 6000},
                        Case{"fmm-adaptive", "plummer", 8000, 9, Precision::f64, 1e-4, 8000},
                        Case{"fmm-adaptive", "clusters", 20000, 9, Precision::f32, 1e-3, 2000}}) {
    CAPTURE(c.kernel);
    CAPTURE(c.dist);
    const Particles p = test::make(c.dist, 3, c.n, 41);
    const KernelInfo& k = find_kernel(c.kernel);
    MethodSetup s;
    s.level = c.level;
    s.domain = default_domain(p);
    s.precision = c.prec;
    s.accuracy = c.accuracy;
    s.order_sample = c.sample;
    if (k.adaptive()) s.leaf_size = 32;
    auto m = make_measured_method(k, s, p);
    REQUIRE(m->order_search() != nullptr);
    const OrderSearch& found = *m->order_search();
    CAPTURE(found.describe(k.name));
    REQUIRE(found.reached);
    CHECK(m->setup().order == found.order);
    m->prepare(p);
    m->evaluate();
    const std::vector<double> a = m->accelerations();
    const std::vector<double> ref = test::naive_reference(p, 0, *s.domain, s.softening, c.prec, true);
    auto err = [&](const std::vector<double>& x) {
      double e = 0, r = 0;
      for (std::size_t i = 0; i < x.size(); ++i) e += (x[i] - ref[i]) * (x[i] - ref[i]), r += ref[i] * ref[i];
      return std::sqrt(e / r);
    };
    CHECK(err(a) <= c.accuracy);
    if (c.sample >= std::uint32_t(c.n) && found.order > 1) {
      MethodSetup below = s;
      below.order_sample = 0;
      below.order = found.order - 1;
      auto b = make_method(k, below, p);
      b->prepare(p);
      b->evaluate();
      CHECK(err(b->accelerations()) > c.accuracy);
    }
  }
}
