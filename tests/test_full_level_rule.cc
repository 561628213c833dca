// `--level auto` for the full methods (src/methods/full_level_rule.h, methods/auto_level.h): the
// M2L translations counted from keys against the lists built on the CPU, the choice against the
// modeled cost of every level, its response to the order, and the commands that print it.
#include <cmath>
#include <set>
#include <sstream>
#include <tuple>

#include "farfield/lists.h"
#include "farfield/offset_order.h"
#include "farfield/op_counts.h"
#include "farfield/order.h"
#include "helpers.h"
#include "io/csv_file.h"
#include "methods/adaptive_method.h"
#include "methods/auto_level.h"
#include "methods/full_level_rule.h"
#include "methods/full_method.h"
#include "methods/registry.h"
#include "tree/box_rule.h"
#include "tree/levels.h"

using namespace nf;

namespace {

struct Input {
  std::string what;
  Particles p;
  int level;  // the deepest level checked
};

std::vector<Input> inputs() {
  return {{"uniform 2D", test::make("uniform", 2, 3000, 71), 7},
          {"plummer 2D", test::make("plummer", 2, 2000, 72), 8},
          {"clusters 2D", test::make("clusters", 2, 2000, 73), 8},
          {"uniform 3D", test::make("uniform", 3, 3000, 74), 5},
          {"plummer 3D", test::make("plummer", 3, 2000, 75), 6},
          {"clusters 3D", test::make("clusters", 3, 2000, 76), 6},
          {"one particle", test::from_points(3, {{0.3, 0.6, 0.2}}), 4},
          {"no particles", test::from_points(2, {}), 3}};
}

}  // namespace

TEST_CASE("full level rule: translations(l) counted from keys equal the M2L lists' sizes") {
  for (const Input& in : inputs()) {
    CAPTURE(in.what);
    const TreeLevels t = build_levels(build_tree(in.p, in.level, default_domain(in.p), false));
    const farfield::InteractionLists lists = farfield::build_interaction_lists(t);
    for (int l = 0; l <= in.level; ++l) {
      CAPTURE(l);
      CHECK(farfield::count_translations(in.p.dim, l, t.level[l].key) == lists[l].ids.size());
    }
  }
}

TEST_CASE("full level rule: the GPU M2L kernel's computed slots counted from keys equal a count from the M2L lists") {
  // Independent of count_group_slots' tables: each list entry marks its offset (source coordinates
  // less twice the target's parent's, per axis -2..3) in its block (child c of per_block parents).
  for (const Input& in : inputs()) {
    CAPTURE(in.what);
    const int dim = in.p.dim;
    const TreeLevels t = build_levels(build_tree(in.p, in.level, default_domain(in.p), false));
    const farfield::InteractionLists lists = farfield::build_interaction_lists(t);
    for (std::uint32_t per_block : {1u, 3u, 32u, 64u})
      for (int l = 0; l <= in.level; ++l) {
        CAPTURE(per_block);
        CAPTURE(l);
        std::set<std::tuple<std::uint32_t, std::uint64_t, int>> used;  // (block, child, offset)
        for (std::uint32_t b = 0; l >= 2 && b < t.level[l].boxes(); ++b) {
          const std::uint32_t parent = t.level[l].parent[b];
          const std::uint64_t child = t.level[l].key[b] & ((1u << dim) - 1);
          const auto coords = [&](std::uint64_t key, std::uint32_t* c) {
            for (int a = 0; a < dim; ++a) {
              c[a] = 0;
              for (int bit = 0; bit < 21; ++bit) c[a] |= std::uint32_t((key >> (dim * bit + a)) & 1u) << bit;
            }
          };
          std::uint32_t pc[3], sc[3];
          coords(t.level[l - 1].key[parent], pc);
          for (std::uint32_t j = lists[l].offset[b]; j < lists[l].offset[b + 1]; ++j) {
            coords(t.level[l].key[lists[l].ids[j]], sc);
            int o = 0;
            for (int a = dim - 1; a >= 0; --a) o = 6 * o + int(sc[a]) - 2 * int(pc[a]) + 2;
            used.insert({parent / per_block, child, o});
          }
        }
        CHECK(farfield::count_group_slots(dim, l, t.level[l].key, per_block) == double(used.size()) * per_block);
      }
  }
}

