#pragma once
//! The neighbors of one box, in ascending Z-order: the same routine fills the CPU and GPU lists.

#include <cstdint>

#include "common/hd.h"
#include "quadtree/morton.h"

namespace nf {

//! Most neighbors a box can have: 8 in 2D, 26 in 3D.
NF_HD constexpr int max_neighbors(int dim) { return dim == 2 ? 8 : 26; }

//! Writes the Morton indices of the boxes adjacent to `box` (coordinates within 1 along every
//! axis, the box itself excluded, no periodic wrap) to out[], ascending; returns how many.
//! `only_larger` keeps just those with a larger index (the half list of Newton-3 kernels).
template <int D>
NF_HD inline int box_neighbors(std::uint32_t box, int level, bool only_larger, std::uint32_t* out) {
  std::uint32_t c[D];
  morton_decode<D>(box, c);
  const std::int32_t n = std::int32_t(1) << level;
  int count = 0;
  const int zlo = D == 3 ? -1 : 0, zhi = D == 3 ? 1 : 0;
  for (int dz = zlo; dz <= zhi; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if (dx == 0 && dy == 0 && dz == 0) continue;
        const std::int32_t off[3] = {dx, dy, dz};
        std::uint32_t nc[D];
        bool inside = true;
        for (int a = 0; a < D; ++a) {
          const std::int32_t v = std::int32_t(c[a]) + off[a];
          inside = inside && v >= 0 && v < n;
          nc[a] = static_cast<std::uint32_t>(v);
        }
        if (!inside) continue;
        const std::uint32_t id = morton_encode<D>(nc);
        if (only_larger && id <= box) continue;
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

}  // namespace nf
