#pragma once
//! M2M and L2L a thread per box at low orders (docs/design.md §16, "Shifts a thread per box"): the
//! order P a template argument, a box's coefficients in registers, and the shift by s = sigma / 4
//! parent sides done one axis at a time. The factor s^j / j! = prod_a s_a^(j_a) / j_a! separates, so
//! the shift over all j (|n| <= P) is three one-axis shifts, each a sum along one exponent with
//! the other two fixed: C(P+6, 6) multiply-adds a box become about 3 C(P+4, 4) (630 against 924 at
//! 3D P = 6), and no table is read. Both take a thread per child and a block per kShiftThreads
//! consecutive children, whose coefficients are consecutive in memory: they pass through shared
//! memory so that the block reads and writes them in consecutive words. CUDA only; included by
//! shifts_gpu.cu.

#include <cstdint>

#include "farfield/multi_index.h"
#include "farfield/passes_gpu.h"
#include "farfield/shift_families.cuh"
#include "tree/adaptive.h"
#include "tree/morton.h"

namespace nf::farfield::thread_shifts {

// The index of exponents (x, y, z) (z = 0 in 2D) in multi_index.h's order.
template <int D>
NF_HD constexpr int at(int x, int y, int z) {
  return row_start<D>(x + y + z, y + z) + (D == 3 ? z : 0);
}

// The index of exponent k along Axis, (u, w) along the other two in order.
template <int D, int Axis>
NF_HD constexpr int axis_index(int k, int u, int w) {
  return Axis == 0 ? at<D>(k, u, w) : Axis == 1 ? at<D>(u, k, w) : at<D>(u, w, k);
}

// 2^-(|n| + extra) for the term of index n.
template <int D, class T>
NF_HD constexpr T half_power_of(int n, int extra) {
  int d = 0;
  while (terms<D>(d) <= n) ++d;
  T r = T(1);
  for (int i = 0; i < d + extra; ++i) r *= T(0.5);
  return r;
}

// f[a][j] = (sigma_a / 4)^j / j! for the child at `key` (sigma_a = +1 for coordinate bit a set,
// -1 otherwise).
template <int D, class T, int P>
__device__ __forceinline__ void factors(std::uint64_t key, T (&f)[D][P + 1]) {
  std::uint32_t c[D];
  morton_coords<D>(key, c);
#pragma unroll
  for (int a = 0; a < D; ++a) {
    const T s = (c[a] & 1) ? T(0.25) : T(-0.25);
    f[a][0] = T(1);
#pragma unroll
    for (int j = 1; j <= P; ++j) f[a][j] = f[a][j - 1] * s * T(1.0 / j);
  }
}

// v_n <- sum_{j >= 0} v_(n + j e_axis) f[axis][j] over |n + j e_axis| <= P (Up = false: the locals'
// shift, in place in ascending order of n_axis), or v_n <- sum_{j <= n_axis} v_(n - j e_axis)
// f[axis][j] (Up = true: the moments', in descending order).
template <int D, class T, int P, bool Up, int Axis>
__device__ __forceinline__ void shift_axis(T (&v)[terms<D>(P)], const T (&f)[P + 1]) {
#pragma unroll
  for (int u = 0; u <= P; ++u)  // the other two exponents (u, w): (y, z) for x, (x, z) for y, (x, y) for z
#pragma unroll
    for (int w = 0; w <= (D == 3 ? P - u : 0); ++w) {
      const int m = P - u - w;  // the exponent along the axis runs 0 .. m
#pragma unroll
      for (int i = 0; i <= m; ++i) {
        const int e = Up ? m - i : i;
        T sum = v[axis_index<D, Axis>(e, u, w)];
#pragma unroll
        for (int j = 1; j <= (Up ? e : m - e); ++j)
          sum = fma(v[axis_index<D, Axis>(Up ? e - j : e + j, u, w)], f[j], sum);
        v[axis_index<D, Axis>(e, u, w)] = sum;
      }
    }
}

// Every axis in turn.
template <int D, class T, int P, bool Up>
__device__ __forceinline__ void shift(T (&v)[terms<D>(P)], const T (&f)[D][P + 1]) {
  shift_axis<D, T, P, Up, 0>(v, f[0]);
  shift_axis<D, T, P, Up, 1>(v, f[1]);
  if constexpr (D == 3) shift_axis<D, T, P, Up, 2>(v, f[2]);
}

// L2L, a thread per box of `fine`: its parent's locals shifted to it, times 2^-(|k|+1) (box units).
// A block's children are consecutive, and so are their locals: the block stages its results in
// shared memory (rows of an odd stride, free of bank conflicts) and adds them into Lf in
// consecutive words (a thread writing its own row would touch 32 lines a warp store).
constexpr int kShiftThreads = 128;
template <int D, class T, int P>
__global__ void __launch_bounds__(kShiftThreads) l2l_kernel(DeviceLevel coarse, DeviceLevel fine,
                                                            const T* __restrict__ Lc, T* __restrict__ Lf) {
  constexpr int N = terms<D>(P), S = N | 1;
  __shared__ T staged[kShiftThreads * S];
  const std::uint32_t first = blockIdx.x * kShiftThreads, ch = first + threadIdx.x;
  T v[N];
#pragma unroll
  for (int n = 0; n < N; ++n) v[n] = T(0);
  const std::uint32_t q = ch < fine.boxes ? fine.parent[ch] : 0;
  // An adaptive tree: only split boxes pass locals down (their children are the targets); the
  // others' children add zeros.
  if (ch < fine.boxes && !(coarse.flags && !(coarse.flags[q] & adaptive::kSplit))) {
#pragma unroll
    for (int n = 0; n < N; ++n) v[n] = Lc[std::size_t(q) * N + n];
    T f[D][P + 1];
    factors<D, T, P>(fine.key[ch], f);
    shift<D, T, P, false>(v, f);
  }
#pragma unroll
  for (int n = 0; n < N; ++n) staged[threadIdx.x * S + n] = v[n] * half_power_of<D, T>(n, 1);
  __syncthreads();
  const std::uint32_t count = min(std::uint32_t(kShiftThreads), fine.boxes - first);
  T* out = Lf + std::size_t(first) * N;
  for (std::uint32_t i = threadIdx.x; i < count * N; i += kShiftThreads) out[i] += staged[(i / N) * S + i % N];
}

// M2M, a thread per box of `fine`, a block per kShiftThreads consecutive children: their moments
// come into shared memory in consecutive words, each thread shifts its child's (times 2^-|n|, box
// units) in registers and puts them back, and the block sums each parent's children that it holds
// and adds them into Mc, a parent's terms in consecutive words. A parent whose children straddle
// two blocks gets both blocks' parts by atomic adds (at most the first and the last of a block).
template <int D, class T, int P>
__global__ void __launch_bounds__(kShiftThreads) m2m_kernel(DeviceLevel fine, DeviceLevel coarse,
                                                            const T* __restrict__ Mf, T* __restrict__ Mc) {
  constexpr int N = terms<D>(P), S = N | 1;
  __shared__ T staged[kShiftThreads * S];
  const std::uint32_t first = blockIdx.x * kShiftThreads;
  const std::uint32_t count = min(std::uint32_t(kShiftThreads), fine.boxes - first);
  for (std::uint32_t i = threadIdx.x; i < count * N; i += kShiftThreads)
    staged[(i / N) * S + i % N] = Mf[std::size_t(first) * N + i];
  __syncthreads();
  if (threadIdx.x < count) {
    T v[N];
#pragma unroll
    for (int n = 0; n < N; ++n) v[n] = staged[threadIdx.x * S + n] * half_power_of<D, T>(n, 0);
    T f[D][P + 1];
    factors<D, T, P>(fine.key[first + threadIdx.x], f);
    shift<D, T, P, true>(v, f);
#pragma unroll
    for (int n = 0; n < N; ++n) staged[threadIdx.x * S + n] = v[n];
  }
  __syncthreads();
  __shared__ std::uint32_t heads[kShiftThreads], families;
  add_families(fine, coarse, first, count, staged, S, N, Mc, heads, families);
}

}  // namespace nf::farfield::thread_shifts