TEST_CASE("full level rule: the modeled cost is the documented one, the choice its least over every level") {
  const FullMethodRates rates = FullMethodCostModel::kCpu;
  for (const Input& in : inputs())
    for (int order : {3, 8}) {
      CAPTURE(in.what);
      CAPTURE(order);
      const int dim = in.p.dim;
      const Domain d = default_domain(in.p);
      const LevelScan scan(in.p, d, in.level);
      const FullLevelChoice c = choose_full_level(scan, in.level, order, rates);
      REQUIRE(!c.evaluated.empty());
      // Every level's cost from a tree built at it: pairs(K), translations of its lists, op_counts.
      double best = 1e300;
      int best_level = -1;
      for (int level = 0; level <= in.level; ++level) {
        CAPTURE(level);
        const TreeLevels t = build_levels(build_tree(in.p, level, d, false));
        const farfield::InteractionLists lists = farfield::build_interaction_lists(t);
        std::vector<std::uint64_t> boxes;
        std::uint64_t translations = 0;
        for (int l = 0; l <= level; ++l) boxes.push_back(t.level[l].boxes()), translations += lists[l].ids.size();
        const LevelCost near = level_cost(in.p, d, level);
        const farfield::OpCounts ops = farfield::op_counts(dim, order, in.p.size(), boxes, translations, near.pairs);
        const double near_ms = 1e3 * double(near.pairs) / rates.near_pairs_per_s;
        const double far_ms = 1e3 * (double(ops.upward + ops.downward) / rates.pass_madds_per_s +
                                     double(ops.m2l) / rates.m2l_madds_per_s +
                                     double(translations) * rates.m2l_s_per_translation);
        const FullLevelCost f = full_level_cost(scan, level, order, rates);
        CHECK(f.pairs == near.pairs);
        CHECK(f.translations == translations);
        CHECK(f.near_ms == doctest::Approx(near_ms).epsilon(1e-12));
        CHECK(f.far_ms == doctest::Approx(far_ms).epsilon(1e-12));
        if (f.ms() < best) best = f.ms(), best_level = level;
      }
      // The least over every level (pruning lost nothing), and the least of those evaluated.
      CHECK(c.level == best_level);
      for (const FullLevelCost& e : c.evaluated) {
        CHECK(e.ms() == doctest::Approx(full_level_cost(scan, e.level, order, rates).ms()).epsilon(1e-12));
        CHECK(c.chosen().ms() <= e.ms());
      }
      CHECK(describe(c).find("level auto: " + std::to_string(c.level) + " (") == 0);
    }
}

TEST_CASE("full level rule: on the GPU, M2L a thread per target costs by translations up to its highest order") {
  const FullMethodRates rates = FullMethodCostModel::kGpuFloat;
  for (const Input& in : inputs()) {
    const int dim = in.p.dim, top = dim == 3 ? farfield::kWideMaxOrder<3, float> : farfield::kWideMaxOrder<2, float>;
    const LevelScan scan(in.p, default_domain(in.p), in.level);
    for (int order : {1, top, top + 1}) {
      CAPTURE(in.what);
      CAPTURE(order);
      CHECK(rates.m2l_threaded(dim, order) == (order <= top));
      const FullLevelCost f = full_level_cost(scan, in.level, order, rates);
      if (f.translations == 0) continue;
      // With a thread kernel of no cost: the passes alone where it runs, no change where it does not.
      FullMethodRates free_threads = rates;
      for (auto& curve : free_threads.m2l_thread_s) curve.fill(0.0);
      for (auto& curve : free_threads.m2l_staged_s) curve.fill(0.0);
      const double rest = full_level_cost(scan, in.level, order, free_threads).far_ms;
      // Staged on the levels that fill 3/4 of their parents' places, where the order stages.
      const double madds = double(farfield::m2l_madds(dim, order));
      const double full = rates.m2l_staged(dim, order) ? double(f.full_translations) : 0.0;
      CHECK(f.full_translations <= f.translations);
      const double m2l = 1e3 * ((double(f.translations) - full) * rates.m2l_thread_translation_s(dim, madds) +
                                full * rates.m2l_staged_translation_s(dim, madds));
      CHECK(m2l > 0);
      CHECK(f.far_ms == doctest::Approx(order <= top ? rest + m2l : rest).epsilon(1e-12));
    }
    for (int order = 1; order < top; ++order)  // a translation's time grows with its multiply-adds
      CHECK(rates.m2l_thread_translation_s(dim, double(farfield::m2l_madds(dim, order + 1))) >
            rates.m2l_thread_translation_s(dim, double(farfield::m2l_madds(dim, order))));
  }
}

