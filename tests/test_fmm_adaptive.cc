// The adaptive tree (tree/adaptive.h): its flags against their definitions computed here from the
// particles' keys alone, and the property the method rests on, checked pair by pair: for each
// target i and source j, exactly one of "j is in i's leaf's near field" and "one M2L between
// their ancestors" holds, and every box either touches is kept. Then the counts of
// cpu-fmm-adaptive and its options, and the order it takes in 3D without one. (Its forces against
// float64 all pairs: test_kernels_full.cc.)
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/errors.h"
#include "farfield/order.h"
#include "helpers.h"
#include "io/particle_file.h"
#include "methods/adaptive_method.h"
#include "methods/full_level_rule.h"
#include "methods/registry.h"
#include "tree/adaptive.h"
#include "tree/levels.h"
#include "tree/morton.h"
#include "tree/tree.h"

using namespace nf;

namespace {

struct AdaptiveCase {
  std::string what;
  Particles p;
  int level;
  std::uint32_t leaf_size;
};

std::vector<AdaptiveCase> cases() {
  std::vector<std::vector<double>> pile(30, {0.25, 0.5, 0.5});  // coincident points: never separate
  for (int i = 0; i < 40; ++i) pile.push_back({0.01 * (i % 7), 0.9 - 0.02 * (i % 5), 0.03 * (i % 11)});
  return {{"plummer 3D", test::make("plummer", 3, 700, 61), 6, 8},
          {"clusters 2D", test::make("clusters", 2, 900, 62), 8, 5},
          {"core 2D (one giant box)", test::make("core", 2, 600, 63), 7, 16},
          {"uniform 3D, level 2", test::make("uniform", 3, 300, 64), 2, 4},
          {"coincident points 3D", test::from_points(3, pile), 5, 3},
          {"leaf size 1, 2D", test::make("plummer", 2, 200, 65), 9, 1},
          {"one particle", test::from_points(3, {{0.3, 0.3, 0.3}}), 4, 1}};
}

// Integer coordinates of key at its level.
std::vector<std::int64_t> coords(int dim, std::uint64_t key) {
  std::vector<std::int64_t> c(dim);
  if (dim == 2) {
    std::uint32_t v[2];
    morton_coords<2>(key, v);
    c = {v[0], v[1]};
  } else {
    std::uint32_t v[3];
    morton_coords<3>(key, v);
    c = {v[0], v[1], v[2]};
  }
  return c;
}
bool adjacent(int dim, std::uint64_t a, std::uint64_t b) {  // or equal
  const auto ca = coords(dim, a), cb = coords(dim, b);
  for (int x = 0; x < dim; ++x)
    if (std::abs(ca[x] - cb[x]) > 1) return false;
  return true;
}

}  // namespace

