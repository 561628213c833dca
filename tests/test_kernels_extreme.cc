// Every kernel (CPU and GPU forms, as in test_kernels.cc) on big and extreme inputs: a box of
// 17000 particles, whose near field exceeds any single work item; extreme layouts (one crowded
// box, thin shells, clusters at the corners, coincident points, 0 and 1 particles) at deep levels;
// two galaxies.
#include "extreme_inputs.h"
#include "force_checks.h"

using namespace nf;

namespace {

void big_box(const test::Kernels& k) {
  // Level 1: one quadrant holds 17000 particles, so its near field exceeds any kernel's single
  // work item (bpb-lb splits the sources into segments, the warp kernels cut 34 chunks).
  std::vector<std::vector<double>> pts;
  nf::Random r(21);
  for (int i = 0; i < 17000; ++i) pts.push_back({0.05 + 0.4 * r.uniform(), 0.05 + 0.4 * r.uniform()});
  for (int i = 0; i < 500; ++i) pts.push_back({0.5 + 0.5 * r.uniform(), r.uniform()});
  test::check_near_field(k, test::from_points(2, pts), 1, "0,0,1", {Precision::f32});
}
NF_KERNEL_TEST("near-field kernels: a box of 17000 particles (sources split, many chunks, many work items)", big_box)

void coincident_tiny_softening(const test::Kernels& k) {
  // Coincident pairs with a softening so small that m / eps^3 overflows the precision (the guarded
  // form): such a pair adds exactly 0 (it had given 0 * inf = NaN), the others their force.
  std::vector<std::vector<double>> pts = {{0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}, {0.9, 0.1, 0.3}, {0.2, 0.7, 0.6}};
  nf::Random r(8);
  for (int i = 0; i < 40; ++i) pts.push_back({r.uniform(), r.uniform(), r.uniform()});
  pts.push_back(pts[10]);
  const Particles p = test::from_points(3, pts);
  for (int level : {0, 1}) {
    test::check_near_field(k, p, level, "0,0,0,1", {Precision::f32}, {1e-13});
    test::check_near_field(k, p, level, "0,0,0,1", {Precision::f64}, {1e-110});
  }
}
NF_KERNEL_TEST("near-field kernels: coincident pairs with a softening whose m / eps^3 overflows", coincident_tiny_softening)

void extreme_layouts(const test::Kernels& k) {
  std::vector<test::ExtremeInput> inputs = test::extreme_inputs();
  // Two disk + bulge + halo galaxies far apart (the generator's collision set-up).
  GenerateOptions g;
  g.dist = "galaxies";
  g.dim = 3;
  g.n = 3000;
  g.seed = 4;
  inputs.push_back({"galaxies-3d-L6", generate(g), 6, true});
  for (const test::ExtremeInput& in : inputs) {
    CAPTURE(in.name);
    test::check_near_field(k, in.particles, in.level, "", test::kBothPrecisions, {1e-3}, in.dense_ok);
  }
}
NF_KERNEL_TEST("near-field kernels on extreme layouts and deep levels, and on two galaxies", extreme_layouts)

}  // namespace
