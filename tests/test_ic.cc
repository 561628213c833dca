// Initial conditions (ic/generate.h): the generators are seeded and documented; uniform-exact has
// exactly P per box; lattice, the extreme layouts (shell, core, corners) and uniform-fast; bad
// options and the generate command's refusals. (The galaxies: test_ic_galaxies.cc.)
#include <limits>
#include <omp.h>

#include <cmath>

#include "cli/commands.h"
#include "core/errors.h"
#include "ic/generate.h"
#include "io/csv_file.h"
#include "tree/box_rule.h"
#include "tree/box_set.h"
#include "tree/domain.h"
#include "tree/tree.h"
#include "helpers.h"

using namespace nf;
using nf::test::TempDir;

TEST_CASE("generators are seeded, reproducible and documented") {
  for (const char* dist : {"uniform", "plummer", "clusters"})
    for (int dim : {2, 3}) {
      CAPTURE(dist);
      CAPTURE(dim);
      const Particles a = test::make(dist, dim, 501, 9), b = test::make(dist, dim, 501, 9), c = test::make(dist, dim, 501, 10);
      REQUIRE(a.size() == 501);
      CHECK(a.x == b.x);
      CHECK(a.m == b.m);
      CHECK(a.x != c.x);
      for (double m : a.m) CHECK((m >= 0.5 / 501 && m < 1.5 / 501));
    }
  GenerateOptions g;
  g.dist = "plummer";
  g.dim = 3;
  g.n = 4000;
  const Particles p = generate(g);
  double total = 0, r_max = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    total += p.m[i];
    r_max = std::max(r_max, std::sqrt(p.x[i] * p.x[i] + p.y[i] * p.y[i] + p.z[i] * p.z[i]));
  }
  CHECK(total == doctest::Approx(1.0));
  CHECK(r_max <= 10.0 * 3.0 * M_PI / 16.0);
  CHECK(p.has_velocities());
}

TEST_CASE("uniform-exact: exactly P per box over the default domain [0,1]^D, rows shuffled") {
  for (int dim : {2, 3})
    for (int level : {0, 1, 3}) {
      const std::int64_t ppb = 5;
      const Particles p = test::make_exact(dim, level, ppb);
      const std::int64_t nbox = std::int64_t(1) << (dim * level);
      REQUIRE(static_cast<std::int64_t>(p.size()) == nbox * ppb);
      const Domain d = default_domain(p);
      CHECK(d.side == 1.0);
      CHECK(d.origin[0] == 0.0);
      std::vector<int> count(static_cast<std::size_t>(nbox), 0);
      const std::uint32_t n = 1u << level;
      std::int64_t in_order = 0;
      for (std::size_t i = 0; i < p.size(); ++i) {
        std::uint32_t c[3] = {box_coordinate(p.x[i], 0, 1, level), box_coordinate(p.y[i], 0, 1, level),
                              dim == 3 ? box_coordinate(p.z[i], 0, 1, level) : 0};
        const std::uint32_t row_major = c[0] + n * (c[1] + n * c[2]);
        ++count[row_major];
        in_order += static_cast<std::int64_t>(row_major) == static_cast<std::int64_t>(i) / ppb;
      }
      for (int c : count) CHECK(c == ppb);
      if (nbox > 1) CHECK(in_order < static_cast<std::int64_t>(p.size()));
    }
}

TEST_CASE("lattice and bad generator options") {
  GenerateOptions g;
  g.dist = "lattice";
  g.dim = 2;
  g.n = 49;
  const Particles p = generate(g);
  CHECK(p.size() == 49);
  CHECK(p.x[8] == 1.0 / 7.0);
  g.n = 50;
  CHECK_THROWS_AS(generate(g), UsageError);
  g.n = 8;
  g.dim = 3;
  CHECK(generate(g).size() == 8);
  g.dist = "spiral";
  CHECK_THROWS_AS(generate(g), UsageError);
  g.dist = "uniform";
  g.dim = 4;
  CHECK_THROWS_AS(generate(g), UsageError);
  g.dim = 2;
  g.n = 10;
  g.level = 2;
  g.ppb = 3;
  CHECK_THROWS_AS(generate(g), UsageError);  // both --n and --level/--ppb
  g.n = -1;
  g.level = 20;
  CHECK_THROWS_AS(generate(g), UsageError);
  // A NaN jitter had passed the range check and written NaN positions; more clusters than
  // particles had allocated every centre (2e9 of them: std::bad_alloc).
  GenerateOptions l;
  l.dist = "lattice";
  l.dim = 3;
  l.n = 27;
  l.jitter = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(generate(l), doctest::Contains("--jitter must lie in [0, 1]"), UsageError);
  GenerateOptions c;
  c.dist = "clusters";
  c.n = 10;
  c.clusters = 11;
  CHECK_THROWS_WITH_AS(generate(c), doctest::Contains("--clusters 11 is more than the 10 particles"), UsageError);
  c.clusters = 10;
  CHECK(generate(c).size() == 10);
  // The default 4 clusters stay valid for fewer particles (the GPU tree tests generate N = 1).
  c.clusters = 4;
  for (std::int64_t n : {0, 1, 3}) {
    c.n = n;
    CHECK(generate(c).size() == std::size_t(n));
  }
  c.n = 3;
  c.clusters = 5;
  CHECK_THROWS_WITH_AS(generate(c), doctest::Contains("--clusters 5 is more than the 3 particles"), UsageError);
}

