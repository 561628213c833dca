// Every GPU kernel against the float64 reference (GPU suite): all-pairs kernels at awkward sizes,
// near-field kernels on the shared random and adversarial inputs, counting mode, validate.
#include "extreme_inputs.h"
#include "force_checks.h"
#include "measure/model.h"

using namespace nf;

namespace {
// Every registered GPU kernel of each kind: a new kernel is checked here by registering it.
const std::vector<std::string> kAllPairs = test::kernel_names(kGpu, kNearField);
const std::vector<std::string> kNearFieldKernels = test::kernel_names(kGpu | kNearField);
}  // namespace

TEST_CASE("GPU all-pairs kernels: any N, both masks, 2D/3D, float/double" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  nf::Random r(77);
  std::vector<std::int64_t> sizes = {0, 1, 31, 127, 129, 1000, 4097};
  for (int k = 0; k < 3; ++k) sizes.push_back(2 + static_cast<std::int64_t>(r.below(3000)));
  for (std::int64_t n : sizes)
    for (int dim : {2, 3})
      for (Mask mask : {Mask::all, Mask::near})
        for (Precision prec : {Precision::f32, Precision::f64}) {
          const Particles p = test::make(n % 3 ? "uniform" : "plummer", dim, n, 500 + n + dim);
          const int level = dim == 2 ? 4 : 3;
          const auto ref = test::naive_reference(p, level, default_domain(p), 1e-3, prec, mask == Mask::all);
          for (const std::string& k : kAllPairs) test::check_kernel(p, {k, prec, level, 1e-3, mask, ""}, ref);
        }
}

TEST_CASE("GPU all-pairs kernels: coincident points, with and without softening" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  std::vector<std::vector<double>> pts(300, {0.5, 0.25, 0.75});
  nf::Random r(3);
  for (int i = 0; i < 300; ++i) pts.push_back({r.uniform(), r.uniform(), r.uniform()});
  const Particles p = test::from_points(3, pts);
  for (double eps : {0.0, 1e-3})  // guarded (eps = 0) and unguarded evaluation
    for (Precision prec : {Precision::f32, Precision::f64})
      for (Mask mask : {Mask::all, Mask::near})
        for (const std::string& k : kAllPairs) test::check_kernel(p, {k, prec, 2, eps, mask, ""});
}

TEST_CASE("GPU near-field kernels match the float64 reference on random and adversarial inputs" *
          doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  for (const test::NearFieldInput& in : test::near_field_inputs())
    for (Precision prec : {Precision::f32, Precision::f64})
      for (double eps : {1e-3, 0.0}) {
        CAPTURE(in.what);
        const Domain d = resolve_domain(in.p, in.domain, "test");
        const auto ref = test::naive_reference(in.p, in.level, d, eps, prec, false);
        for (const std::string& k : kNearFieldKernels) test::check_kernel(in.p, {k, prec, in.level, eps, Mask::near, in.domain}, ref);
      }
}

TEST_CASE("GPU near-field kernels: uniform-exact boxes of 1..600 particles (block sizes, chunks, last partial warps)" *
          doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  for (std::int64_t ppb : {1, 2, 31, 33, 56, 57, 64, 100, 513, 600}) {
    const Particles p = test::make_exact(2, ppb > 100 ? 2 : 4, ppb, 900 + ppb);
    const int level = ppb > 100 ? 2 : 4;
    for (Precision prec : {Precision::f32, Precision::f64}) {
      const auto ref = test::naive_reference(p, level, default_domain(p), 1e-3, prec, false);
      for (const std::string& k : kNearFieldKernels) test::check_kernel(p, {k, prec, level, 1e-3, Mask::near, ""}, ref);
    }
  }
}

