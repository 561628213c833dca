#pragma once
//! The near-field mask of the all-pairs kernels: i and j interact iff their box coordinates differ
//! by at most 1 along every axis. Coordinates come from the positions by the box rule, never from
//! the tree's arrays, so a masked all-pairs run is an independent check of the tree.

#include <cstdint>
#include <vector>

#include "tree/domain.h"
#include "core/hd.h"
#include "core/particles.h"

namespace nf {

//! Integer box coordinates of one particle (z = 0 in 2D), 16 bytes for one vector load. Unsigned
//! 32-bit: level 31 has coordinates up to 2^31 - 1.
struct alignas(16) Cell {
  std::uint32_t x, y, z, pad;
};

//! True when the two cells are the same or adjacent (no periodic wrap).
template <int D>
NF_HD NF_INLINE bool near_cells(const Cell& a, const Cell& b) {
  // |d| <= 1  <=>  d + 1 (mod 2^32) <= 2: one add and one compare per axis, in unsigned arithmetic
  // (wraps, never overflows) and exact for coordinates below 2^31.
  bool near = a.x - b.x + 1u <= 2u && a.y - b.y + 1u <= 2u;
  if constexpr (D == 3) near = near && a.z - b.z + 1u <= 2u;
  return near;
}

//! Cells of every particle at `level` over `domain`, in input order.
std::vector<Cell> cells_from_positions(const Particles& p, int level, const Domain& domain);

}  // namespace nf