TEST_CASE("generate command writes a file that reads back") {
  TempDir dir;
  const auto r = test::run_cli({"generate", "--dist", "uniform-exact", "--dim", "3", "--level", "1", "--ppb", "3",
                                "--output", dir.file("g.csv")});
  CHECK(r.code == 0);
  CHECK(read_particles_csv(dir.file("g.csv")).size() == 24);
  const auto bad = test::run_cli({"generate", "--dist", "nope", "--n", "3", "--output", dir.file("h.csv")});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("unknown distribution") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("h.csv")));
}

TEST_CASE("generate refuses nonsense instead of ignoring it") {
  TempDir dir;
  const std::string out = dir.file("g.csv");
  auto r = test::run_cli({"generate", "--n", "1000", "--ppb", "4", "--level", "2", "--output", out});
  CHECK(r.code == 2);
  CHECK(r.err.find("--n and --ppb exclude each other") != std::string::npos);
  r = test::run_cli({"generate", "--ppb", "-1", "--level", "2", "--output", out});
  CHECK(r.code == 2);
  CHECK(r.err.find("--ppb: -1 is not a valid value") != std::string::npos);
  r = test::run_cli({"generate", "--ppb", "0", "--level", "2", "--output", out});
  CHECK(r.code == 2);
  r = test::run_cli({"generate", "--n", "-5", "--output", out});
  CHECK(r.code == 2);
  CHECK(r.err.find("--n: -5 is not a valid value") != std::string::npos);
  r = test::run_cli({"generate", "--n", "99999999999999999999", "--output", out});
  CHECK(r.code == 2);
  CHECK(r.err.find("is out of range") != std::string::npos);
  r = test::run_cli({"generate", "--level", "-2", "--ppb", "3", "--output", out});
  CHECK(r.code == 2);
  CHECK(r.err.find("--level: -2 is not a valid value") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
  // --input is not an option of generate, so its help does not offer it.
  r = test::run_cli({"generate", "--help"});
  CHECK(r.code == 0);
  CHECK(r.out.find("--ppb") != std::string::npos);
  CHECK(r.out.find("--input") == std::string::npos);
  // Writing into a folder that does not exist: exit 2, naming the path given.
  const std::string missing = dir.file("nope/g.csv");
  r = test::run_cli({"generate", "--n", "10", "--output", missing});
  CHECK(r.code == 2);
  CHECK(r.err.find(missing + ": cannot write: folder") != std::string::npos);
  CHECK(r.err.find(".tmp.") == std::string::npos);
}

TEST_CASE("extreme layouts: a thin shell, one crowded core, clusters at the corners") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const Particles shell = test::make("shell", dim, 4000, 2);
    for (std::size_t i = 0; i < shell.size(); ++i) {
      double r2 = 0;
      for (int a = 0; a < dim; ++a) r2 += (shell.coord(i, a) - 0.5) * (shell.coord(i, a) - 0.5);
      CHECK(std::sqrt(r2) >= 0.5 * (1 - 1e-3) - 1e-12);
      CHECK(std::sqrt(r2) <= 0.5 + 1e-12);
    }
    const Particles core = test::make("core", dim, 4000, 2);
    const Tree t = build_tree(core, 10, default_domain(core), false);
    CHECK(t.max_box_count() >= 0.98 * core.size());
    const Particles corners = test::make("corners", dim, 4000, 2);
    const Domain d = default_domain(corners);
    CHECK(d.side == 1.0);
    for (int a = 0; a < dim; ++a) CHECK(d.origin[a] == 0.0);
    CHECK(build_tree(corners, 8, d, false).nonempty_boxes() == (1u << dim));
    // Seeded: the same seed gives the same particles.
    CHECK(test::make("shell", dim, 100, 9).x == test::make("shell", dim, 100, 9).x);
  }
  test::TempDir dir;
  const auto r = test::run_cli({"generate", "--dist", "corners", "--dim", "3", "--n", "64", "--output", dir.file("c.csv")});
  CHECK(r.code == 0);
}

TEST_CASE("uniform-fast: uniform in [0,1)^D, the same for any thread count, seeded") {
  GenerateOptions g;
  g.dist = "uniform-fast";
  g.dim = 3;
  g.n = 100001;
  g.seed = 9;
  g.mass = "random";
  omp_set_num_threads(1);
  const Particles one = generate(g);
  omp_set_num_threads(2);
  const Particles two = generate(g);
  cli::apply_threads(0);
  CHECK(one.x == two.x);
  CHECK(one.y == two.y);
  CHECK(one.z == two.z);
  CHECK(one.m == two.m);
  double sum[3] = {0, 0, 0}, mass = 0;
  for (std::size_t i = 0; i < one.size(); ++i) {
    for (int a = 0; a < 3; ++a) {
      const double v = one.coord(i, a);
      REQUIRE(v >= 0.0);
      REQUIRE(v < 1.0);
      sum[a] += v;
    }
    CHECK(one.m[i] >= 0.5 / one.size());
    CHECK(one.m[i] < 1.5 / one.size());
    mass += one.m[i];
  }
  for (double s : sum) CHECK(s / one.size() == doctest::Approx(0.5).epsilon(0.01));
  CHECK(mass == doctest::Approx(1.0).epsilon(0.01));
  // Boxes fill evenly: level 3 has 512 boxes of about 195 particles each.
  const BoxSet b = count_boxes(one, 3, default_domain(one));
  CHECK(b.boxes() == 512);
  for (std::uint32_t c : b.count) CHECK(std::abs(int(c) - 195) < 80);
  g.seed = 10;
  CHECK(generate(g).x != one.x);
  g.dim = 2;
  g.mass = "equal";
  const Particles flat = generate(g);
  CHECK(flat.z.empty());
  CHECK(flat.m[0] == 1.0 / flat.size());
}