TEST_CASE("full level rule: a lower order (cheaper far field) goes deeper, a higher one shallower") {
  for (const char* dist : {"uniform", "plummer", "clusters"})
    for (int dim : {2, 3}) {
      CAPTURE(dist);
      CAPTURE(dim);
      const Particles p = test::make(dist, dim, 20000, 81);
      const LevelScan scan(p, default_domain(p), max_level(dim));
      for (const FullMethodRates& rates : {FullMethodCostModel::kCpu, FullMethodCostModel::kGpuFloat}) {
        std::vector<int> levels;
        for (int order : {1, 4, 8, 12, 16})
          levels.push_back(choose_full_level(scan, max_level(dim), order, rates).level);
        CAPTURE(levels[0]);
        CAPTURE(levels.back());
        for (std::size_t i = 1; i < levels.size(); ++i) CHECK(levels[i] <= levels[i - 1]);
        // At N = 20000 the GPU's whole evaluation is microseconds and its passes' rate makes every
        // order choose one level; the CPU's must move.
        if (rates.near_pairs_per_s == FullMethodCostModel::kCpu.near_pairs_per_s) CHECK(levels.back() < levels.front());
      }
    }
}

TEST_CASE("full level rule: the order resolved from the accuracy, the device's rates, the near kernel's depth") {
  const Particles p = test::make("plummer", 3, 5000, 82);
  const LevelScan scan(p, default_domain(p), max_level(3));
  const KernelInfo& k = find_kernel("cpu-fmm");
  MethodSetup s;
  s.accuracy = 1e-5;
  FullLevelChoice c = choose_full_level_for(scan, k, s);
  CHECK(c.order == farfield::order_for_accuracy(3, 1e-5, c.level, 5000));
  for (const FullLevelCost& e : c.evaluated) CHECK(e.order == farfield::order_for_accuracy(3, 1e-5, e.level, 5000));
  // Level 5: 1.92e-6 x the sparse factor 3.2 (x = 5000^2 / 8^5 = 763) <= 1e-5; level 6: 5.4.
  CHECK(c.deepest == farfield::deepest_reaching(3, 1e-5, max_level(3), 5000));
  CHECK(c.deepest == 5);
  // Only levels where order 20 reaches the accuracy (3D: 1.92e-6 up to level 7, 3.5e-6 at 8 for
  // many particles; 5000 of them up to level 2, whose sparse factor is 1, then 1.14 at level 3):
  // a deeper choice would be refused after it.
  CHECK(farfield::deepest_reaching(3, 2e-6, max_level(3), 0) == 7);
  MethodSetup tight = s;
  tight.accuracy = 2e-6;
  const FullLevelChoice t = choose_full_level_for(scan, k, tight);
  CHECK(t.deepest == farfield::deepest_reaching(3, 2e-6, max_level(3), 5000));
  CHECK(t.deepest == 2);
  CHECK(t.accuracy_capped);
  CHECK(describe(t).find("the deepest where order 20 reaches the accuracy") != std::string::npos);
  CHECK(c.near == default_cpu_near_kernel());
  CHECK(c.rates.near_pairs_per_s == FullMethodCostModel::rates(false, Precision::f32, c.near).near_pairs_per_s);
  // The CPU's rates per precision; a near kernel with a line of its own takes its line's rate.
  for (Precision prec : {Precision::f32, Precision::f64}) {
    const FullMethodRates& cpu = prec == Precision::f64 ? FullMethodCostModel::kCpuDouble : FullMethodCostModel::kCpu;
    const FullMethodRates got = FullMethodCostModel::rates(false, prec, "cpu-simd-omp-n3");
    CHECK(got.near_pairs_per_s == cpu.near_pairs_per_s);
    CHECK(got.m2l_madds_per_s == cpu.m2l_madds_per_s);
    CHECK(got.m2l_s_per_translation == cpu.m2l_s_per_translation);
    CHECK(got.adaptive_near_pairs_per_s == cpu.adaptive_near_pairs_per_s);
    for (const auto& line : FullMethodCostModel::kNearKernels) {
      CAPTURE(line.kernel);
      const FullMethodRates own = FullMethodCostModel::rates(false, prec, line.kernel);
      CHECK(own.near_pairs_per_s == (prec == Precision::f64 ? line.double_pairs_per_s : line.float_pairs_per_s));
      CHECK(own.near_pairs_per_s < cpu.near_pairs_per_s);  // every other CPU kernel is slower than the default
      CHECK(own.m2l_madds_per_s == cpu.m2l_madds_per_s);
    }
  }
  CHECK(FullMethodCostModel::kCpuDouble.near_pairs_per_s < FullMethodCostModel::kCpu.near_pairs_per_s);
  // cpu-omp reads the dense layout: levels stop where its arrays would pass 1 GiB (at an accuracy
  // order 20 reaches there for 5000 particles).
  s.accuracy = 1e-4;
  s.near = "cpu-omp";
  c = choose_full_level_for(scan, k, s);
  CHECK(c.deepest == deepest_auto_level(3, true));
  s.near = "cpu-n3";
  s.order = 5;
  c = choose_full_level_for(scan, k, s);
  CHECK(c.order == 5);
  CHECK(c.near == "cpu-n3");
  const FullMethodRates gpu = FullMethodCostModel::rates(true, Precision::f64, "n3-rotate");
  CHECK(gpu.m2l_madds_per_s == FullMethodCostModel::kGpuDouble.m2l_madds_per_s);
  CHECK(FullMethodCostModel::rates(true, Precision::f32, "n3-rotate").near_pairs_per_s ==
        FullMethodCostModel::kGpuFloat.near_pairs_per_s);
  // A near-field kernel keeps the near-field rule.
  std::string note;
  MethodSetup near;
  const int level = resolve_level(kAutoLevel, p, default_domain(p), find_kernel("cpu-n3"), near, note);
  CHECK(level == choose_level_for(p, default_domain(p), {"cpu-n3"}).level);
  CHECK(note.find("near-field pairs per particle") != std::string::npos);
}

