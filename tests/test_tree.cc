// The CPU tree builder (tree/tree.h): the compact and dense layouts against a brute-force
// reference on random, deep, adversarial and extreme inputs, the memory a tree takes, the levels
// it refuses, the tree command; box counts without sorting (tree/box_set.h) against the tree.
#include <algorithm>
#include <chrono>
#include <numeric>

#include "core/errors.h"
#include "io/csv_file.h"
#include "tree/box_set.h"
#include "tree/domain.h"
#include "tree/morton.h"
#include "tree/tree.h"
#include "box_inputs.h"
#include "extreme_inputs.h"
#include "helpers.h"
#include "tree_checks.h"

using namespace nf;

TEST_CASE("both layouts against the brute-force reference on random inputs") {
  for (int dim : {2, 3})
    for (int level : {0, 1, 2, 4}) {
      for (const char* dist : {"uniform", "plummer", "clusters"}) {
        CAPTURE(dim);
        CAPTURE(level);
        CAPTURE(dist);
        const Particles p = test::make(dist, dim, 3001, 21);
        const Domain d = default_domain(p);
        test::check_tree(p, build_tree(p, level, d, true), level, d);
        const Tree compact = build_tree(p, level, d, false);
        test::check_compact(p, compact, level, d);
        CHECK(!compact.dense);
        CHECK(compact.box_start.empty());
        CHECK(compact.full.ids.empty());
        CHECK(compact.nonempty.empty());
      }
    }
}

TEST_CASE("the compact layout at deep levels (2D to 31, 3D to 21) against the brute-force reference") {
  for (int dim : {2, 3})
    for (const char* dist : {"uniform", "plummer", "clusters"})
      for (int level : dim == 2 ? std::vector<int>{8, 12, 16, 20, 25, 31} : std::vector<int>{6, 10, 12, 16, 21}) {
        CAPTURE(dim);
        CAPTURE(dist);
        CAPTURE(level);
        const Particles p = test::make(dist, dim, 1500, 5 + level);
        const Domain d = default_domain(p);
        test::check_compact(p, build_tree(p, level, d, false), level, d);
      }
  // Pairs of particles in adjacent boxes at the deepest level, across the middle and at both
  // ends of the domain: the neighbor test must see coordinates that differ by one.
  for (int dim : {2, 3}) {
    const int level = max_level(dim);
    const double h = std::ldexp(1.0, -level);
    std::vector<std::vector<double>> pts = {{0, 0, 0}, {h, 0, 0}, {1 - 2 * h, 1 - h, 1}, {1, 1, 1}, {0.5, 0.5, 0.5},
                                            {0.5 - h, 0.5, 0.5 + h}, {0.5 - 2 * h, 0.5, 0.5}};
    const Particles p = test::from_points(dim, pts);
    const Domain d = parse_domain(dim == 2 ? "0,0,1" : "0,0,0,1", dim);
    const Tree t = build_tree(p, level, d, false);
    test::check_compact(p, t, level, d);
    CHECK(t.nonempty_boxes() == 7u);
    CHECK(t.near_full.links() == 8u);  // 0-1, 2-3, 4-5, 5-6, each both ways
  }
}

