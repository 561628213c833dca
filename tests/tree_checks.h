#pragma once
// Checks of a tree against its particles, shared by the CPU and GPU builder tests: the compact
// layout against a brute-force reference written here (boxes from the positions, keys bit by
// bit, neighbors by comparing coordinates), the dense layout by its invariants and against the
// compact one.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "helpers.h"
#include "tree/tree.h"

namespace nf::test {

//! Box coordinate by the rule of docs/design.md §2, written out again: floor((x - x0) / side *
//! 2^K) in float64, clamped to [0, 2^K - 1].
inline std::uint32_t reference_coordinate(double x, double x0, double side, int level) {
  const double n = std::ldexp(1.0, level);
  const double c = std::floor((x - x0) / side * n);
  if (!(c > 0.0)) return 0;
  return c >= n ? static_cast<std::uint32_t>(n - 1.0) : static_cast<std::uint32_t>(c);
}

//! Morton key bit by bit: bit d*k + a holds bit k of coordinate a.
inline std::uint64_t reference_key(int dim, const std::array<std::uint32_t, 3>& c, int level) {
  std::uint64_t key = 0;
  for (int k = 0; k < level; ++k)
    for (int a = 0; a < dim; ++a) key |= std::uint64_t((c[a] >> k) & 1u) << (dim * k + a);
  return key;
}

//! The compact tree, computed the slow and obvious way.
struct ReferenceTree {
  std::vector<std::uint64_t> key;              //!< non-empty boxes, ascending
  std::vector<std::array<std::uint32_t, 3>> coord;
  std::vector<std::uint32_t> first, order, slot;
  std::vector<std::vector<std::uint32_t>> near;  //!< adjacent non-empty boxes, ascending
};

inline ReferenceTree reference_tree(const Particles& p, int level, const Domain& d) {
  std::map<std::uint64_t, std::vector<std::uint32_t>> boxes;  // key -> input rows, ascending
  std::map<std::uint64_t, std::array<std::uint32_t, 3>> coords;
  for (std::size_t i = 0; i < p.size(); ++i) {
    std::array<std::uint32_t, 3> c = {0, 0, 0};
    for (int a = 0; a < p.dim; ++a) c[a] = reference_coordinate(p.coord(i, a), d.origin[a], d.side, level);
    const std::uint64_t k = reference_key(p.dim, c, level);
    boxes[k].push_back(static_cast<std::uint32_t>(i));
    coords[k] = c;
  }
  ReferenceTree r;
  r.first.push_back(0);
  for (const auto& [k, rows] : boxes) {
    for (std::uint32_t i : rows) {
      r.order.push_back(i);
      r.slot.push_back(static_cast<std::uint32_t>(r.key.size()));
    }
    r.key.push_back(k);
    r.coord.push_back(coords[k]);
    r.first.push_back(static_cast<std::uint32_t>(r.order.size()));
  }
  if (r.key.empty()) r.first = {0};
  r.near.resize(r.key.size());
  for (std::size_t a = 0; a < r.key.size(); ++a)
    for (std::size_t b = 0; b < r.key.size(); ++b) {
      bool adjacent = a != b;
      for (int x = 0; x < 3; ++x)
        adjacent = adjacent && std::llabs(std::int64_t(r.coord[a][x]) - std::int64_t(r.coord[b][x])) <= 1;
      if (adjacent) r.near[a].push_back(static_cast<std::uint32_t>(b));
    }
  return r;
}

//! The lists of `ref` (or only their larger-id part) as CSR.
inline NeighborLists reference_lists(const ReferenceTree& ref, bool half) {
  NeighborLists l;
  l.offset.push_back(0);
  for (std::size_t a = 0; a < ref.near.size(); ++a) {
    for (std::uint32_t b : ref.near[a])
      if (!half || b > a) l.ids.push_back(b);
    l.offset.push_back(static_cast<std::uint32_t>(l.ids.size()));
  }
  return l;
}

//! The compact layout equals the brute-force reference, array for array.
inline void check_compact(const Particles& p, const Tree& t, int level, const Domain& d) {
  REQUIRE(t.level == level);
  REQUIRE(t.dim == p.dim);
  CHECK(t.nbox == std::uint64_t(1) << (p.dim * level));
  const ReferenceTree ref = reference_tree(p, level, d);
  CHECK(t.box_key == ref.key);
  CHECK(t.box_first == ref.first);
  CHECK(t.order == ref.order);  // stable: rows of one box in input order
  CHECK(t.particle_compact_box == ref.slot);
  const NeighborLists full = reference_lists(ref, false), half = reference_lists(ref, true);
  CHECK(t.near_full.offset == full.offset);
  CHECK(t.near_full.ids == full.ids);
  CHECK(t.near_half.offset == half.offset);
  CHECK(t.near_half.ids == half.ids);
  CHECK(t.near_half.links() * 2 == t.near_full.links());
  std::uint32_t largest = 0;
  for (std::size_t k = 0; k + 1 < ref.first.size(); ++k) largest = std::max(largest, ref.first[k + 1] - ref.first[k]);
  CHECK(t.max_box_count() == largest);
}

//! Dense lists sorted, in range, symmetric, no self links; half = the larger-index part, so each
//! pair appears once. Linear in the number of links (binary searches in the sorted lists).
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

//! The dense layout: boxIdx, the sorted keys and the non-empty list against the compact layout
//! (itself checked against the reference), and the dense lists' invariants and count B.
inline void check_dense(const Tree& t) {
  REQUIRE(t.dense);
  const std::size_t n = t.particles();
  REQUIRE(t.box_start.size() == t.nbox + 1);
  REQUIRE(t.particle_box.size() == n);
  CHECK(t.box_start.front() == 0u);
  CHECK(t.box_start.back() == n);
  CHECK(std::is_sorted(t.box_start.begin(), t.box_start.end()));
  std::size_t bad = 0;
  for (std::size_t s = 0; s < n; ++s) {
    const std::uint64_t key = t.box_key[t.particle_compact_box[s]];
    bad += t.particle_box[s] != key;
    bad += !(t.box_start[key] <= s && s < t.box_start[key + 1]);
  }
  CHECK(bad == 0);
  std::vector<std::uint32_t> nonempty;
  for (std::uint32_t b = 0; b < t.nbox; ++b)
    if (t.box_count(b)) nonempty.push_back(b);
  CHECK(t.nonempty == nonempty);
  CHECK(std::equal(t.nonempty.begin(), t.nonempty.end(), t.box_key.begin(), t.box_key.end()));
  CHECK(t.full.links() == full_link_count(t.dim, t.level));
  check_neighbor_lists(t.dim, t.level, t.full, t.half);
}

//! Both layouts of a tree built with dense = true.
inline void check_tree(const Particles& p, const Tree& t, int level, const Domain& d) {
  check_compact(p, t, level, d);
  check_dense(t);
}

}  // namespace nf::test
