// The Z-order tree: Morton keys, neighbor lists, the compact and dense layouts (CPU builder),
// the memory a tree takes, the tree command and the `--level auto` rule.
#include <algorithm>
#include <chrono>
#include <numeric>
#include <set>
#include <sstream>

#include "allpairs/near_mask.h"
#include "tree/box_rule.h"
#include "io/csv_file.h"
#include "tree/domain.h"
#include "core/errors.h"
#include "extreme_inputs.h"
#include "methods/auto_level.h"
#include "helpers.h"
#include "tree/level_rule.h"
#include "tree/morton.h"
#include "tree/neighbors.h"
#include "tree/tree.h"
#include "tree_checks.h"

using namespace nf;

TEST_CASE("Morton keys: round trip and the bit layout of DESIGN.md, 64-bit to level 31 (2D) / 21 (3D)") {
  nf::Random r(1);
  for (int k = 0; k < 100000; ++k) {
    const std::array<std::uint32_t, 3> a2 = {static_cast<std::uint32_t>(r.below(1u << 31)),
                                             static_cast<std::uint32_t>(r.below(1u << 31)), 0};
    const std::uint32_t c2[2] = {a2[0], a2[1]};
    const std::uint64_t k2 = morton_key<2>(c2);
    CHECK(k2 == test::reference_key(2, a2, 31));
    std::uint32_t d2[2];
    morton_coords<2>(k2, d2);
    CHECK((d2[0] == c2[0] && d2[1] == c2[1]));
    const std::array<std::uint32_t, 3> a3 = {static_cast<std::uint32_t>(r.below(1u << 21)),
                                             static_cast<std::uint32_t>(r.below(1u << 21)),
                                             static_cast<std::uint32_t>(r.below(1u << 21))};
    const std::uint32_t c3[3] = {a3[0], a3[1], a3[2]};
    const std::uint64_t k3 = morton_key<3>(c3);
    CHECK(k3 == test::reference_key(3, a3, 21));
    std::uint32_t d3[3];
    morton_coords<3>(k3, d3);
    CHECK((d3[0] == c3[0] && d3[1] == c3[1] && d3[2] == c3[2]));
  }
  // The extremes: every coordinate bit set gives every key bit of dim * level.
  const std::uint32_t top2[2] = {0x7FFFFFFFu, 0x7FFFFFFFu}, top3[3] = {0x1FFFFFu, 0x1FFFFFu, 0x1FFFFFu};
  CHECK(morton_key<2>(top2) == (std::uint64_t(1) << 62) - 1);
  CHECK(morton_key<3>(top3) == (std::uint64_t(1) << 63) - 1);
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

TEST_CASE("the galloping search equals std::lower_bound from every hint") {
  nf::Random r(2);
  for (std::uint32_t m : {0u, 1u, 2u, 7u, 100u}) {
    std::vector<std::uint64_t> keys;
    for (std::uint32_t i = 0; i < m; ++i) keys.push_back(r.below(300));
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    const std::uint32_t size = static_cast<std::uint32_t>(keys.size());
    for (std::uint64_t key = 0; key < 310; ++key)
      for (std::uint32_t hint = 0; hint <= size; ++hint) {
        const auto want = std::lower_bound(keys.begin(), keys.end(), key) - keys.begin();
        CHECK(lower_bound_near(keys.data(), size, hint, key) == want);
      }
  }
}

TEST_CASE("B = (3n-2)^d - n^d links, 129540 at level 7 in 2D, exact at every level; half holds each pair once") {
  CHECK(full_link_count(2, 7) == 129540u);
  CHECK(full_link_count_text(2, 7) == "129540");
  CHECK(full_link_count_text(2, 7, true) == "64770");
  for (int dim : {2, 3})
    for (int level = 0; level <= max_level(dim); ++level) {
      // 2D: B = 4 (2n - 1)(n - 1); 3D: B = 26 n^3 - 54 n^2 + 36 n - 8; written in long division by 10.
      __extension__ using u128 = unsigned __int128;
      const u128 n = u128(1) << level;
      u128 b = dim == 2 ? 4 * (2 * n - 1) * (n - 1) : 26 * n * n * n - 54 * n * n + 36 * n - 8;
      std::string text;
      do text.insert(text.begin(), char('0' + int(b % 10)));
      while ((b /= 10) != 0);
      CHECK(full_link_count_text(dim, level) == text);
      if (level <= (dim == 2 ? 30 : 19)) CHECK(std::to_string(full_link_count(dim, level)) == text);
    }
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

TEST_CASE("dense neighbor lists match a brute-force search over all box pairs") {
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

TEST_CASE("the all-pairs near-field mask and the compact tree agree on every pair, at deep levels too") {
  for (const test::ExtremeInput& e : test::extreme_inputs()) {
    if (e.particles.size() > 2000) continue;
    CAPTURE(e.name);
    const Particles& p = e.particles;
    const Domain d = default_domain(p);
    const Tree t = build_tree(p, e.level, d, false);
    const std::vector<Cell> cells = cells_from_positions(p, e.level, d);
    std::vector<std::uint32_t> slot_of(p.size());  // input row -> compact box
    for (std::size_t s = 0; s < p.size(); ++s) slot_of[t.order[s]] = t.particle_slot[s];
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

// --- `--level auto` ------------------------------------------------------------------------------

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
  CHECK(r.out.rfind(line, 0) == 0);
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
  CHECK(r.out.rfind(line, 0) == 0);
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