TEST_CASE("adversarial inputs: faces, upper face, one particle, coincident points, crowded boxes") {
  SUBCASE("points on box faces with an explicit domain") {
    std::vector<std::vector<double>> pts;
    for (int i = 0; i <= 8; ++i)
      for (int j = 0; j <= 8; ++j) pts.push_back({i / 8.0, j / 8.0});
    const Particles p = test::from_points(2, pts);
    const Domain d = parse_domain("0,0,1", 2);
    const Tree t = build_tree(p, 3, d, true);
    test::check_tree(p, t, 3, d);
    // (i/8, j/8) lies in box (min(i,7), min(j,7)): lower faces belong to the box above them.
    for (std::size_t s = 0; s < t.particles(); ++s) {
      const std::uint32_t i = t.order[s];
      const std::uint32_t c[2] = {std::min<std::uint32_t>(i / 9, 7), std::min<std::uint32_t>(i % 9, 7)};
      CHECK(t.particle_box[s] == morton_encode<2>(c));
    }
    const std::uint32_t corner[2] = {7, 7};
    CHECK(t.box_count(morton_encode<2>(corner)) == 4);  // x and y in {7/8, 1}
    for (int level : {10, 20, 31}) test::check_compact(p, build_tree(p, level, d, false), level, d);
  }
  SUBCASE("one particle") {
    const Particles p = test::from_points(3, {{0.3, -0.2, 5.0}});
    for (int level : {0, 2, 9, 21}) {
      const Tree t = build_tree(p, level, default_domain(p), level <= 2);
      test::check_compact(p, t, level, default_domain(p));
      if (t.dense) test::check_dense(t);
      CHECK(t.nonempty_boxes() == 1);
      CHECK(t.box_key[0] == 0u);
      CHECK(t.near_full.links() == 0u);
    }
  }
  SUBCASE("no particles") {
    const Particles p = test::from_points(2, {});
    for (int level : {0, 3, 31}) {
      const Tree t = build_tree(p, level, default_domain(p), level <= 3);
      test::check_compact(p, t, level, default_domain(p));
      if (t.dense) test::check_dense(t);
      CHECK(t.nonempty_boxes() == 0);
      CHECK(t.box_first == std::vector<std::uint32_t>{0});
      CHECK(t.near_full.offset == std::vector<std::uint32_t>{0});
      CHECK(t.max_box_count() == 0u);
      CHECK(t.min_box_count() == 0u);
    }
  }
  SUBCASE("all particles coincident") {
    std::vector<std::vector<double>> pts(257, {0.25, 0.75, 0.5});
    const Particles p = test::from_points(3, pts);
    const Domain d = default_domain(p);
    CHECK(d.side == 1.0);
    for (int level : {0, 4, 9, 21}) {
      const Tree t = build_tree(p, level, d, level <= 4);
      test::check_compact(p, t, level, d);
      if (t.dense) test::check_dense(t);
      CHECK(t.nonempty_boxes() == 1);
      CHECK(t.max_box_count() == 257u);
      std::vector<std::uint32_t> identity(257);
      std::iota(identity.begin(), identity.end(), 0u);
      CHECK(t.order == identity);  // a stable sort keeps input order among equal keys
    }
  }
  SUBCASE("thousands of particles in one box next to empty boxes") {
    std::vector<std::vector<double>> pts;
    nf::Random r(4);
    for (int i = 0; i < 5000; ++i) pts.push_back({0.51 + 0.01 * r.uniform(), 0.51 + 0.01 * r.uniform()});
    pts.push_back({0.0, 0.0});
    pts.push_back({1.0, 1.0});
    const Particles p = test::from_points(2, pts);
    const Domain d = default_domain(p);
    const Tree t = build_tree(p, 5, d, true);
    test::check_tree(p, t, 5, d);
    CHECK(t.max_box_count() == 5000u);
    CHECK(t.nonempty_boxes() == 3);
    CHECK(t.min_box_count() == 0u);
    for (int level : {12, 18}) test::check_compact(p, build_tree(p, level, d, false), level, d);
  }
}

TEST_CASE("extreme inputs: the compact layout against the reference, the dense one where it fits") {
  for (const test::ExtremeInput& e : test::extreme_inputs()) {
    CAPTURE(e.name);
    const Domain d = default_domain(e.particles);
    test::check_compact(e.particles, build_tree(e.particles, e.level, d, false), e.level, d);
    if (e.dense_ok) test::check_tree(e.particles, build_tree(e.particles, e.level, d, true), e.level, d);
    CHECK(e.dense_ok == (e.level <= max_dense_level(e.particles.dim)));
  }
}