TEST_CASE("the automatic leaf size of the adaptive methods: the fitted sizes, growing with the order") {
  const FullMethodRates gpu = FullMethodCostModel::kGpuFloat, cpu = FullMethodCostModel::kCpu;
  // The best measured leaf sizes on the H100 (results/fmm-adaptive-leaf): 3D Plummer 2^24 128..192
  // at p = 6; since M2L's orders per offset (results/fmm-m2l-orders) 192 at p = 8 (160 and 256:
  // 1.03x), 192..329 at p = 10 (within 3%), 384..512 at p = 12 (256: 1.10x, 639: 1.07x); 3D clusters
  // 2^22 at p = 12: 512 (384: 1.17x, before); 2D clusters and uniform 2^22: 64..128 at p = 8, 128..192 at 12;
  // with the leaves' mutual pairs (a faster near field: larger leaves) 3D Plummer 280..320 at p = 10 and
  // 2D 96..160 at p = 8, 160 at p = 12 (docs/design.md §16, "The automatic leaf size"). Since M2L's
  // levels run at once (H200, results/fmm-adaptive-leaf-high) 448 at p = 12 is within 1.07x of the
  // best on 3D Plummer 2^20..2^24, the shell 2^22 and uniform 2^24, where 508 took up to 1.21x; at
  // p = 14 (tensor cores) the best measured sizes were 448..512 on Plummer 2^22, 2^24 and the shell
  // (654, the size before: up to 1.36x), 654..768 on uniform 2^24 (its level-5 boxes hold about 512).
  const struct { int d, p; std::uint32_t lo, hi; } fitted[] = {
      {3, 6, 128, 192}, {3, 8, 160, 256}, {3, 10, 192, 329}, {3, 12, 416, 480}, {3, 14, 448, 576}, {2, 8, 96, 160}, {2, 12, 128, 192}};
  for (const auto& f : fitted) {
    CAPTURE(f.d);
    CAPTURE(f.p);
    CHECK(auto_leaf_size(f.d, f.p, gpu) >= f.lo);
    CHECK(auto_leaf_size(f.d, f.p, gpu) <= f.hi);
  }
  for (int d : {2, 3})
    for (const FullMethodRates& r : {gpu, cpu, FullMethodCostModel::kGpuDouble})
      for (int p = 1; p < 20; ++p) {
        CHECK(auto_leaf_size(d, p, r) >= 16);
        CHECK(auto_leaf_size(d, p, r) <= 4096);
        // Dearer translations, larger leaves; but on the CPU (time by multiply-adds) the orders per
        // offset make the first order they apply to cheaper than the one below it.
        const bool first_graded = farfield::coefficient_pairs(d, p) < farfield::kOffsetOrdersFrom &&
                                  farfield::coefficient_pairs(d, p + 1) >= farfield::kOffsetOrdersFrom;
        if (!first_graded || r.m2l_by_slots) CHECK(auto_leaf_size(d, p + 1, r) >= auto_leaf_size(d, p, r));
      }
  // Faster pairs ask for larger leaves: the size follows sqrt(t_translation / t_pair).
  FullMethodRates fast = gpu;
  fast.adaptive_near_pairs_per_s *= 4;
  CHECK(std::abs(double(auto_leaf_size(3, 8, fast)) - 2.0 * auto_leaf_size(3, 8, gpu)) <= 1.0);
}

