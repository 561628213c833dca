#pragma once
//! The neighbors of one box, in ascending Z-order: these routines fill the CPU lists, dense (over
//! all boxes, the paper's layout) and compact (over the non-empty boxes only); the GPU lists
//! (tree_gpu_lists.cuh) take a lane per neighbor and share lower_bound_near.

#include <cstdint>

#include "core/hd.h"
#include "tree/morton.h"

namespace nf {

//! Most neighbors a box can have: 8 in 2D, 26 in 3D.
NF_HD constexpr int max_neighbors(int dim) { return dim == 2 ? 8 : 26; }

//! Writes the Morton keys of the boxes adjacent to the box `key` at `level` (coordinates within 1
//! along every axis, the box itself excluded, no periodic wrap) to out[], ascending; returns how
//! many. Coordinates are 64-bit here, so the last box of level 31 has no neighbor past the edge.
template <int D>
NF_HD inline int box_neighbor_keys(std::uint64_t key, int level, std::uint64_t* out) {
  std::uint32_t c[D];
  morton_coords<D>(key, c);
  const std::int64_t n = std::int64_t(1) << level;
  int count = 0;
  const int zlo = D == 3 ? -1 : 0, zhi = D == 3 ? 1 : 0;
  for (int dz = zlo; dz <= zhi; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if (dx == 0 && dy == 0 && dz == 0) continue;
        const int off[3] = {dx, dy, dz};
        std::uint32_t nc[D];
        bool inside = true;
        for (int a = 0; a < D; ++a) {
          const std::int64_t v = std::int64_t(c[a]) + off[a];
          inside = inside && v >= 0 && v < n;
          nc[a] = static_cast<std::uint32_t>(v);
        }
        if (!inside) continue;
        const std::uint64_t id = morton_key<D>(nc);
        // Insertion keeps out[] ascending (at most 26 entries).
        int k = count++;
        while (k > 0 && out[k - 1] > id) {
          out[k] = out[k - 1];
          --k;
        }
        out[k] = id;
      }
  return count;
}

//! Dense layout: the 32-bit indices of the boxes adjacent to `box`, ascending; `only_larger`
//! keeps just those with a larger index (the half list of Newton-3 kernels).
template <int D>
NF_HD inline int box_neighbors(std::uint32_t box, int level, bool only_larger, std::uint32_t* out) {
  std::uint64_t keys[26];
  const int n = box_neighbor_keys<D>(box, level, keys);
  int count = 0;
  for (int k = 0; k < n; ++k)
    if (!only_larger || keys[k] > box) out[count++] = static_cast<std::uint32_t>(keys[k]);
  return count;
}

//! First index in [0, m) whose key is >= `key` in the ascending keys[], m if none. The search
//! gallops outward from `hint` (any index in [0, m]): a neighbor's key usually lies a few places
//! from its box's, so the search costs O(log distance) and touches memory near the hint.
NF_HD inline std::uint32_t lower_bound_near(const std::uint64_t* keys, std::uint32_t m, std::uint32_t hint,
                                            std::uint64_t key) {
  std::uint32_t lo, hi;  // the answer lies in [lo, hi]
  if (hint < m && keys[hint] < key) {
    lo = hint + 1;
    hi = m;
    for (std::uint64_t step = 1;; step *= 2) {
      const std::uint64_t probe = std::uint64_t(hint) + step;
      if (probe >= m) break;
      if (keys[probe] >= key) {
        hi = static_cast<std::uint32_t>(probe);
        break;
      }
      lo = static_cast<std::uint32_t>(probe) + 1;
    }
  } else {
    lo = 0;
    hi = hint;
    for (std::uint64_t step = 1; step <= hint; step *= 2) {
      const std::uint32_t probe = static_cast<std::uint32_t>(hint - step);
      if (keys[probe] < key) {
        lo = probe + 1;
        break;
      }
      hi = probe;
    }
  }
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

//! Compact layout: the compact ids of the non-empty boxes adjacent to compact box `b`, ascending
//! (box_key[0..m) are the non-empty boxes' keys, ascending, so ids and keys sort alike); returns
//! how many. `only_larger` keeps the ids above b (the half list).
template <int D>
NF_HD inline int compact_neighbors(const std::uint64_t* box_key, std::uint32_t m, std::uint32_t b, int level,
                                   bool only_larger, std::uint32_t* out) {
  std::uint64_t keys[26];
  const int n = box_neighbor_keys<D>(box_key[b], level, keys);
  int count = 0;
  for (int k = 0; k < n; ++k) {
    if (only_larger && keys[k] < box_key[b]) continue;
    const std::uint32_t at = lower_bound_near(box_key, m, b, keys[k]);
    if (at < m && box_key[at] == keys[k]) out[count++] = at;
  }
  return count;
}

}  // namespace nf
