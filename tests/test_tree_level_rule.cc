// `--level auto` (tree/level_rule.h, methods/auto_level.h): the cost the rule minimises, checked
// against a brute-force tree; the levels it picks for uniform, uniform-exact and clustered input;
// the level it gives forces, validate and bench for the kernels' layout.
#include <cmath>
#include <set>
#include <sstream>

#include "core/errors.h"
#include "io/csv_file.h"
#include "methods/auto_level.h"
#include "methods/level_costs.h"
#include "methods/registry.h"
#include "tree/box_rule.h"
#include "tree/domain.h"
#include "tree/level_rule.h"
#include "tree/tree.h"
#include "helpers.h"
#include "tree_checks.h"

using namespace nf;

namespace {

// The rule's cost from the brute-force reference tree: sum n_b (n_b + neighbors' n) + c M.
double reference_cost(const Particles& p, int level, std::uint64_t* pairs_out = nullptr) {
  const Domain d = default_domain(p);
  const test::ReferenceTree ref = test::reference_tree(p, level, d);
  std::uint64_t pairs = 0;
  for (std::size_t b = 0; b < ref.key.size(); ++b) {
    std::uint64_t around = ref.first[b + 1] - ref.first[b];
    for (std::uint32_t o : ref.near[b]) around += ref.first[o + 1] - ref.first[o];
    pairs += (ref.first[b + 1] - ref.first[b]) * around;
  }
  if (pairs_out) *pairs_out = pairs;
  return static_cast<double>(pairs) + auto_box_overhead(p.dim) * static_cast<double>(ref.key.size());
}

}  // namespace

TEST_CASE("level auto: the cost it minimises is the documented one, and pruning never loses the minimum") {
  for (int dim : {2, 3})
    for (const char* dist : {"uniform", "clusters", "plummer"}) {
      CAPTURE(dim);
      CAPTURE(dist);
      const Particles p = test::make(dist, dim, 2000, 3);
      const Domain d = default_domain(p);
      const int deepest = dim == 2 ? 12 : 8;
      const LevelChoice c = choose_level(p, d, deepest);
      REQUIRE(!c.evaluated.empty());
      double best = 1e300;
      int best_level = -1;
      for (int level = 0; level <= deepest; ++level) {
        std::uint64_t pairs = 0;
        const double cost = reference_cost(p, level, &pairs);
        const LevelCost lc = level_cost(p, d, level);
        CHECK(lc.pairs == pairs);
        CHECK(lc.cost == cost);
        if (cost < best) best = cost, best_level = level;
      }
      CHECK(c.level == best_level);
      CHECK(c.chosen().cost == best);
      for (const LevelCost& e : c.evaluated) CHECK(e.cost == reference_cost(p, e.level));
    }
}

TEST_CASE("level auto with a kernel's cost model: its documented time, pruning exact, dense kernels count every box") {
  for (int dim : {2, 3})
    for (const char* dist : {"uniform", "clusters", "plummer"})
      for (bool dense : {false, true}) {
        CAPTURE(dim);
        CAPTURE(dist);
        CAPTURE(dense);
        const Particles p = test::make(dist, dim, 2000, 5);
        const Domain d = default_domain(p);
        KernelCostModel model;
        model.kernel = "test";
        model.pair_s = 5e-13;
        model.box_s = dense ? 2e-10 : 4e-12;
        model.link_s = dense ? 0.0 : 1e-11;
        model.all_boxes = dense;
        const int deepest = dim == 2 ? 12 : 8;
        const LevelChoice c = choose_level(p, d, deepest, &model);
        // The documented time at every level, from the brute-force tree: t_pair (pairs + c M)
        // + t_box B + t_link L, B and L over the non-empty boxes, or every box and link (dense).
        double best = 1e300;
        int best_level = -1;
        for (int level = 0; level <= deepest; ++level) {
          const test::ReferenceTree ref = test::reference_tree(p, level, d);
          std::uint64_t pairs = 0;
          reference_cost(p, level, &pairs);
          double boxes = static_cast<double>(ref.key.size()), links = 0;
          for (const auto& near : ref.near) links += 1.0 + static_cast<double>(near.size());
          const double m = boxes;
          if (dense) {
            boxes = std::ldexp(1.0, dim * level);
            links = boxes + static_cast<double>(full_link_count(dim, level));
          }
          const double t = model.pair_s * (static_cast<double>(pairs) + auto_box_overhead(dim) * m) +
                           model.box_s * boxes + model.link_s * links;
          CHECK(model.cost(dim, level, static_cast<double>(pairs), m, links) == doctest::Approx(t).epsilon(1e-12));
          if (t < best * (1 - 1e-12)) best = t, best_level = level;
        }
        CHECK(c.level == best_level);
        CHECK(c.chosen().cost == doctest::Approx(best).epsilon(1e-9));
        CHECK(describe(c).find("test's modelled time") != std::string::npos);
      }
}