TEST_CASE("--level auto with a full method: forces, bench and simulate print the full method's choice") {
  test::TempDir dir;
  const Particles p = test::make("plummer", 3, 20000, 83);
  write_particles_csv(dir.file("p.csv"), p);
  const Particles q = read_particles_csv(dir.file("p.csv"));
  const LevelScan scan(q, default_domain(q), max_level(3));
  MethodSetup s;
  s.order = 3;
  const int low = choose_full_level_for(scan, find_kernel("cpu-fmm"), s).level;
  s.order = 12;
  const int high = choose_full_level_for(scan, find_kernel("cpu-fmm"), s).level;
  REQUIRE(low > high);

  auto r = test::run_cli({"forces", "--input", dir.file("p.csv"), "--kernel", "cpu-fmm", "--level", "auto", "--order",
                          "3", "--output", dir.file("a.csv")});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.rfind("level auto: " + std::to_string(low) + " (cpu-fmm p3 float, near field " +
                        default_cpu_near_kernel() + ", 3D", 0) == 0);
  CHECK(r.out.find("modeled near + far ms per level") != std::string::npos);

  // A sweep: each order its own level, printed once; the near-field kernel the near-field rule's.
  r = test::run_cli({"bench", "--input", dir.file("p.csv"), "--kernel", "cpu-fmm,cpu-n3", "--level", "auto", "--order",
                     "3,12", "--reps", "1", "--warmup", "0", "--output", dir.file("r.csv")});
  REQUIRE(r.code == 0);
  CHECK(r.out.find("level auto: " + std::to_string(low) + " (cpu-fmm p3") != std::string::npos);
  CHECK(r.out.find("level auto: " + std::to_string(high) + " (cpu-fmm p12") != std::string::npos);
  const auto rows = test::csv_rows(dir.file("r.csv"));
  REQUIRE(rows.size() == 4);
  const std::size_t kernel = test::column(rows[0], "kernel"), level = test::column(rows[0], "level"),
                    order = test::column(rows[0], "p"), rule = test::column(rows[0], "level_rule");
  std::set<std::string> seen;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    CHECK(rows[i][rule] == "auto");
    seen.insert(rows[i][kernel] + " " + rows[i][order] + " " + rows[i][level]);
  }
  const int near_level = choose_level_for(q, default_domain(q), {"cpu-fmm", "cpu-n3"}).level;
  CHECK(seen == std::set<std::string>{"cpu-fmm 3 " + std::to_string(low), "cpu-fmm 12 " + std::to_string(high),
                                      "cpu-n3  " + std::to_string(near_level)});

  r = test::run_cli({"simulate", "--input", dir.file("p.csv"), "--kernel", "cpu-fmm", "--level", "auto", "--order",
                     "12", "--dt", "0.001", "--steps", "1", "--output-dir", dir.file("run")});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK((r.out + r.err).find("level auto: " + std::to_string(high) + " (cpu-fmm p12") != std::string::npos);
}