TEST_CASE("adaptive tree: flags as defined, each pair counted once, every box touched kept") {
  for (const AdaptiveCase& c : cases()) {
    CAPTURE(c.what);
    const int d = c.p.dim, K = c.level;
    const Tree tree = build_tree(c.p, K, default_domain(c.p), false);
    const TreeLevels levels = build_levels(tree);
    const auto flags = adaptive_flags(levels, c.leaf_size);
    // Each sorted particle's key at every level, and the count of its box there.
    const std::size_t n = c.p.size();
    std::vector<std::uint64_t> leaf_key(n);
    for (std::uint32_t b = 0; b < levels.level[K].boxes(); ++b)
      for (std::uint32_t i = levels.level[K].first[b]; i < levels.level[K].first[b + 1]; ++i) leaf_key[i] = levels.level[K].key[b];
    const auto key_at = [&](std::size_t i, int l) { return leaf_key[i] >> (d * (K - l)); };
    const auto count_at = [&](std::size_t i, int l) {
      return std::size_t(std::count_if(leaf_key.begin(), leaf_key.end(), [&](std::uint64_t k) { return (k >> (d * (K - l))) == key_at(i, l); }));
    };
    const auto flag_of = [&](int l, std::uint64_t key) -> std::uint8_t {
      const TreeLevel& level = levels.level[l];
      const auto it = std::lower_bound(level.key.begin(), level.key.end(), key);
      REQUIRE(it != level.key.end());
      REQUIRE(*it == key);
      return flags[l][std::size_t(it - level.key.begin())];
    };
    // Particle i's leaf level by the definition: the shallowest level where its box holds at most
    // S particles, or K.
    std::vector<int> leaf_level(n);
    for (std::size_t i = 0; i < n; ++i) {
      int l = 0;
      while (l < K && count_at(i, l) > c.leaf_size) ++l;
      leaf_level[i] = l;
      for (int a = 0; a <= l; ++a) CHECK((flag_of(a, key_at(i, a)) & adaptive::kTarget));
      for (int a = 0; a < l; ++a) CHECK((flag_of(a, key_at(i, a)) & adaptive::kSplit));
      CHECK(adaptive::leaf(flag_of(l, key_at(i, l))));
      if (l < K) CHECK_FALSE((flag_of(l + 1, key_at(i, l + 1)) & adaptive::kTarget));
    }
    std::size_t near_pairs = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const int L = leaf_level[i];
      for (std::size_t j = 0; j < n; ++j) {
        const bool near = adjacent(d, key_at(i, L), key_at(j, L));
        if (near) CHECK((flag_of(L, key_at(j, L)) & adaptive::kKept));
        near_pairs += near && i != j;
        int paths = 0;
        for (int l = 2; l <= L; ++l) {
          const bool apart = !adjacent(d, key_at(i, l), key_at(j, l));
          const bool parents_adjacent = adjacent(d, key_at(i, l - 1), key_at(j, l - 1));
          if (apart && parents_adjacent) {
            ++paths;
            CHECK((flag_of(l, key_at(j, l)) & adaptive::kKept));
            CHECK((flag_of(l, key_at(i, l)) & adaptive::kTarget));
          }
        }
        CAPTURE(i);
        CAPTURE(j);
        CHECK(paths + (near ? 1 : 0) == 1);
      }
    }
    // The method's near-field count is the pairs found here.
    MethodSetup s;
    s.level = K;
    s.domain = default_domain(c.p);
    s.order = 4;
    s.leaf_size = c.leaf_size;
    auto m = make_method(find_kernel("cpu-fmm-adaptive"), s, c.p);
    m->prepare(c.p);
    std::uint64_t counted = 0;
    for (const Count& x : m->counts())
      if (x.name == "near_pairs") counted = x.value;
    CHECK(counted == near_pairs);
  }
}

TEST_CASE("adaptive tree: a leaf size as large as N leaves the root a leaf, all pairs near") {
  const Particles p = test::make("uniform", 3, 200, 66);
  const Tree tree = build_tree(p, 4, default_domain(p), false);
  const auto flags = adaptive_flags(build_levels(tree), 200);
  CHECK(adaptive::leaf(flags[0][0]));
  for (int l = 1; l <= 4; ++l)
    for (std::uint8_t f : flags[l]) CHECK(f == 0);
}

TEST_CASE("--leaf-size is for the adaptive methods; they refuse --near") {
  const Particles p = test::make("uniform", 2, 100, 3);
  MethodSetup s;
  s.level = 3;
  s.domain = default_domain(p);
  s.leaf_size = 16;
  CHECK_THROWS_AS(make_method(find_kernel("cpu-fmm"), s, p), UsageError);
  CHECK_THROWS_AS(make_method(find_kernel("cpu-omp"), s, p), UsageError);
  CHECK_NOTHROW(make_method(find_kernel("cpu-fmm-adaptive"), s, p));
  s.near = "cpu-omp";
  CHECK_THROWS_AS(make_method(find_kernel("cpu-fmm-adaptive"), s, p), UsageError);
  // The CLI: the option reaches the method, and its rows say the leaf size.
  const std::string in = "/tmp/nf_adaptive_in.csv", out = "/tmp/nf_adaptive_bench.csv";
  std::remove(out.c_str());
  REQUIRE(test::run_cli({"generate", "--dist", "plummer", "--dim", "3", "--n", "3000", "--output", in}).code == 0);
  const auto rows = test::rows_after({"bench", "--kernel", "cpu-fmm-adaptive", "--input", in, "--level", "auto",
                                      "--leaf-size", "20", "--order", "4", "--reps", "1", "--warmup", "0", "--output", out},
                                     out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[1][test::column(rows[0], "leaf_size")] == "20");
  CHECK(rows[1][test::column(rows[0], "near_kernel")] == "leaf-direct");
  CHECK(std::stoi(rows[1][test::column(rows[0], "level")]) >= 4);
  CHECK(test::run_cli({"bench", "--kernel", "cpu-fmm", "--input", in, "--level", "3", "--leaf-size", "20", "--output", out}).code != 0);
  // Without --leaf-size the method takes the automatic size for its order and device, which its rows
  // and its setup say, and --level auto splits down to it.
  std::remove(out.c_str());
  const auto automatic = test::rows_after({"bench", "--kernel", "cpu-fmm-adaptive", "--input", in, "--level", "auto",
                                           "--order", "4", "--reps", "1", "--warmup", "0", "--output", out},
                                          out);
  REQUIRE(automatic.size() == 2);
  const std::uint32_t expected = auto_leaf_size(3, 4, FullMethodCostModel::kCpu);
  CHECK(automatic[1][test::column(automatic[0], "leaf_size")] == std::to_string(expected));
  CHECK(automatic[1][test::column(automatic[0], "leaf_rule")] == "auto");
  CHECK(rows[1][test::column(rows[0], "leaf_rule")].empty());
  MethodSetup a;
  a.level = 3;
  a.order = 6;
  a.domain = default_domain(p);
  CHECK(make_method(find_kernel("cpu-fmm-adaptive"), a, p)->setup().leaf_size == auto_leaf_size(2, 6, FullMethodCostModel::kCpu));
  a.leaf_size = 7;
  CHECK(make_method(find_kernel("cpu-fmm-adaptive"), a, p)->setup().leaf_size == 7);
  // --level auto splits down to the automatic size: no box of the chosen level holds more, and the
  // level above has one that does.
  const int level = std::stoi(automatic[1][test::column(automatic[0], "level")]);
  const Particles q = io::read_particles(in);
  const auto most = [&](int l) { return build_tree(q, l, default_domain(q), false).max_box_count(); };
  CHECK(most(level) <= expected);
  CHECK(most(level - 1) > expected);
  // A point at the automatic size and one at a given size are different points for --resume.
  const auto again = test::rows_after({"bench", "--kernel", "cpu-fmm-adaptive", "--input", in, "--level", "auto",
                                       "--leaf-size", "20", "--order", "4", "--reps", "1", "--warmup", "0", "--output",
                                       out, "--resume"},
                                      out);
  CHECK(again.size() == 3);
  CHECK(test::rows_after({"bench", "--kernel", "cpu-fmm-adaptive", "--input", in, "--level", "auto", "--order", "4",
                          "--reps", "1", "--warmup", "0", "--output", out, "--resume"},
                         out)
            .size() == 3);
}

