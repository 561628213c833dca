// allpairs/: the ground truth and the near-field mask. cpu-allpairs (docs/design.md §4) is float64
// arithmetic on the inputs as seen, so it agrees with the tests' naive float64 loop to rounding at
// either precision; the mask's "near" is the tree's, pair for pair, at deep levels too. (Every
// all-pairs kernel's accuracy, CPU and GPU: test_kernels.cc.)
#include <algorithm>

#include "allpairs/allpairs_cpu.h"
#include "allpairs/near_mask.h"
#include "core/bodies.h"
#include "tree/domain.h"
#include "tree/tree.h"
#include "extreme_inputs.h"
#include "force_checks.h"

using namespace nf;

TEST_CASE("cpu-allpairs, the ground truth, matches the naive float64 loop to rounding, all pairs and near field") {
  for (int dim : {2, 3})
    for (std::int64_t n : {0, 1, 2, 31, 257, 1200})
      for (Mask mask : {Mask::all, Mask::near})
        for (Precision prec : {Precision::f32, Precision::f64}) {
          const Particles p = test::make(n % 2 ? "plummer" : "uniform", dim, n, 40 + n);
          test::KernelCase c{"cpu-allpairs", prec, 3, 1e-3, mask, ""};
          // cpu-allpairs is float64 arithmetic on the inputs as seen: it must agree to rounding.
          const Metrics m = test::check_kernel(p, c);
          CHECK(m.rel_l2 < 1e-13);
        }
}

TEST_CASE("the all-pairs near-field mask and the compact tree agree on every pair, at deep levels too") {
  for (const test::ExtremeInput& e : test::extreme_inputs()) {
    if (e.particles.size() > 2000) continue;
    CAPTURE(e.name);
    const Particles& p = e.particles;
    const Domain d = default_domain(p);
    const Tree t = build_tree(p, e.level, d, false);
    const std::vector<Cell> cells = cells_from_positions(p, e.level, d);
    std::vector<std::uint32_t> slot_of(p.size());  // input row -> compact box
    for (std::size_t s = 0; s < p.size(); ++s) slot_of[t.order[s]] = t.particle_compact_box[s];
    std::size_t bad = 0;
    for (std::size_t i = 0; i < p.size(); ++i)
      for (std::size_t j = 0; j < p.size(); ++j) {
        const std::uint32_t a = slot_of[i], b = slot_of[j];
        const bool tree_near = a == b || std::binary_search(t.near_full.ids.begin() + t.near_full.offset[a],
                                                            t.near_full.ids.begin() + t.near_full.offset[a + 1], b);
        const bool mask_near = p.dim == 2 ? near_cells<2>(cells[i], cells[j]) : near_cells<3>(cells[i], cells[j]);
        bad += tree_near != mask_near;
      }
    CHECK(bad == 0);
  }
  // Coordinates at the two ends of level 31: differences of 2^31 - 1 must not wrap into "near".
  const Cell lo{0, 0, 0, 0}, hi{0x7FFFFFFFu, 0, 0, 0}, next{1, 0x7FFFFFFFu, 0, 0}, top{0x7FFFFFFEu, 1, 0, 0};
  CHECK(!near_cells<2>(lo, hi));
  CHECK(!near_cells<2>(hi, lo));
  CHECK(!near_cells<2>(lo, next));
  CHECK(near_cells<2>(hi, top));
  CHECK(near_cells<3>(top, top));
}

TEST_CASE("cpu-allpairs watched by a progress callback: blocks of targets, the same bits, ending at 1") {
  for (int dim : {2, 3}) {
    const Particles p = test::make("plummer", dim, 3001, 5);  // 1000 targets a block on 2 threads
    const std::vector<Body<double>> b = bodies_as_seen(p, Precision::f64);
    const std::vector<Cell> cells = cells_from_positions(p, 3, default_domain(p));
    for (const std::vector<Cell>* c : {static_cast<const std::vector<Cell>*>(nullptr), &cells}) {
      std::vector<double> plain(p.size() * dim, 0.0), watched(p.size() * dim, 0.0);
      cpu_allpairs(dim, b, c, 1e-3, plain.data());
      std::vector<double> seen;
      cpu_allpairs(dim, b, c, 1e-3, watched.data(), [&](double f) { seen.push_back(f); });
      CHECK(test::same_bits(plain, watched));
      REQUIRE(seen.size() >= 2);  // blocks of at least 512 targets per thread
      CHECK(std::is_sorted(seen.begin(), seen.end()));
      CHECK(seen.back() == 1.0);
    }
  }
}
