#pragma once
//! P2M of a box by a block, the order a template argument (docs/design.md §16, "P2M and L2P"), in
//! the tiles of farfield/p2m_tiles.h. Each warp takes 32 particles at a time:
//! every lane writes its particle's row of X (zeros to a multiple of 4) and C (the same) to shared
//! memory, then every lane sums its tiles of 4 x exponents times 4 columns over the chunk, two
//! 16-byte loads for 16 multiply-adds in float (four in double) (the tiles that hold a term with a + s <= P; terms past P are
//! summed and dropped). Where a warp has fewer tiles than lanes, its lanes form groups that take
//! every G-th particle. The partial sums stay in registers until the box is done, then meet in
//! shared memory and are added in a fixed order.

#include <cstddef>
#include <cstdint>

#include "core/body.h"
#include "farfield/p2m_tiles.h"
#include "farfield/vector4.cuh"

namespace nf::farfield::p2m_tiles {

//! A particle's row at `row`: r in box units.
template <int D, class T, int P>
__device__ __forceinline__ void write_row(T* row, T m, const T (&r)[D]) {
  using S = Shape<D, T, P>;
  T f[D][P + 1];  // r_a^j / j!
#pragma unroll
  for (int a = 0; a < D; ++a) {
    f[a][0] = T(1);
#pragma unroll
    for (int j = 1; j <= P; ++j) f[a][j] = f[a][j - 1] * r[a] * T(1.0 / j);
  }
  T v[4];
#pragma unroll
  for (int q = 0; q < S::kRowX; q += 4) {
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = q + u <= P ? m * f[0][q + u] : T(0);
    store4(row + q, v);
  }
  int c = 0;
#pragma unroll
  for (int s = 0; s <= P; ++s)
#pragma unroll
    for (int l = 0; l <= (D == 3 ? s : 0); ++l, ++c) {
      v[c & 3] = D == 3 ? f[1][s - l] * f[D - 1][l] : f[1][s];
      if ((c & 3) == 3) store4(row + S::kRowX + c - 3, v);
    }
  if (c & 3) {
#pragma unroll
    for (int u = c & 3; u < 4; ++u) v[u] = T(0);
    store4(row + S::kRowX + (c & ~3), v);
  }
}

//! M[b] = the moments of box b's particles first .. last (centre c, 1 / side `inv_side`), by the block;
//! `smem` holds Shape::shared_bytes(). Every thread calls it; it ends with a barrier.
template <int D, class T, int P>
__device__ __forceinline__ void box(const Body<T>* __restrict__ sorted, std::uint32_t first, std::uint32_t last,
                                    const double (&c)[D], double inv_side, T* __restrict__ M, T* smem) {
  using S = Shape<D, T, P>;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  T* rows = smem + warp * 32 * S::kStride;
  int a0[S::kItems], c0[S::kItems], group[S::kItems];
  T acc[S::kItems][4][4];
#pragma unroll
  for (int k = 0; k < S::kItems; ++k) {
    const int w = lane + 32 * k;
    group[k] = w < S::kGroups * S::kTiles ? w / S::kTiles : -1;
    tile_at<D, T, P>(w % S::kTiles, a0[k], c0[k]);
#pragma unroll
    for (int u = 0; u < 4; ++u)
#pragma unroll
      for (int v = 0; v < 4; ++v) acc[k][u][v] = T(0);
  }
  for (std::uint32_t base = first + 32 * warp; base < last; base += S::kThreads) {
    const int count = int(min(32u, last - base));
    if (lane < count) {
      const Body<T> body = sorted[base + lane];
      const double x[3] = {double(body.x), double(body.y), double(body.z)};
      T r[D];
#pragma unroll
      for (int a = 0; a < D; ++a) r[a] = T((x[a] - c[a]) * inv_side);
      write_row<D, T, P>(rows + lane * S::kStride, body.m, r);
    }
    __syncwarp();
#pragma unroll
    for (int k = 0; k < S::kItems; ++k) {
      if (group[k] < 0) continue;
      const T* row = rows + group[k] * S::kStride;
      for (int i = group[k]; i < count; i += S::kGroups, row += S::kGroups * S::kStride) {
        T xv[4], cv[4];
        load4(row + a0[k], xv);
        load4(row + S::kRowX + c0[k], cv);
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
          for (int v = 0; v < 4; ++v) acc[k][u][v] += xv[u] * cv[v];
      }
    }
    __syncwarp();
  }
  __syncthreads();  // every warp is done with its rows: the partial sums take their place
#pragma unroll
  for (int k = 0; k < S::kItems; ++k) {
    if (group[k] < 0) continue;
    T* part = smem + (warp * S::kGroups + group[k]) * S::kTerms;
    int s = column_degree<D>(c0[k]);
#pragma unroll
    for (int v = 0; v < 4; ++v) {
      const int col = c0[k] + v;
      if (col >= S::kCols) break;
      if (col >= columns<D>(s)) ++s;  // every tail degree has a column: one step a column at most
      const int l = col - columns<D>(s - 1);
#pragma unroll
      for (int u = 0; u < 4; ++u)
        if (a0[k] + u + s <= P) part[row_start<D>(a0[k] + u + s, s) + l] = acc[k][u][v];
    }
  }
  __syncthreads();
  for (int n = threadIdx.x; n < S::kTerms; n += S::kThreads) {
    T sum = smem[n];
    for (int slot = 1; slot < S::kSlots; ++slot) sum += smem[slot * S::kTerms + n];
    M[n] = sum;
  }
  __syncthreads();  // the next box may write its rows
}

}  // namespace nf::farfield::p2m_tiles
