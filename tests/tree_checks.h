#pragma once
// Invariant checks of a tree against its particles, shared by the CPU and GPU builder tests.
#include <algorithm>

#include "common/box_rule.h"
#include "helpers.h"
#include "quadtree/morton.h"
#include "quadtree/tree.h"

namespace nf::test {

//! Lists sorted, in range, symmetric, no self links; half = the larger-index part, so each pair
//! appears once. Linear in the number of links (binary searches in the sorted lists).
inline void check_neighbor_lists(int dim, int level, const NeighborLists& full, const NeighborLists& half) {
  const std::uint32_t nbox = 1u << (dim * level);
  REQUIRE(full.offset.size() == nbox + 1);
  REQUIRE(half.offset.size() == nbox + 1);
  REQUIRE(full.offset.back() == full.ids.size());
  REQUIRE(half.offset.back() == half.ids.size());
  std::size_t bad = 0;
  for (std::uint32_t b = 0; b < nbox; ++b) {
    const auto first = full.ids.begin() + full.offset[b], last = full.ids.begin() + full.offset[b + 1];
    bad += !std::is_sorted(first, last) || std::adjacent_find(first, last) != last;
    std::vector<std::uint32_t> larger;
    for (auto it = first; it != last; ++it) {
      const std::uint32_t o = *it;
      if (o >= nbox || o == b) {
        ++bad;
        continue;
      }
      // symmetric: b is in o's list
      bad += !std::binary_search(full.ids.begin() + full.offset[o], full.ids.begin() + full.offset[o + 1], b);
      if (o > b) larger.push_back(o);
    }
    const std::vector<std::uint32_t> h(half.ids.begin() + half.offset[b], half.ids.begin() + half.offset[b + 1]);
    bad += h != larger;
  }
  CHECK(bad == 0);
  CHECK(half.links() * 2 == full.links());
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
  std::size_t bad = 0;
  for (std::size_t s = 0; s < n; ++s) {
    const std::uint32_t i = t.order[s];
    std::uint32_t c[3];
    for (int a = 0; a < p.dim; ++a) c[a] = box_coordinate(p.coord(i, a), d.origin[a], d.side, level);
    const std::uint32_t box = p.dim == 2 ? morton_encode<2>(reinterpret_cast<const std::uint32_t(&)[2]>(c))
                                         : morton_encode<3>(c);
    bad += t.particle_box[s] != box;
    bad += !(t.box_start[box] <= s && s < t.box_start[box + 1]);
    bad += s > 0 && t.particle_box[s - 1] == box && !(t.order[s - 1] < i);  // stable
  }
  CHECK(bad == 0);
  std::vector<std::uint32_t> nonempty;
  for (std::uint32_t b = 0; b < t.nbox; ++b)
    if (t.box_count(b)) nonempty.push_back(b);
  CHECK(t.nonempty == nonempty);
  check_neighbor_lists(p.dim, level, t.full, t.half);
}

}  // namespace nf::test
