#pragma once
//! The tiles of P2M's block kernel (farfield/p2m_tiles.cuh; docs/design.md §16, "P2M and L2P"):
//! the shape of a block's work at order P and the order of its tiles, on the host and the device
//! (tests/test_p2m_tiles.cc checks them on the CPU).
//!
//! A box's moments are a matrix product: M_(a,j,l) = sum_i X_i,a C_i,(j,l), with X_i,a = m_i x_i^a /
//! a! and C_i,(j,l) = y_i^j / j! z_i^l / l! (2D: y_i^j / j!), a + j + l <= P. A *column* is one (j,
//! l) pair, in the order of tail degree s = j + l and then l. A *tile* is 4 x exponents a0 .. a0 + 3
//! (a0 = 4k) times 4 columns c0 .. c0 + 3 (c0 = 4q): the tiles that hold a term with a + s <= P.

#include <cstddef>

#include "core/hd.h"
#include "farfield/multi_index.h"

namespace nf::farfield::p2m_tiles {

//! Columns (j, l) with tail degree s = j + l <= top: 3D (top+1)(top+2)/2, 2D top+1.
template <int D>
NF_HD constexpr int columns(int top) {
  return top < 0 ? 0 : D == 3 ? (top + 1) * (top + 2) / 2 : top + 1;
}

//! The tail degree of column c.
template <int D>
NF_HD constexpr int column_degree(int c) {
  int s = 0;
  while (columns<D>(s) <= c) ++s;
  return s;
}

template <int D, class T, int P>
struct Shape {
  static constexpr int kRowX = (P + 4) & ~3;                // m x^a / a!, a = 0 .. P, zero padded
  static constexpr int kCols = columns<D>(P);
  static constexpr int kRow = kRowX + ((kCols + 3) & ~3);   // then the columns, zero padded
  static constexpr int kVector = 16 / int(sizeof(T));       // values in 16 bytes
  // Rows an odd number of 16-byte units apart: a quarter warp's 16-byte stores and loads of
  // neighbouring rows fall in different banks.
  static constexpr int kStride = (kRow / kVector) % 2 ? kRow : kRow + kVector;
  static constexpr int kTerms = terms<D>(P);
  // Tiles by x chunk k (a0 = 4k): the column quads whose first column has tail degree <= P - 4k.
  NF_HD static constexpr int chunk_tiles(int k) { return (columns<D>(P - 4 * k) + 3) / 4; }
  static constexpr int tiles() {
    int n = 0;
    for (int k = 0; 4 * k <= P; ++k) n += chunk_tiles(k);
    return n;
  }
  static constexpr int kTiles = tiles();
  // Particle groups a warp: as many as the tiles fit in once (one from 32 tiles on). Groups that
  // kept more lanes busy with up to 4 tiles a lane (3D float p = 8: 7 groups, 93% of the lanes
  // against 53%) lost or tied on every input timed, boxes of 64 to 512 particles and adaptive
  // leaves (docs/design.md §16, "P2M and L2P").
  static constexpr int kGroups = kTiles >= 32 ? 1 : 32 / kTiles;
  static constexpr int kItems = (kGroups * kTiles + 31) / 32;         // tiles a lane
  static constexpr int kWarps = 2;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kSlots = kWarps * kGroups;                      // partial sums a term
  static constexpr std::size_t shared_bytes() {
    const int rows = kThreads * kStride, part = kSlots * kTerms;
    return std::size_t(rows > part ? rows : part) * sizeof(T);
  }
};

//! Tile t (in Shape's order): x exponents a0 .. a0 + 3 of columns c0 .. c0 + 3.
template <int D, class T, int P>
NF_HD NF_INLINE void tile_at(int t, int& a0, int& c0) {
  using S = Shape<D, T, P>;
  a0 = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int k = 0; 4 * k < P; ++k)
    if (t >= S::chunk_tiles(k)) t -= S::chunk_tiles(k), a0 += 4;
    else break;
  c0 = 4 * t;
}

}  // namespace nf::farfield::p2m_tiles