TEST_CASE("simulate with an adaptive method records its leaf size, and --resume keeps it") {
  test::TempDir dir;
  const std::string in = dir.file("in.csv"), run = dir.file("run");
  REQUIRE(test::run_cli({"generate", "--dist", "plummer", "--dim", "3", "--n", "600", "--output", in}).code == 0);
  const std::vector<std::string> args = {"simulate", "--input", in, "--kernel", "cpu-fmm-adaptive", "--order", "4", "--level", "auto",
                                         "--dt", "1e-4", "--snapshot-every", "1", "--output-dir", run};
  std::vector<std::string> first = args;
  for (const char* a : {"--steps", "1"}) first.push_back(a);
  const test::CliResult r = test::run_cli(first);
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::string ini = test::read_text(run + "/run.ini");
  const std::string used = "leaf_size_used = " + std::to_string(auto_leaf_size(3, 4, FullMethodCostModel::kCpu));
  CHECK(ini.find(used) != std::string::npos);
  // A run recorded with another size (or before the key existed) continues at that size.
  ini.replace(ini.find(used), used.size(), "leaf_size_used = 20");
  test::write_text(run + "/run.ini", ini);
  std::vector<std::string> resumed = args;
  for (const char* a : {"--steps", "2", "--resume"}) resumed.push_back(a);
  test::CliResult again = test::run_cli(resumed);
  INFO(again.err);
  REQUIRE(again.code == 0);
  CHECK(again.out.find("resuming at leaf size 20 (the run's)") != std::string::npos);
}

