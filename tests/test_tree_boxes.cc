// The boxes of the tree (docs/design.md §2): the domain, the box rule (faces belong to the upper
// box), Morton keys and their bit layout, the galloping search over sorted keys, the dense
// neighbor lists and their link count B.
#include <algorithm>
#include <array>
#include <cmath>

#include "core/errors.h"
#include "tree/box_rule.h"
#include "tree/domain.h"
#include "tree/morton.h"
#include "tree/neighbors.h"
#include "tree/tree.h"
#include "helpers.h"
#include "tree_checks.h"

using namespace nf;

TEST_CASE("default and explicit domains") {
  const Particles p = test::from_points(2, {{0.5, -1.0}, {2.5, 0.0}, {1.0, 3.0}});
  const Domain d = default_domain(p);
  CHECK(d.origin[0] == 0.5);
  CHECK(d.origin[1] == -1.0);
  CHECK(d.side == 4.0);  // the larger extent (y: 4, x: 2)

  // Zero extent: one particle, or all coincident.
  CHECK(default_domain(test::from_points(3, {{2, 2, 2}})).side == 1.0);
  CHECK(default_domain(test::from_points(2, {{1, 1}, {1, 1}, {1, 1}})).side == 1.0);
  CHECK(default_domain(Particles{}).side == 1.0);

  const Domain e = parse_domain("0,-1,10", 2);
  CHECK(e.origin[1] == -1.0);
  CHECK(e.side == 10.0);
  CHECK_THROWS_AS(parse_domain("0,0,1", 3), InputError);
  CHECK_THROWS_AS(parse_domain("0,0,-1", 2), InputError);
  CHECK_THROWS_AS(parse_domain("0,x,1", 2), InputError);
  check_inside(p, parse_domain("0,-1,4", 2), "p.csv");  // upper faces are inside
  try {
    check_inside(p, parse_domain("0,0,4", 2), "p.csv");
    FAIL("no error");
  } catch (const InputError& err) {
    const std::string msg = err.what();
    CHECK(msg.find("p.csv") != std::string::npos);
    CHECK(msg.find("row 1") != std::string::npos);
    CHECK(msg.find("y = -1") != std::string::npos);
  }
}

TEST_CASE("box rule: faces belong to the upper box, the domain's upper face to the last box") {
  for (int level : {0, 1, 3, 7, 14, 21, 31}) {
    const std::uint32_t n = 1u << level;
    CHECK(box_coordinate(0.0, 0.0, 1.0, level) == 0);
    CHECK(box_coordinate(1.0, 0.0, 1.0, level) == n - 1);
    for (std::uint32_t c = 0; c < n; c += std::max(1u, n / 64)) {
      const double face = static_cast<double>(c) / n;  // exact: n is a power of two
      CHECK(box_coordinate(face, 0.0, 1.0, level) == c);
      if (c > 0) CHECK(box_coordinate(std::nextafter(face, 0.0), 0.0, 1.0, level) == c - 1);
    }
  }
  CHECK(box_coordinate(-3.0, -3.0, 6.0, 2) == 0);
  CHECK(box_coordinate(3.0, -3.0, 6.0, 2) == 3);
  CHECK(box_coordinate(0.0, -3.0, 6.0, 2) == 2);
}

TEST_CASE("Morton keys: round trip and the bit layout of docs/design.md §2, 64-bit to level 31 (2D) / 21 (3D)") {
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
