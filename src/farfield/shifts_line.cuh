#pragma once
//! M2M and L2L a line at a time (docs/design.md §16, "Shifts by lines"), in 3D from order 10 and at
//! 8 and 9 on sparse levels, where the thread per child (shifts_thread.cuh) does not run (a child's
//! coefficients past one thread's registers, or too few children to fill the GPU): shifts_gpu.cu's
//! shift_kernel_at. A block takes B consecutive children (B rows of its shared memory, a row's
//! stride odd), and the shift by s = sigma / 4 parent sides is done one axis at a time, as in
//! shifts_thread.cuh, but a *line* at a time: the terms along one axis with the other two exponents
//! fixed (p + 1 - u - w of them) sit in one lane's registers while it sums the line's triangle of
//! products, every factor a constant. Lanes of a warp take the same line of different children
//! (B = 32), so a warp runs one line length and reads one word per child row: no divergence and no
//! bank conflicts. A line's length is a template argument reached by a switch (one copy of each
//! length's code for the three axes); the order is not, so one kernel serves every order. CUDA
//! only; included by shifts_gpu.cu.

#include <cstdint>

#include "farfield/multi_index.h"
#include "farfield/passes_gpu.h"
#include "farfield/shift_families.cuh"
#include "farfield/shift_lines.h"
#include "tree/adaptive.h"
#include "tree/morton.h"

namespace nf::farfield::line_shifts {

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;

//! One line of M + 1 terms along `axis` in `row`, shifted in place by the factors sign^j 4^-j / j!:
//! Up (M2M) v_e <- sum_{j <= e} v_(e - j) f_j; else (L2L) v_e <- sum_{j <= M - e} v_(e + j) f_j.
//! Input term e is first multiplied by in * in_step^e, output term e by out * out_step^e: M2M's
//! first axis multiplies its input by 2^-|n| and L2L's last its output by 2^-(|k| + 1), box units
//! (expansion.h); elsewhere they are 1.
template <int D, class T, bool Up, int M>
__device__ __forceinline__ void shift_line(T* row, int axis, int u, int w, T sign, T in, T in_step, T out,
                                           T out_step) {
  int idx[M + 1];
  line_indices<D, M>(axis, u, w, idx);
  T c[M + 1];  // 4^-j / j! (constants once unrolled)
  c[0] = T(1);
#pragma unroll
  for (int j = 1; j <= M; ++j) c[j] = c[j - 1] * (T(0.25) / T(j));
  T v[M + 1];
#pragma unroll
  for (int e = 0; e <= M; ++e) v[e] = row[idx[e]] * in, in *= in_step;
#pragma unroll
  for (int e = 0; e <= M; ++e) {
    T even = T(0), odd = T(0);  // the products of even and odd j: the sign multiplies the odd ones
#pragma unroll
    for (int j = 0; j <= (Up ? e : M - e); ++j) {
      const T x = v[Up ? e - j : e + j];
      if (j % 2 == 0)
        even = fma(x, c[j], even);
      else
        odd = fma(x, c[j], odd);
    }
    row[idx[e]] = fma(sign, odd, even) * out, out *= out_step;
  }
}

//! A lane's work: its child's row (lane % B) and its slot among the block's lanes of that child.
struct Lane {
  int child, slot, slots;
};

__device__ __forceinline__ Lane lane_of(int B) {
  const int lane = int(threadIdx.x % 32), per_warp = 32 / B;
  return {lane % B, int(threadIdx.x / 32) * per_warp + lane / B, kWarps * per_warp};
}

//! Every line along `axis` of the lane's child, at order p: one switch on the line's length (one
//! copy of each length's code for all three axes: the code of every length inlined for each axis
//! had taken 219 KB at 3D float, past the instruction caches).
template <int D, class T, bool Up>
__device__ __noinline__ void axis_pass(T* row, int axis, int p, Lane me, T sign) {
  const bool scaled = Up ? axis == 0 : axis == D - 1;
  for (LineCursor<D> line(me.slot); line.l < lines<D>(p); line.advance(me.slots)) {
    const int u = line.u, w = line.w;
    const T factor = scaled ? T(1) / T(1u << (u + w + (Up ? 0 : 1))) : T(1);
    const T in = Up ? factor : T(1), in_step = Up && scaled ? T(0.5) : T(1);
    const T out = Up ? T(1) : factor, out_step = !Up && scaled ? T(0.5) : T(1);
    switch (p - u - w) {
#define NF_LINE_CASE(M) \
  case M:               \
    shift_line<D, T, Up, M>(row, axis, u, w, sign, in, in_step, out, out_step); \
    break;
      NF_LINE_CASE(0) NF_LINE_CASE(1) NF_LINE_CASE(2) NF_LINE_CASE(3) NF_LINE_CASE(4) NF_LINE_CASE(5)
      NF_LINE_CASE(6) NF_LINE_CASE(7) NF_LINE_CASE(8) NF_LINE_CASE(9) NF_LINE_CASE(10) NF_LINE_CASE(11)
      NF_LINE_CASE(12) NF_LINE_CASE(13) NF_LINE_CASE(14) NF_LINE_CASE(15) NF_LINE_CASE(16)
      NF_LINE_CASE(17) NF_LINE_CASE(18) NF_LINE_CASE(19) NF_LINE_CASE(20)
#undef NF_LINE_CASE
      default:
        break;
    }
  }
}
static_assert(kLongest == 20, "axis_pass has a case for each line length 0 .. kLongest");

//! The whole shift of the lane's child's row, axis by axis (the signs: +1 where the child's
//! coordinate bit is set, -1 where not).
template <int D, class T, bool Up>
__device__ __forceinline__ void shift_rows(T* rows, int S, int count, int p, int B, const std::uint64_t* keys) {
  const Lane me = lane_of(B);
  T sign[D];
  std::uint32_t c[D];
  morton_coords<D>(me.child < count ? keys[me.child] : 0, c);
#pragma unroll
  for (int a = 0; a < D; ++a) sign[a] = (c[a] & 1) ? T(1) : T(-1);
  T* row = rows + me.child * S;
  const bool mine = me.child < count;
  if (mine) axis_pass<D, T, Up>(row, 0, p, me, sign[0]);
  __syncthreads();
  if (mine) axis_pass<D, T, Up>(row, 1, p, me, sign[1]);
  if constexpr (D == 3) {
    __syncthreads();
    if (mine) axis_pass<D, T, Up>(row, 2, p, me, sign[2]);
  }
  __syncthreads();
}

//! Shared memory of a block: B rows of terms | 1 coefficients.
template <class T>
std::size_t row_bytes(int terms) {
  return std::size_t(children_per_block<T>(terms)) * std::size_t(terms | 1) * sizeof(T);
}

//! M2M: B consecutive children of `fine` a block; their moments (times 2^-|n|) shifted to their
//! parents' centres and each parent's children that the block holds summed into its moments
//! (farfield::add_families: atomically for a parent whose children straddle blocks).
template <int D, class T>
__global__ void __launch_bounds__(kThreads) m2m_kernel(DeviceLevel fine, DeviceLevel coarse, int p,
                                                       const T* __restrict__ Mf, T* __restrict__ Mc) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* rows = reinterpret_cast<T*>(smem);
  __shared__ std::uint32_t heads[32], families;
  const int N = terms<D>(p), S = N | 1, B = children_per_block<T>(N);
  const std::uint32_t first = blockIdx.x * std::uint32_t(B);
  const int count = int(min(std::uint32_t(B), fine.boxes - first));
  for (int c = threadIdx.x / 32; c < count; c += kWarps)
    for (int n = threadIdx.x % 32; n < N; n += 32) rows[c * S + n] = Mf[std::size_t(first + c) * N + n];
  __syncthreads();
  shift_rows<D, T, true>(rows, S, count, p, B, fine.key + first);
  add_families(fine, coarse, first, std::uint32_t(count), rows, S, N, Mc, heads, families);
}