TEST_CASE("--resume keeps a full method's order; --level auto of an adaptive sweep is chosen per precision") {
  test::TempDir dir;
  const std::string in = dir.file("in.csv"), run = dir.file("run");
  REQUIRE(test::run_cli({"generate", "--dist", "uniform", "--dim", "2", "--n", "400", "--output", in}).code == 0);
  const std::vector<std::string> args = {"simulate", "--input", in, "--kernel", "cpu-fmm", "--level", "3", "--dt",
                                         "1e-4", "--snapshot-every", "1", "--output-dir", run};
  std::vector<std::string> first = args;
  for (const char* a : {"--steps", "1"}) first.push_back(a);
  REQUIRE(test::run_cli(first).code == 0);
  std::string ini = test::read_text(run + "/run.ini");
  const std::size_t at = ini.find("order_used = ");
  REQUIRE(at != std::string::npos);
  // A run recorded at another order (an earlier error model) continues at it.
  ini.replace(at, ini.find('\n', at) - at, "order_used = 5");
  test::write_text(run + "/run.ini", ini);
  std::vector<std::string> resumed = args;
  for (const char* a : {"--steps", "2", "--resume"}) resumed.push_back(a);
  const test::CliResult again = test::run_cli(resumed);
  INFO(again.err);
  REQUIRE(again.code == 0);
  CHECK(again.out.find("resuming at order 5 (the run's)") != std::string::npos);
  CHECK(again.out.find("order 5") != std::string::npos);

  // 3000 points far from the origin, most of them in a small core: float32 caps the adaptive
  // tree's depth, double does not. The level chosen for one precision had been reused for the other.
  Particles p;
  p.dim = 2;
  for (int i = 0; i < 3000; ++i) {
    const double t = 2.399963 * i, r = i < 2000 ? 1e-3 * std::sqrt((i + 0.5) / 2000.0) : 0.5 * ((i % 997) / 997.0);
    p.x.push_back(1000.5 + r * std::cos(t)), p.y.push_back(1000.5 + r * std::sin(t)), p.m.push_back(1.0 / 3000);
  }
  const std::string off = dir.file("off.csv"), out = dir.file("v.csv");
  io::write_particles(off, p);
  for (const char* order : {"double,float", "float,double"}) {
    CAPTURE(order);
    std::filesystem::remove(out);
    const test::CliResult r = test::run_cli({"validate", "--input", off, "--kernel", "cpu-fmm-adaptive", "--level",
                                             "auto", "--precision", order, "--leaf-size", "16", "--output", out});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto rows = test::csv_rows(out);
    REQUIRE(rows.size() == 3);
    const std::size_t pc = test::column(rows[0], "precision"), lc = test::column(rows[0], "level");
    const int d = rows[1][pc] == "double" ? 1 : 2, f = 3 - d;
    CHECK(std::stoi(rows[d][lc]) > std::stoi(rows[f][lc]));
  }
}

TEST_CASE("an adaptive method in 3D takes the order of the table times its measured margin, at any depth") {
  // farfield::kAdaptiveMargin3: the largest error over the table measured on adaptive trees
  // (results/fmm-depth-error); the depth factor of the uniform methods does not apply.
  CHECK(farfield::kAdaptiveMargin3 >= 2.0);  // the shell at 2^22, level 10, p = 6 erred 2.44x the table
  CHECK(farfield::adaptive_order_for_accuracy_3d(1e-4) == 12);
  CHECK(farfield::adaptive_order_for_accuracy_3d(1e-3) == 7);
  for (double accuracy : {1e-3, 1e-4, 1e-5}) {
    CAPTURE(accuracy);
    const int p = farfield::adaptive_order_for_accuracy_3d(accuracy);
    const farfield::ErrorModel m = farfield::error_model(3);
    CHECK(m.error(p) * farfield::kAdaptiveMargin3 <= accuracy);
    CHECK(m.error(p - 1) * farfield::kAdaptiveMargin3 > accuracy);
    MethodSetup s;
    s.accuracy = accuracy;
    for (int level : {-1, 3, 9, 12}) {
      s.level = level;
      const MethodSetup got = adaptive_setup(s, 3, true);
      CHECK(got.order == p);
      CHECK(got.accuracy == accuracy);  // kept as the validation target
      CHECK(got.leaf_size == auto_leaf_size(3, p, FullMethodCostModel::rates(true, Precision::f32, "")));
    }
  }
  CHECK(farfield::best_adaptive_error_3d() ==
        farfield::error_model(3).error(farfield::kMaxOrder) * farfield::kAdaptiveMargin3);
  // The reachable accuracy does not depend on the level: 6e-6 at level 12 is refused for the uniform
  // method (its depth factor) and taken by the adaptive one; 3e-6 is below the adaptive model's best
  // (4.7e-6) and refused at any level, resolved or not.
  const Particles like = test::make("plummer", 3, 2000, 5);
  MethodSetup s;
  s.precision = Precision::f64;
  s.level = 12;
  s.accuracy = 6e-6;
  CHECK_NOTHROW(check_setup(find_kernel("cpu-fmm-adaptive"), s, like));
  CHECK_THROWS_WITH_AS(check_setup(find_kernel("cpu-fmm"), s, like), doctest::Contains("the error model reaches"),
                       UsageError);
  s.accuracy = 3e-6;
  for (int level : {-1, 3, 12}) {
    s.level = level;
    CHECK_THROWS_WITH_AS(check_setup(find_kernel("cpu-fmm-adaptive"), s, like),
                         doctest::Contains("error model of the adaptive methods"), UsageError);
  }
}