TEST_CASE("level auto of a float full method stops where float32 would refuse the level") {
  // Positions up to 2000: float32's spacing there is 2^-13 (1.22e-4); a leaf box must be 8 of
  // them wide: 2000 / 2^20 = 1.9e-3 is, 2000 / 2^21 = 9.5e-4 is not.
  Domain d;
  d.side = 2000;
  const int deepest = deepest_resolved_level(d, 2, Precision::f32, 1e-4, 1.0, 31);
  CHECK(deepest == 20);
  CHECK(float_resolves(d, 2, deepest));
  CHECK_FALSE(float_resolves(d, 2, deepest + 1));
  CHECK_NOTHROW(check_float_resolution(d, 2, deepest, Precision::f32));
  CHECK_THROWS_AS(check_float_resolution(d, 2, deepest + 1, Precision::f32), UsageError);
  CHECK(deepest_resolved_level(d, 2, Precision::f64, 1e-4, 1.0, 31) == 31);
  // A softening of many leaf sides: the expansions' leading terms, mass (4 + eps'^2)^-1.5, pass
  // below 1e-30 where eps' = eps / side > about 1e10 (mass 1).
  Domain tiny;
  tiny.side = 1e-13;
  CHECK(far_field_scale(tiny, 3, 1.0, 1.0) < kFloatFarFieldFloor);
  CHECK_THROWS_AS(check_float_far_field(tiny, 3, 1.0, 1.0, Precision::f32), UsageError);
  CHECK_NOTHROW(check_float_far_field(tiny, 3, 1.0, 1.0, Precision::f64));
  CHECK_NOTHROW(check_float_far_field(tiny, 3, 1e-14, 1.0, Precision::f32));  // eps' = 0.8
  CHECK_NOTHROW(check_float_far_field(tiny, 3, 1.0, 0.0, Precision::f32));    // no mass, nothing lost
  CHECK(deepest_resolved_level(tiny, 3, Precision::f32, 1.0, 1.0, 21) == 1);  // direct sums only
  Domain unit;
  const int l = deepest_resolved_level(unit, 3, Precision::f32, 1e6, 1.0, 21);  // eps' = 1e6 2^l
  CHECK(float_far_field_kept(unit, l, 1e6, 1.0));
  CHECK_FALSE(float_far_field_kept(unit, l + 1, 1e6, 1.0));
  // The rule over an input: a tight cluster and far outliers want deep levels, and the choice stops
  // at the deepest float32 level and says so; in double it may go deeper.
  Particles p;
  p.dim = 2;
  auto push = [&](double x, double y, double m) { p.x.push_back(x), p.y.push_back(y), p.m.push_back(m); };
  for (int i = 0; i < 3000; ++i) {
    const double t = 7.919 * i, r = 1e-3 * std::sqrt(double(i % 97) / 97.0);
    push(r * std::cos(t), r * std::sin(t), 1.0 / 3000);
  }
  for (double x : {1000.0, -1000.0}) push(x, 0.5 * x, 1e-3);
  const Domain pd = default_domain(p);
  const LevelScan scan(p, pd, max_level(2));
  MethodSetup s;
  s.order = 8;
  const FullLevelChoice f = choose_full_level_for(scan, find_kernel("cpu-fmm"), s, &pd, total_mass(p));
  CHECK(f.float_capped);
  CHECK(f.deepest == deepest_resolved_level(pd, 2, Precision::f32, s.softening, total_mass(p), max_level(2)));
  CHECK(f.level <= f.deepest);
  CHECK(describe(f).find("the deepest float32 takes (every body inside its leaf box") != std::string::npos);
  s.precision = Precision::f64;
  CHECK_FALSE(choose_full_level_for(scan, find_kernel("cpu-fmm"), s, &pd, total_mass(p)).float_capped);
}