TEST_CASE("level auto per kernel: a kernel with a cost model gets its own choice within its own depth limit") {
  const Particles p = test::make("clusters", 3, 3000, 9);
  const Domain d = default_domain(p);
  for (const char* kernel : {"bpb-lb", "n3-rotate", "bpb", "ppt"}) {
    CAPTURE(kernel);
    REQUIRE(kernel_cost_model(kernel, 3) != nullptr);
    const LevelChoice c = choose_level_for(p, d, {kernel});
    CHECK(c.model == kernel_cost_model(kernel, 3));
    CHECK(c.deepest == deepest_auto_level(3, find_kernel(kernel).dense_tree()));
    CHECK(c.level == choose_level(p, d, c.deepest, c.model).level);
    CHECK(describe(c).find(std::string(kernel) + "'s modelled time") != std::string::npos);
    // AutoLevels (a sweep's cells) makes the same choice from one shared scan.
    AutoLevels levels(p, d);
    std::string note;
    CHECK(levels.near(find_kernel(kernel), note) == c.level);
    CHECK(note.find(kernel) == 0);
  }
  // Several kernels together, or one without a model (CPU kernels), keep the generic rule.
  CHECK(choose_level_for(p, d, {"bpb-lb", "n3-rotate"}).model == nullptr);
  CHECK(choose_level_for(p, d, {"cpu-omp"}).model == nullptr);
  CHECK(kernel_cost_model("cpu-omp", 3) == nullptr);
}

TEST_CASE("level auto: uniform-exact input with P per box picks the level with P_t = 16 per box") {
  // 2D: levels are 4x apart in P, so P = 16 at level L stays, P = 64 goes one deeper, P = 4 one
  // shallower; 3D: 8x apart, P = 16 stays and P = 128 goes one deeper.
  struct Case {
    int dim, level;
    std::int64_t ppb;
    int expect;
  };
  for (const Case& k : {Case{2, 5, 16, 5}, Case{2, 4, 64, 5}, Case{2, 3, 256, 5}, Case{2, 6, 4, 5}, Case{2, 6, 1, 4},
                        Case{3, 3, 16, 3}, Case{3, 2, 128, 3}, Case{3, 4, 2, 3}}) {
    CAPTURE(k.dim);
    CAPTURE(k.level);
    CAPTURE(k.ppb);
    const Particles p = test::make_exact(k.dim, k.level, k.ppb);
    const LevelChoice c = choose_level(p, default_domain(p), max_level(k.dim));
    CHECK(c.level == k.expect);
    CHECK(describe(c).find("level auto: " + std::to_string(k.expect) + " (") == 0);
  }
}