TEST_CASE("GPU counting mode: kernels evaluate exactly the near-field pairs" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  for (int dim : {2, 3})
    for (int level : {0, 1, 2, 4})
      for (std::int64_t ppb : {1, 5, 40}) {
        if (dim == 3 && level == 4) continue;
        const Particles p = test::make_exact(dim, level, ppb);
        const std::uint64_t full = cp_bpb(dim, level, ppb);  // the model's N(P-1) + B P^2
        for (const std::string& k : kNearFieldKernels) {
          CAPTURE(k);
          CAPTURE(dim);
          CAPTURE(level);
          CAPTURE(ppb);
          // Kernels that compute small boxes one particle per thread evaluate every directed
          // interaction of a small box (here: every box below 32 particles).
          const KernelInfo& info = find_kernel(k);
          const bool once = info.newton3() && !(info.small_boxes() && ppb < 32);
          CHECK(test::count_interactions(p, k, level) == (once ? cp_bpb_n3(dim, level, ppb) : full));
        }
      }
  // Chunked boxes count the same: 1300 particles in one box, level 0.
  const Particles p = test::make("uniform", 2, 1300, 4);
  for (const std::string& k : kNearFieldKernels)
    CHECK(test::count_interactions(p, k, 0) == (find_kernel(k).newton3() ? 1300ull * 1299 / 2 : 1300ull * 1299));
}

TEST_CASE("validate with every kernel on the GPU machine" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  auto r = test::run_cli({"validate", "--dist", "clusters", "--dim", "2", "--n", "6000", "--level", "5", "--precision",
                          "float,double"});
  INFO(r.out);
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("bpb-n3") != std::string::npos);
  CHECK(r.out.find("allpairs-tiled") != std::string::npos);
  // Above the CPU limit the reference is the GPU tiled kernel.
  r = test::run_cli({"validate", "--dist", "uniform-exact", "--dim", "3", "--level", "3", "--ppb", "50", "--kernel",
                     "bpb,bpb-n3,ppt", "--cpu-reference-limit", "1000"});
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("allpairs-tiled --mask near, float64 on float32-rounded inputs") != std::string::npos);
}

TEST_CASE("GPU near-field kernels: a box of 17000 particles (sources split, many chunks, many work items)" *
          doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  // Level 1: one quadrant holds 17000 particles, so its near field exceeds any kernel's single
  // work item (bpb-lb splits the sources into segments, the warp kernels cut 34 chunks).
  std::vector<std::vector<double>> pts;
  nf::Random r(21);
  for (int i = 0; i < 17000; ++i) pts.push_back({0.05 + 0.4 * r.uniform(), 0.05 + 0.4 * r.uniform()});
  for (int i = 0; i < 500; ++i) pts.push_back({0.5 + 0.5 * r.uniform(), r.uniform()});
  const Particles p = test::from_points(2, pts);
  const auto ref = test::naive_reference(p, 1, resolve_domain(p, "0,0,1", "test"), 1e-3, Precision::f32, false);
  for (const std::string& k : kNearFieldKernels) test::check_kernel(p, {k, Precision::f32, 1, 1e-3, Mask::near, "0,0,1"}, ref);
}

TEST_CASE("GPU near-field kernels on extreme layouts and deep levels, and on two galaxies" * doctest::test_suite("gpu")) {
  if (!test::gpu_or_skip()) return;
  std::vector<test::ExtremeInput> inputs = test::extreme_inputs();
  // Two disk + bulge + halo galaxies far apart (the generator's collision set-up).
  GenerateOptions g;
  g.dist = "galaxies";
  g.dim = 3;
  g.n = 3000;
  g.seed = 4;
  inputs.push_back({"galaxies-3d-L6", generate(g), 6, true});
  for (const test::ExtremeInput& in : inputs)
    for (Precision prec : {Precision::f32, Precision::f64}) {
      CAPTURE(in.name);
      const auto ref = test::naive_reference(in.particles, in.level, default_domain(in.particles), 1e-3, prec, false);
      for (const std::string& k : kNearFieldKernels)
        if (in.dense_ok || !find_kernel(k).dense_tree())
          test::check_kernel(in.particles, {k, prec, in.level, 1e-3, Mask::near, ""}, ref);
    }
}