TEST_CASE("the order from an accuracy grows with the leaf level; at --level auto 2D clusters reach the target") {
  // The table at the calibration depth, then the measured growth (farfield/order.h: depth_factor).
  for (int dim : {2, 3})
    for (double accuracy : {1e-3, 1e-4, 1e-6})
      for (double n : {0.0, 2048.0, 1e6})
        for (int level = 1; level <= 16; ++level) {
          CAPTURE(dim);
          CAPTURE(accuracy);
          CAPTURE(n);
          CAPTURE(level);
          CHECK(farfield::order_for_accuracy(dim, accuracy, level, n) >=
                farfield::order_for_accuracy(dim, accuracy, level - 1, n));
        }
  CHECK(farfield::order_for_accuracy(2, 1e-4, 5, 0) == 8);
  CHECK(farfield::order_for_accuracy(2, 1e-4, 7, 0) == 10);
  CHECK(farfield::order_for_accuracy(2, 1e-4, 9, 0) == 12);
  CHECK(farfield::order_for_accuracy(3, 1e-4, 7, 0) == 10);
  CHECK(farfield::order_for_accuracy(3, 1e-4, 9, 0) > 10);
  // The method resolves its order at its level; --level auto leaves it to the rule.
  MethodSetup s;
  CHECK(full_setup_at(s, 2, 9, 100000).order == 12);
  CHECK(full_setup_at(s, 2, kAutoLevel, 100000).order == 0);
  CHECK(full_setup_at(s, 2, kAutoLevel, 100000).accuracy == farfield::kDefaultAccuracy);
  // 2D clusters of N = 10^5 at the default accuracy: the rule went to level 8 at p = 8 and erred
  // 1.75e-4 (validate, float64 reference); now it passes at the order its level needs.
  test::TempDir dir;
  const test::CliResult r = test::run_cli({"validate", "--dist", "clusters", "--dim", "2", "--n", "100000", "--seed",
                                           "1", "--kernel", "cpu-fmm", "--level", "auto", "--precision", "double",
                                           "--sample", "600", "--output", dir.file("v.csv")});
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  const auto rows = test::csv_rows(dir.file("v.csv"));
  REQUIRE(rows.size() == 2);
  CHECK(std::stoi(rows[1][test::column(rows[0], "level")]) >= 6);
  CHECK(std::stoi(rows[1][test::column(rows[0], "p")]) >= 9);
  CHECK(std::stod(rows[1][test::column(rows[0], "rel_l2")]) <= 1e-4);
}

TEST_CASE("an adaptive method takes at least the order its deepest level needs; its leaf size stays") {
  MethodSetup s;  // default accuracy, automatic leaf size and level
  const MethodSetup open = adaptive_setup(s, 2, false);
  CHECK(open.order == farfield::order_for_accuracy(2, farfield::kDefaultAccuracy / 2, 0, 0));
  s.level = 12;
  const MethodSetup deep = adaptive_setup(s, 2, false);
  CHECK(deep.order == std::max(open.order, farfield::order_for_accuracy(2, farfield::kDefaultAccuracy, 12, 0)));
  CHECK(deep.order > open.order);
  CHECK(deep.leaf_size == open.leaf_size);  // the level --level auto found for that size stays right
  s.order = 5;
  CHECK(adaptive_setup(s, 2, false).order == 5);  // --order wins
  // 2D mixed input, N = 20000, at the automatic size and level (12): p = 9 had erred 1.3e-4.
  test::TempDir dir;
  const test::CliResult r = test::run_cli({"validate", "--dist", "mixed", "--dim", "2", "--n", "20000", "--seed", "1",
                                           "--kernel", "cpu-fmm-adaptive", "--level", "auto", "--precision", "double",
                                           "--sample", "500", "--output", dir.file("v.csv")});
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  const auto rows = test::csv_rows(dir.file("v.csv"));
  REQUIRE(rows.size() == 2);
  CHECK(std::stod(rows[1][test::column(rows[0], "rel_l2")]) <= 1e-4);
}
