// `--level auto`'s GPU cost model (src/methods/full_level_rule.h) apart from its CPU one: the M2L
// kernel's width and the thread kernel's staged moments, as the rule counts them.
#include "farfield/m2l_thread_orders.h"
#include "farfield/op_counts.h"
#include "helpers.h"
#include "methods/full_level_rule.h"
#include "tree/levels.h"

using namespace nf;

TEST_CASE("full level rule: with an order per level, each level's cost is that of the whole method at its order") {
  // The GPU kernel takes 32 or 64 targets a block by the order (3D float: 64 at p = 8..11, 32 at
  // 7); the levels above a level had been counted at their own orders' widths.
  const FullMethodRates rates = FullMethodCostModel::kGpuFloat;
  REQUIRE(rates.m2l_wide(3, 8) != rates.m2l_wide(3, 7));
  const Particles p = test::make("plummer", 3, 20000, 83);
  const LevelScan scan(p, default_domain(p), 6);
  const auto order_at = [](int l) { return l < 4 ? 7 : 8; };
  const FullLevelChoice c = choose_full_level(scan, 6, order_at, rates);
  for (const FullLevelCost& e : c.evaluated) {
    CAPTURE(e.level);
    CHECK(e.order == order_at(e.level));
    CHECK(e.ms() == doctest::Approx(full_level_cost(scan, e.level, order_at(e.level), rates).ms()).epsilon(1e-12));
  }
  CHECK(c.evaluated.back().level >= 4);  // a level whose order's width differs from the levels above
}

TEST_CASE("full level rule: the staged thread kernel costs less on full levels, at the orders that stage") {
  // The kernel's own rule (farfield/m2l_thread_orders.h): 3D float p <= 6, 3D double <= 4, 2D <= 8.
  for (const FullMethodRates& rates : {FullMethodCostModel::kGpuFloat, FullMethodCostModel::kGpuDouble}) {
    const bool f32 = rates.m2l_scalar_bytes == 4;
    CHECK(rates.m2l_staged(3, f32 ? 6 : 4));
    CHECK(!rates.m2l_staged(3, f32 ? 7 : 5));
    CHECK(rates.m2l_staged(2, 8));
    if (f32) {  // 2D float runs the thread kernel to p = 12, staged to 8 (2D double stops at 8)
      CHECK(rates.m2l_threaded(2, 9));
      CHECK(!rates.m2l_staged(2, 9));
    }
    for (int order = 2; order <= (f32 ? 6 : 4); ++order) {  // measured: below the unstaged curve
      const double madds = double(farfield::m2l_madds(3, order));
      CHECK(rates.m2l_staged_translation_s(3, madds) < rates.m2l_thread_translation_s(3, madds));
    }
    for (int order : {4, 6, 8}) {
      const double madds = double(farfield::m2l_madds(2, order));
      CHECK(rates.m2l_staged_translation_s(2, madds) < rates.m2l_thread_translation_s(2, madds));
    }
  }
  CHECK(!FullMethodCostModel::kCpu.m2l_staged(3, 4));
  // A uniform 3D input fills every level: all its translations stage, and M2L costs less than unstaged.
  const Particles p = test::make("uniform", 3, 40000, 85);
  const LevelScan scan(p, default_domain(p), 4);
  const FullMethodRates rates = FullMethodCostModel::kGpuFloat;
  FullMethodRates unstaged = rates;
  unstaged.m2l_scalar_bytes = 0;
  const FullLevelCost staged = full_level_cost(scan, 4, 4, rates), plain = full_level_cost(scan, 4, 4, unstaged);
  CHECK(staged.full_translations == staged.translations);
  CHECK(staged.far_ms < plain.far_ms);
  CHECK(full_level_cost(scan, 4, 8, rates).far_ms == full_level_cost(scan, 4, 8, unstaged).far_ms);  // p = 8: never
}

TEST_CASE("full level rule: a sparse level's translations stay at the unstaged curve") {
  // A Plummer sphere's deep levels fill far less than 3/4 of their parents' places: only the full
  // levels' translations move to the staged curve.
  const Particles p = test::make("plummer", 3, 40000, 86);
  const LevelScan scan(p, default_domain(p), 6);
  const FullMethodRates rates = FullMethodCostModel::kGpuFloat;
  FullMethodRates unstaged = rates;
  unstaged.m2l_scalar_bytes = 0;
  const FullLevelCost staged = full_level_cost(scan, 6, 4, rates), plain = full_level_cost(scan, 6, 4, unstaged);
  CHECK(staged.full_translations > 0);
  CHECK(staged.full_translations < staged.translations);
  const double madds = double(farfield::m2l_madds(3, 4));
  CHECK(plain.far_ms - staged.far_ms ==
        doctest::Approx(1e3 * double(staged.full_translations) *
                        (rates.m2l_thread_translation_s(3, madds) - rates.m2l_staged_translation_s(3, madds)))
            .epsilon(1e-9));
}
