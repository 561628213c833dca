// The CPU near-field kernels against the float64 reference, counting mode, and validate.
#include "force_checks.h"
#include "harness/model.h"

using namespace nf;

namespace {
const char* const kCpuKernels[] = {"cpu-serial", "cpu-n3", "cpu-omp", "cpu-omp-n3"};
}

TEST_CASE("CPU near-field kernels match the float64 reference on random and adversarial inputs") {
  for (const test::NearFieldInput& in : test::near_field_inputs())
    for (Precision prec : {Precision::f32, Precision::f64}) {
      CAPTURE(in.what);
      const Domain d = resolve_domain(in.p, in.domain, "test");
      const auto ref = test::naive_reference(in.p, in.level, d, 1e-3, prec, false);
      for (const char* k : kCpuKernels) test::check_kernel(in.p, {k, prec, in.level, 1e-3, Mask::near, in.domain}, ref);
    }
}

TEST_CASE("level 1: the near field is every pair") {
  const Particles p = test::make("plummer", 2, 700, 3);
  const auto all = test::naive_reference(p, 1, default_domain(p), 1e-3, Precision::f64, true);
  for (const char* k : kCpuKernels) test::check_kernel(p, {k, Precision::f64, 1, 1e-3, Mask::near, ""}, all);
}

TEST_CASE("eps = 0 with coincident points: finite, and the coincident pairs contribute zero") {
  std::vector<std::vector<double>> pts(50, {0.3, 0.3});
  for (int i = 0; i < 50; ++i) pts.push_back({0.6 + 0.001 * i, 0.7});
  const Particles p = test::from_points(2, pts);
  for (Precision prec : {Precision::f32, Precision::f64})
    for (const char* k : kCpuKernels) test::check_kernel(p, {k, prec, 2, 0.0, Mask::near, ""});
}

TEST_CASE("counting mode: kernels evaluate exactly the near-field pairs (half of them with Newton-3)") {
  for (int dim : {2, 3})
    for (int level : {0, 1, 2, 3})
      for (std::int64_t ppb : {1, 3, 8}) {
        if (dim == 3 && level == 3 && ppb == 8) continue;
        const Particles p = test::make_exact(dim, level, ppb);
        const Tree t = build_tree(p, level, default_domain(p));
        const std::uint64_t full = cp_bpb(dim, level, ppb);  // the model's N(P-1) + B P^2
        CHECK(near_field_interactions(t) == full);
        for (const char* k : kCpuKernels) {
          CAPTURE(k);
          CHECK(test::count_interactions(p, k, level) == (find_kernel(k).newton3 ? cp_bpb_n3(dim, level, ppb) : full));
        }
      }
}

TEST_CASE("validate runs every CPU kernel and reports PASS; a failing kernel exits 1") {
  auto r = test::run_cli({"validate", "--dist", "clusters", "--dim", "3", "--n", "3000", "--level", "3", "--precision",
                          "float,double", "--kernel", "cpu-serial,cpu-n3,cpu-omp,cpu-omp-n3,cpu-allpairs"});
  INFO(r.out);
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("all kernels PASS") != std::string::npos);
  CHECK(r.out.find("FAIL") == std::string::npos);
  CHECK(r.out.find("cpu-allpairs --mask near, float64 on float32-rounded inputs") != std::string::npos);
}
