#pragma once
//! The near-field mask of the all-pairs kernels: i and j interact iff their box coordinates differ
//! by at most 1 along every axis. Coordinates come from the positions by the box rule, never from
//! the tree's arrays, so a masked all-pairs run is an independent check of the tree.

#include <cstdint>
#include <vector>

#include "common/domain.h"
#include "common/hd.h"
#include "common/particles.h"

namespace nf {

//! Integer box coordinates of one particle (z = 0 in 2D), 16 bytes for one vector load.
struct alignas(16) Cell {
  std::int32_t x, y, z, pad;
};

//! True when the two cells are the same or adjacent (no periodic wrap).
template <int D>
NF_HD NF_INLINE bool near_cells(const Cell& a, const Cell& b) {
  // |d| <= 1  <=>  (unsigned)(d + 1) <= 2: one add and one compare per axis.
  bool near = static_cast<std::uint32_t>(a.x - b.x + 1) <= 2u && static_cast<std::uint32_t>(a.y - b.y + 1) <= 2u;
  if constexpr (D == 3) near = near && static_cast<std::uint32_t>(a.z - b.z + 1) <= 2u;
  return near;
}

//! Cells of every particle at `level` over `domain`, in input order.
std::vector<Cell> cells_from_positions(const Particles& p, int level, const Domain& domain);

}  // namespace nf