//! L2L: B consecutive children of `fine` a block; each row takes its parent's locals (zeros where
//! an adaptive tree's parent is not split: its children are no targets), shifted to the child's
//! centre (times 2^-(|k| + 1)) and added into the child's locals in consecutive words.
template <int D, class T>
__global__ void __launch_bounds__(kThreads) l2l_kernel(DeviceLevel coarse, DeviceLevel fine, int p,
                                                       const T* __restrict__ Lc, T* __restrict__ Lf) {
  extern __shared__ __align__(16) unsigned char smem[];
  T* rows = reinterpret_cast<T*>(smem);
  const int N = terms<D>(p), S = N | 1, B = children_per_block<T>(N);
  const std::uint32_t first = blockIdx.x * std::uint32_t(B);
  const int count = int(min(std::uint32_t(B), fine.boxes - first));
  for (int c = threadIdx.x / 32; c < count; c += kWarps) {
    const std::uint32_t q = fine.parent[first + c];
    const bool passes = !(coarse.flags && !(coarse.flags[q] & adaptive::kSplit));
    for (int n = threadIdx.x % 32; n < N; n += 32) rows[c * S + n] = passes ? Lc[std::size_t(q) * N + n] : T(0);
  }
  __syncthreads();
  shift_rows<D, T, false>(rows, S, count, p, B, fine.key + first);
  for (int c = threadIdx.x / 32; c < count; c += kWarps)
    for (int n = threadIdx.x % 32; n < N; n += 32) Lf[std::size_t(first + c) * N + n] += rows[c * S + n];
}

}  // namespace nf::farfield::line_shifts
