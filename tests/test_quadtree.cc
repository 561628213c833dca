// The Z-order tree: Morton codes, neighbor lists, boxIdx and the permutation (CPU builder).
#include <algorithm>
#include <numeric>
#include <set>

#include "common/box_rule.h"
#include "common/domain.h"
#include "common/errors.h"
#include "helpers.h"
#include "quadtree/morton.h"
#include "quadtree/neighbors.h"
#include "quadtree/tree.h"
#include "tree_checks.h"

using namespace nf;

TEST_CASE("Morton encode/decode round trip, x in the lowest bit") {
  nf::Random r(1);
  for (int k = 0; k < 100000; ++k) {
    const std::uint32_t c2[2] = {static_cast<std::uint32_t>(r.below(1u << 15)), static_cast<std::uint32_t>(r.below(1u << 15))};
    std::uint32_t d2[2];
    morton_decode<2>(morton_encode<2>(c2), d2);
    CHECK((d2[0] == c2[0] && d2[1] == c2[1]));
    const std::uint32_t c3[3] = {static_cast<std::uint32_t>(r.below(1u << 10)), static_cast<std::uint32_t>(r.below(1u << 10)),
                                 static_cast<std::uint32_t>(r.below(1u << 10))};
    std::uint32_t d3[3];
    morton_decode<3>(morton_encode<3>(c3), d3);
    CHECK((d3[0] == c3[0] && d3[1] == c3[1] && d3[2] == c3[2]));
  }
  // The bit layout of DESIGN.md: bit d*k + a holds bit k of coordinate a.
  const std::uint32_t x1[2] = {1, 0}, y1[2] = {0, 1}, x2[2] = {2, 0};
  CHECK(morton_encode<2>(x1) == 1u);
  CHECK(morton_encode<2>(y1) == 2u);
  CHECK(morton_encode<2>(x2) == 4u);
  const std::uint32_t z1[3] = {0, 0, 1}, x2_3[3] = {2, 0, 0};
  CHECK(morton_encode<3>(z1) == 4u);
  CHECK(morton_encode<3>(x2_3) == 8u);
}

TEST_CASE("paper Fig. 2: at level 2, box (01, 01) is 0011 = 3") {
  const std::uint32_t c[2] = {1, 1};
  CHECK(morton_encode<2>(c) == 3u);
  // and the whole level-2 numbering row by row from the bottom
  const std::uint32_t expected[4][4] = {{0, 1, 4, 5}, {2, 3, 6, 7}, {8, 9, 12, 13}, {10, 11, 14, 15}};
  for (std::uint32_t y = 0; y < 4; ++y)
    for (std::uint32_t x = 0; x < 4; ++x) {
      const std::uint32_t cc[2] = {x, y};
      CHECK(morton_encode<2>(cc) == expected[y][x]);
    }
}

TEST_CASE("B = (3n-2)^d - n^d links, 129540 at level 7 in 2D; the half list holds each pair once") {
  CHECK(full_link_count(2, 7) == 129540u);
  for (int dim : {2, 3})
    for (int level = 0; level <= (dim == 2 ? 7 : 4); ++level) {
      CAPTURE(dim);
      CAPTURE(level);
      NeighborLists full, half;
      build_neighbor_lists(dim, level, full, half);
      CHECK(full.links() == full_link_count(dim, level));
      CHECK(half.links() * 2 == full.links());
      test::check_neighbor_lists(dim, level, full, half);
    }
}

TEST_CASE("neighbor lists match a brute-force search over all box pairs") {
  for (int dim : {2, 3})
    for (int level : {0, 1, 2, 3}) {
      NeighborLists full, half;
      build_neighbor_lists(dim, level, full, half);
      const std::uint32_t nbox = 1u << (dim * level);
      for (std::uint32_t a = 0; a < nbox; ++a) {
        std::uint32_t ca[3] = {0, 0, 0}, cb[3] = {0, 0, 0};
        std::vector<std::uint32_t> expect;
        for (std::uint32_t b = 0; b < nbox; ++b) {
          if (dim == 2) {
            std::uint32_t p[2], q[2];
            morton_decode<2>(a, p), morton_decode<2>(b, q);
            ca[0] = p[0], ca[1] = p[1], cb[0] = q[0], cb[1] = q[1];
          } else {
            morton_decode<3>(a, ca), morton_decode<3>(b, cb);
          }
          bool adj = a != b;
          for (int k = 0; k < 3; ++k) adj = adj && std::abs(int(ca[k]) - int(cb[k])) <= 1;
          if (adj) expect.push_back(b);
        }
        const std::vector<std::uint32_t> got(full.ids.begin() + full.offset[a], full.ids.begin() + full.offset[a + 1]);
        CHECK(got == expect);
      }
    }
}

TEST_CASE("boxIdx, sorted keys and the permutation back to input order") {
  for (int dim : {2, 3})
    for (int level : {0, 1, 2, 4}) {
      for (const char* dist : {"uniform", "plummer", "clusters"}) {
        CAPTURE(dist);
        const Particles p = test::make(dist, dim, 3001, 21);
        const Domain d = default_domain(p);
        const Tree t = build_tree(p, level, d);
        test::check_tree(p, t, level, d);
      }
    }
}

