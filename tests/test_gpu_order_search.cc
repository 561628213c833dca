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
    CHECK(found.reference.find("allpairs-2d on the GPU") != std::string::npos);  // a GPU kernel's sums run there
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

TEST_CASE("sampled_reference on the GPU equals the CPU's float64 sums to rounding" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  struct Case {
    const char* dist;
    int dim, n;
    std::size_t sample;
    Precision prec;
    double softening;
  };
  for (const Case& c : {Case{"plummer", 3, 30000, 700, Precision::f32, 1e-4}, Case{"clusters", 2, 20001, 333, Precision::f64, 1e-3},
                        Case{"uniform", 3, 5, 5, Precision::f64, 0.0}, Case{"uniform", 3, 1, 1, Precision::f32, 1e-4}}) {
    CAPTURE(c.dist);
    CAPTURE(c.n);
    Particles p = test::make(c.dist, c.dim, c.n, 9);
    if (c.n > 2 && c.softening > 0) {  // a coincident pair (softened: it adds 0 on both sides)
      p.x[1] = p.x[0], p.y[1] = p.y[0];
      if (c.dim == 3) p.z[1] = p.z[0];
    }
    MethodSetup s;
    s.precision = c.prec;
    s.softening = c.softening;
    const std::vector<std::size_t> targets = sample_targets(p.size(), c.sample, 3);
    std::string gpu_name, cpu_name;
    const std::vector<double> g = sampled_reference(p, s, targets, true, gpu_name);
    const std::vector<double> h = sampled_reference(p, s, targets, false, cpu_name);
    CHECK(gpu_name.find("allpairs-2d on the GPU, float64") != std::string::npos);
    CHECK(cpu_name.find("cpu-allpairs") != std::string::npos);
    REQUIRE(g.size() == h.size());
    REQUIRE(g.size() == targets.size() * std::size_t(c.dim));
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < g.size(); ++i) {
      CHECK(std::isfinite(g[i]));
      diff = std::max(diff, std::abs(g[i] - h[i]));
      norm = std::max(norm, std::abs(h[i]));
    }
    CAPTURE(diff);
    CAPTURE(norm);
    CHECK(diff <= 1e-12 * norm);
  }
}
