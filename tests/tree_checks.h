#pragma once
// Invariant checks of a tree against its particles, shared by the CPU and GPU builder tests.
#include <algorithm>
#include <set>

#include "common/box_rule.h"
#include "helpers.h"
#include "quadtree/morton.h"
#include "quadtree/tree.h"

namespace nf::test {

//! Lists sorted, in range, symmetric, no self links; half = the larger-index part, each pair once.
inline void check_neighbor_lists(int dim, int level, const NeighborLists& full, const NeighborLists& half) {
  const std::uint32_t nbox = 1u << (dim * level);
  REQUIRE(full.offset.size() == nbox + 1);
  REQUIRE(half.offset.size() == nbox + 1);
  CHECK(full.offset.back() == full.ids.size());
  CHECK(half.offset.back() == half.ids.size());
  std::set<std::pair<std::uint32_t, std::uint32_t>> pairs, half_pairs;
  for (std::uint32_t b = 0; b < nbox; ++b) {
    CHECK(std::is_sorted(full.ids.begin() + full.offset[b], full.ids.begin() + full.offset[b + 1]));
    for (std::uint32_t k = full.offset[b]; k < full.offset[b + 1]; ++k) {
      const std::uint32_t o = full.ids[k];
      CHECK(o < nbox);
      CHECK(o != b);
      pairs.insert({b, o});
    }
    for (std::uint32_t k = half.offset[b]; k < half.offset[b + 1]; ++k) {
      CHECK(half.ids[k] > b);
      CHECK(half_pairs.insert({b, half.ids[k]}).second);
    }
  }
  for (const auto& [a, b] : pairs) {
    CHECK(pairs.count({b, a}) == 1);  // symmetric
    if (a < b) CHECK(half_pairs.count({a, b}) == 1);
  }
  CHECK(half_pairs.size() * 2 == pairs.size());
}

//! boxIdx, sorted keys, permutation and non-empty list against the particles and the box rule.
inline void check_tree(const Particles& p, const Tree& t, int level, const Domain& d) {
  const std::size_t n = p.size();
  REQUIRE(t.level == level);
  REQUIRE(t.nbox == 1u << (p.dim * level));
  REQUIRE(t.box_start.size() == t.nbox + 1);
  REQUIRE(t.order.size() == n);
  REQUIRE(t.particle_box.size() == n);
  CHECK(t.box_start.front() == 0u);
  CHECK(t.box_start.back() == n);
  CHECK(std::is_sorted(t.box_start.begin(), t.box_start.end()));
  std::vector<std::uint32_t> seen(n, 0);
  for (std::uint32_t i : t.order) {
    REQUIRE(i < n);
    ++seen[i];
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [](std::uint32_t c) { return c == 1; }));
  for (std::size_t s = 0; s < n; ++s) {
    const std::uint32_t i = t.order[s];
    std::uint32_t c[3];
    for (int a = 0; a < p.dim; ++a) c[a] = box_coordinate(p.coord(i, a), d.origin[a], d.side, level);
    const std::uint32_t box = p.dim == 2 ? morton_encode<2>(reinterpret_cast<const std::uint32_t(&)[2]>(c))
                                         : morton_encode<3>(c);
    CHECK(t.particle_box[s] == box);
    CHECK(t.box_start[box] <= s);
    CHECK(s < t.box_start[box + 1]);
    if (s > 0 && t.particle_box[s - 1] == box) CHECK(t.order[s - 1] < i);  // stable
  }
  std::vector<std::uint32_t> nonempty;
  for (std::uint32_t b = 0; b < t.nbox; ++b)
    if (t.box_count(b)) nonempty.push_back(b);
  CHECK(t.nonempty == nonempty);
  check_neighbor_lists(p.dim, level, t.full, t.half);
}

}  // namespace nf::test