TEST_CASE("adversarial inputs: faces, upper face, one particle, coincident points, crowded boxes") {
  SUBCASE("points on box faces with an explicit domain") {
    std::vector<std::vector<double>> pts;
    for (int i = 0; i <= 8; ++i)
      for (int j = 0; j <= 8; ++j) pts.push_back({i / 8.0, j / 8.0});
    const Particles p = test::from_points(2, pts);
    const Domain d = parse_domain("0,0,1", 2);
    const Tree t = build_tree(p, 3, d);
    test::check_tree(p, t, 3, d);
    // (i/8, j/8) lies in box (min(i,7), min(j,7)): lower faces belong to the box above them.
    for (std::size_t s = 0; s < t.particles(); ++s) {
      const std::uint32_t i = t.order[s];
      const std::uint32_t c[2] = {std::min<std::uint32_t>(i / 9, 7), std::min<std::uint32_t>(i % 9, 7)};
      CHECK(t.particle_box[s] == morton_encode<2>(c));
    }
    const std::uint32_t corner[2] = {7, 7};
    CHECK(t.box_count(morton_encode<2>(corner)) == 4);  // x and y in {7/8, 1}
  }
  SUBCASE("one particle") {
    const Particles p = test::from_points(3, {{0.3, -0.2, 5.0}});
    const Tree t = build_tree(p, 2, default_domain(p));
    test::check_tree(p, t, 2, default_domain(p));
    CHECK(t.nonempty.size() == 1);
    CHECK(t.particle_box[0] == 0u);
  }
  SUBCASE("no particles") {
    const Particles p = test::from_points(2, {});
    const Tree t = build_tree(p, 3, default_domain(p));
    test::check_tree(p, t, 3, default_domain(p));
    CHECK(t.nonempty.empty());
    CHECK(t.max_box_count() == 0u);
  }
  SUBCASE("all particles coincident") {
    std::vector<std::vector<double>> pts(257, {0.25, 0.75, 0.5});
    const Particles p = test::from_points(3, pts);
    const Domain d = default_domain(p);
    CHECK(d.side == 1.0);
    const Tree t = build_tree(p, 4, d);
    test::check_tree(p, t, 4, d);
    CHECK(t.nonempty.size() == 1);
    CHECK(t.max_box_count() == 257u);
    std::vector<std::uint32_t> identity(257);
    std::iota(identity.begin(), identity.end(), 0u);
    CHECK(t.order == identity);  // a stable sort keeps input order among equal keys
  }
  SUBCASE("thousands of particles in one box next to empty boxes") {
    std::vector<std::vector<double>> pts;
    nf::Random r(4);
    for (int i = 0; i < 5000; ++i) pts.push_back({0.51 + 0.01 * r.uniform(), 0.51 + 0.01 * r.uniform()});
    pts.push_back({0.0, 0.0});
    pts.push_back({1.0, 1.0});
    const Particles p = test::from_points(2, pts);
    const Domain d = default_domain(p);
    const Tree t = build_tree(p, 5, d);
    test::check_tree(p, t, 5, d);
    CHECK(t.max_box_count() == 5000u);
    CHECK(t.nonempty.size() == 3);
    CHECK(t.min_box_count() == 0u);
  }
}

TEST_CASE("levels beyond the index types or memory are refused with a clear message") {
  CHECK_THROWS_AS(check_level(2, -1, 10, ~0ull, "memory"), UsageError);
  try {
    check_level(2, 15, 10, ~0ull, "host memory");
    FAIL("no error");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()).find("deepest supported level, 14") != std::string::npos);
  }
  CHECK_THROWS_AS(check_level(3, 10, 10, ~0ull, "host memory"), UsageError);
  check_level(3, 9, 10, ~0ull, "host memory");
  try {
    check_level(2, 12, 1000, 1ull << 29, "GPU memory");
    FAIL("no error");
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("level 12 in 2D needs") != std::string::npos);
    CHECK(msg.find("GiB") != std::string::npos);
    CHECK(msg.find("16777216 boxes") != std::string::npos);
  }
}

TEST_CASE("tree command prints the summary as key: value lines and writes the boxes") {
  test::TempDir dir;
  auto r = test::run_cli({"generate", "--dist", "uniform-exact", "--dim", "2", "--level", "7", "--ppb", "2", "--output",
                          dir.file("p.csv")});
  REQUIRE(r.code == 0);
  r = test::run_cli({"tree", "--input", dir.file("p.csv"), "--level", "7", "--output", dir.file("boxes.csv")});
  REQUIRE(r.code == 0);
  for (const char* line : {"particles: 32768\n", "dim: 2\n", "level: 7\n", "boxes: 16384\n", "nonempty_boxes: 16384\n",
                           "neighbor_links_full: 129540\n", "neighbor_links_half: 64770\n", "min_box_count: 2\n",
                           "max_box_count: 2\n", "domain: 0,0,1\n"})
    CHECK(r.out.find(line) != std::string::npos);
  const std::string boxes = test::read_text(dir.file("boxes.csv"));
  CHECK(boxes.rfind("box,cx,cy,start,count,full_neighbors,half_neighbors\n0,0,0,0,2,3,3\n", 0) == 0);
  CHECK(std::count(boxes.begin(), boxes.end(), '\n') == 16385);

  r = test::run_cli({"tree", "--input", dir.file("p.csv"), "--level", "15"});
  CHECK(r.code == 2);
  CHECK(r.err.find("deeper than the deepest supported level") != std::string::npos);
  r = test::run_cli({"tree", "--input", dir.file("p.csv"), "--level", "3", "--domain", "0.5,0.5,0.25"});
  CHECK(r.code == 2);
  CHECK(r.err.find("outside the domain") != std::string::npos);
  r = test::run_cli({"tree", "--input", dir.file("missing.csv"), "--level", "3"});
  CHECK(r.code == 2);
  CHECK(r.err.find("missing.csv") != std::string::npos);
}