TEST_CASE("the tree's memory follows N: 3 particles at 2D level 14 (and deeper) take a few hundred bytes") {
  const Particles p = test::from_points(3, {{0.1, 0.2, 0.3}, {0.7, 0.3, 0.9}, {0.9, 0.95, 0.1}});
  for (int dim : {2, 3}) {
    Particles q = p;
    q.dim = dim;
    if (dim == 2) q.z.clear();
    for (int level : {dim == 2 ? 14 : 9, max_level(dim)}) {
      CAPTURE(dim);
      CAPTURE(level);
      const auto t0 = std::chrono::steady_clock::now();
      const Tree t = build_tree(q, level, default_domain(q), false);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      CHECK(t.heap_bytes() < 1024u);  // the dense layout at 2D level 14 would be about 16 GB
      CHECK(s < 1.0);
      CHECK(t.nonempty_boxes() == 3u);
      CHECK(tree_bytes(dim, level, 3, false) < 1024.0);
    }
  }
  // The dense layout's bytes do follow 4^K: that is what a dense request is refused by.
  CHECK(tree_bytes(2, 14, 3, true) > 1.5e10);
  // Without neighbor lists (a GPU build for fmm-adaptive) a box costs its key and first only: 3D,
  // 2^20 particles at level 9 (more boxes than particles), 28 N + 12 N instead of 28 N + 20 N + 6 x 26 N.
  const double n = 1048576.0;
  CHECK(tree_bytes(3, 9, 1048576, false, false) == doctest::Approx(40.0 * n));
  CHECK(tree_bytes(3, 9, 1048576, false) == doctest::Approx((48.0 + 6.0 * 26.0) * n));
}

TEST_CASE("levels beyond the keys, the dense layout or memory are refused with a clear message") {
  CHECK_THROWS_AS(check_level(2, -1, 10, ~0ull, "memory", false), UsageError);
  try {
    check_level(2, 32, 10, ~0ull, "host memory", false);
    FAIL("no error");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()).find("deepest supported level, 31") != std::string::npos);
  }
  CHECK_THROWS_AS(check_level(3, 22, 10, ~0ull, "host memory", false), UsageError);
  check_level(3, 21, 10, ~0ull, "host memory", false);
  check_level(2, 31, 10, ~0ull, "host memory", false);
  check_level(3, 9, 10, ~0ull, "host memory", true);
  try {
    check_level(2, 15, 10, ~0ull, "host memory", true);
    FAIL("no error");
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("level 15 in 2D") != std::string::npos);
    CHECK(msg.find("dense") != std::string::npos);
    CHECK(msg.find("GiB") != std::string::npos);
    CHECK(msg.find("at most level 14") != std::string::npos);
  }
  try {
    check_level(2, 12, 1000, 1ull << 29, "GPU memory", true);
    FAIL("no error");
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("level 12 in 2D needs") != std::string::npos);
    CHECK(msg.find("GiB") != std::string::npos);
    CHECK(msg.find("2^24 boxes") != std::string::npos);
  }
  // The same level without the dense arrays fits easily.
  check_level(2, 12, 1000, 1ull << 29, "GPU memory", false);
  CHECK_THROWS_AS(build_tree(test::make("uniform", 2, 10), 15, parse_domain("0,0,1", 2), true), UsageError);
}