TEST_CASE("level auto: clustered input picks deeper levels than uniform input of the same N") {
  for (int dim : {2, 3})
    for (std::int64_t n : {5000, 40000}) {
      CAPTURE(dim);
      CAPTURE(n);
      const Particles u = test::make("uniform", dim, n, 11), c = test::make("clusters", dim, n, 11);
      const int lu = choose_level(u, default_domain(u), max_level(dim)).level;
      const int lc = choose_level(c, default_domain(c), max_level(dim)).level;
      CHECK(lc > lu);
    }
  // Edge cases: nothing to split stays at level 0; coincident points gain nothing from depth.
  for (int dim : {2, 3}) {
    for (const auto& pts : {std::vector<std::vector<double>>{}, std::vector<std::vector<double>>{{0.5, 0.5, 0.5}},
                            std::vector<std::vector<double>>(100, {0.1, 0.2, 0.3})}) {
      const Particles p = test::from_points(dim, pts);
      CHECK(choose_level(p, default_domain(p), max_level(dim)).level == 0);
    }
  }
  CHECK_THROWS_AS(choose_level(test::make("uniform", 2, 10), parse_domain("0,0,1", 2), 32), UsageError);
}

TEST_CASE("--level auto in forces, validate and bench: the rule's level, printed, for the kernels' layout") {
  test::TempDir dir;
  const Particles p = test::make("clusters", 2, 3000, 4);
  write_particles_csv(dir.file("c.csv"), p);
  const Particles q = read_particles_csv(dir.file("c.csv"));
  const Domain d = default_domain(q);
  const int compact = choose_level(q, d, max_level(2)).level;
  const int dense = choose_level(q, d, deepest_auto_level(2, true)).level;
  CHECK(choose_level_for(q, d, {"cpu-serial"}).level == dense);
  CHECK(choose_level_for(q, d, {"cpu-allpairs"}).level == compact);  // the mask needs no dense arrays
  CHECK(deepest_auto_level(2, true) == 12);
  CHECK(deepest_auto_level(3, true) == 7);
  CHECK(deepest_auto_level(3, false) == 21);
  const std::string line = "level auto: " + std::to_string(dense) + " (2D, N = 3000";

  auto r = test::run_cli({"forces", "--input", dir.file("c.csv"), "--kernel", "cpu-serial", "--level", "auto",
                          "--output", dir.file("a.csv")});
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.rfind(line, 0) == 0);
  r = test::run_cli({"validate", "--input", dir.file("c.csv"), "--kernel", "cpu-n3", "--level", "3,auto"});
  CHECK(r.code == 0);
  CHECK(r.out.find("cpu-n3: " + line) != std::string::npos);  // a sweep's cells: the kernel named
  // The table's rows: kernel, precision, level, ...
  std::set<std::string> levels;
  std::istringstream rows(r.out);
  for (std::string row; std::getline(rows, row);) {
    std::istringstream words(row);
    std::string kernel, precision, level;
    words >> kernel >> precision >> level;
    if (kernel == "cpu-n3") levels.insert(level);
  }
  CHECK(levels == std::set<std::string>{"3", std::to_string(dense)});
  r = test::run_cli({"bench", "--input", dir.file("c.csv"), "--kernel", "cpu-serial", "--level", "auto", "--reps", "1",
                     "--warmup", "0", "--output", dir.file("r.csv")});
  CHECK(r.code == 0);
  CHECK(r.out.rfind("cpu-serial: " + line, 0) == 0);
  CHECK(test::read_text(dir.file("r.csv")).find(",2," + std::to_string(dense) + ",") != std::string::npos);
  r = test::run_cli({"validate", "--dist", "uniform-exact", "--dim", "2", "--ppb", "4", "--level", "auto"});
  CHECK(r.code == 2);
  CHECK(r.err.find("--level auto needs --input or --n") != std::string::npos);
  r = test::run_cli({"forces", "--dist", "uniform-exact", "--ppb", "4", "--level", "auto", "--kernel", "cpu-serial",
                     "--output", dir.file("b.csv")});
  CHECK(r.code == 2);
  r = test::run_cli({"forces", "--input", dir.file("c.csv"), "--kernel", "cpu-serial", "--level", "automatic",
                     "--output", dir.file("b.csv")});
  CHECK(r.code == 2);
}