TEST_CASE("tree command prints the summary as key: value lines and writes the boxes") {
  test::TempDir dir;
  auto r = test::run_cli({"generate", "--dist", "uniform-exact", "--dim", "2", "--level", "7", "--ppb", "2", "--output",
                          dir.file("p.csv")});
  REQUIRE(r.code == 0);
  r = test::run_cli({"tree", "--input", dir.file("p.csv"), "--level", "7", "--dense", "--output", dir.file("boxes.csv")});
  REQUIRE(r.code == 0);
  for (const char* line : {"particles: 32768\n", "dim: 2\n", "level: 7\n", "boxes: 16384\n", "nonempty_boxes: 16384\n",
                           "neighbor_links_full: 129540\n", "neighbor_links_half: 64770\n",
                           "neighbor_links_nonempty: 129540\n", "min_box_count: 2\n", "max_box_count: 2\n",
                           "domain: 0,0,1\n", "layout: compact+dense\n"})
    CHECK(r.out.find(line) != std::string::npos);
  std::string boxes = test::read_text(dir.file("boxes.csv"));
  CHECK(boxes.rfind("box,cx,cy,start,count,full_neighbors,half_neighbors\n0,0,0,0,2,3,3\n", 0) == 0);
  CHECK(std::count(boxes.begin(), boxes.end(), '\n') == 16385);

  // Compact: one row per non-empty box, neighbor counts over non-empty boxes.
  test::write_text(dir.file("sparse.csv"), "x,y,m\n0,0,1\n0.00001,0,1\n1,1,1\n0.5,0.5,1\n");
  r = test::run_cli({"tree", "--input", dir.file("sparse.csv"), "--level", "14", "--output", dir.file("sparse-boxes.csv")});
  REQUIRE(r.code == 0);
  for (const char* line : {"boxes: 268435456\n", "nonempty_boxes: 3\n", "neighbor_links_full: 2147287044\n",
                           "neighbor_links_nonempty: 0\n", "max_box_count: 2\n", "min_box_count: 0\n", "layout: compact\n"})
    CHECK(r.out.find(line) != std::string::npos);
  boxes = test::read_text(dir.file("sparse-boxes.csv"));
  CHECK(boxes == "box,cx,cy,start,count,nonempty_neighbors,nonempty_half_neighbors\n0,0,0,0,2,0,0\n"
                 "201326592,8192,8192,2,1,0,0\n268435455,16383,16383,3,1,0,0\n");
  r = test::run_cli({"tree", "--input", dir.file("sparse.csv"), "--level", "31"});
  CHECK(r.code == 0);
  CHECK(r.out.find("neighbor_links_full: 36893488121649299460\n") != std::string::npos);

  r = test::run_cli({"tree", "--input", dir.file("p.csv"), "--level", "32"});
  CHECK(r.code == 2);
  CHECK(r.err.find("deeper than the deepest supported level, 31") != std::string::npos);
  r = test::run_cli({"tree", "--input", dir.file("p.csv"), "--level", "15", "--dense"});
  CHECK(r.code == 2);
  CHECK(r.err.find("level 15 in 2D: the dense box arrays") != std::string::npos);
  r = test::run_cli({"tree", "--input", dir.file("p.csv"), "--level", "3", "--domain", "0.5,0.5,0.25"});
  CHECK(r.code == 2);
  CHECK(r.err.find("outside the domain") != std::string::npos);
  r = test::run_cli({"tree", "--input", dir.file("missing.csv"), "--level", "3"});
  CHECK(r.code == 2);
  CHECK(r.err.find("missing.csv") != std::string::npos);
  r = test::run_cli({"tree", "--input", dir.file("p.csv"), "--level", "auto"});
  CHECK(r.code == 0);
  // P = 2 at level 7 is P = 32 at level 5 and P = 8 at level 6: 32 + 256/32 < 8 + 256/8 (and the
  // boundary boxes favour the shallower level further).
  CHECK(r.out.find("level auto: 5 (2D, N = 32768") != std::string::npos);
  CHECK(r.out.find("level: 5\n") != std::string::npos);
}

TEST_CASE("count_boxes equals the CPU tree's boxes, counts and neighbor lists (dense and sorted counting)") {
  for (const test::BoxInput& c : test::box_inputs()) {
    CAPTURE(c.name);
    const Domain dom = default_domain(c.p);
    const Tree t = build_tree(c.p, c.level, dom, false);
    for (std::uint64_t limit : {kDenseCountLimit, std::uint64_t(0)}) {
      CAPTURE(limit);
      std::vector<std::uint32_t> particle_box;
      const BoxSet b = count_boxes(c.p, c.level, dom, &particle_box, limit);
      CHECK(b.key == t.box_key);
      REQUIRE(b.first.size() == t.box_first.size() + (t.box_first.empty() ? 1 : 0));
      for (std::size_t k = 0; k < t.box_first.size(); ++k) CHECK(b.first[k] == t.box_first[k]);
      CHECK(b.near.offset == t.near_full.offset);
      CHECK(b.near.ids == t.near_full.ids);
      REQUIRE(particle_box.size() == c.p.size());
      for (std::size_t s = 0; s < t.particles(); ++s) CHECK(particle_box[t.order[s]] == t.particle_compact_box[s]);
      CHECK(near_field_interactions(b) == near_field_interactions(box_set(t)));
      CHECK(b.max_count() == t.max_box_count());
    }
  }
}
